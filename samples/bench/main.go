// Command bench measures Agentree against the pattern today's Temporal
// agent integrations use (openai_agents, googleadk): one workflow that keeps
// the conversation in its state and passes all of it into every model-call
// activity. Both run on the same Temporal server with the same worker
// settings, the same scripted model and the same tool:
//
//   - long: one user turn of 100 model calls over an 800 KB conversation with
//     5 KB tool outputs. Per system: calls completed, final status, runs, the
//     largest run's history and the history of all runs, wall time. The naive
//     pattern is expected to be terminated by the server's 50 MB history limit.
//   - short: 100 model calls over a 10 KB conversation with 1 KB tool
//     outputs. The time between consecutive model calls' starts (one model
//     call and its tool call), p50 and p95 per system, against the floor: the
//     same interval for a workflow of no-op activities.
//   - resume: a worker process killed (SIGKILL) during the tool call of call 9
//     of a 10-call conversation and of call 90 of a 1,000-call one; the time
//     from its replacement's start to the next model call.
//
// It prints a table, then one name=value line per figure. Run it with
// `make bench`; see README.md for what each figure means and how it is taken.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
)

func main() {
	if spec := os.Getenv(workerEnv); spec != "" {
		if err := runWorkerProcess(spec); err != nil {
			fmt.Fprintln(os.Stderr, "bench worker:", err)
			os.Exit(1)
		}
		return
	}
	cfg, err := parseConfig(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// run runs the scenarios cfg names and prints the report to out; progress,
// and traces when asked for, go to log.
func run(ctx context.Context, cfg config, out, log io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	if cfg.CPUProfile != "" {
		f, err := os.Create(cfg.CPUProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	b, closeBench, err := openBench(ctx, cfg)
	if err != nil {
		return err
	}
	defer closeBench()
	var trace io.Writer
	if cfg.Trace {
		trace = log
	}
	r := &report{}
	scenarios := []struct {
		name string
		run  func(context.Context, *report, io.Writer) error
	}{{"long", b.long}, {"short", b.short}, {"resume", b.resume}}
	for _, s := range scenarios {
		if cfg.runs(s.name) {
			fmt.Fprintf(log, "bench: %s...\n", s.name)
			if err := s.run(ctx, r, trace); err != nil {
				return err
			}
		}
	}
	fmt.Fprintf(out, "Agentree vs the naive pattern: Temporal at %s, the same worker settings, scripted model\n", b.temporal)
	r.print(out)
	return nil
}
