// Command bench measures Agentree against the pattern today's Temporal
// agent integrations use (openai_agents, googleadk): one workflow that keeps
// the conversation in its state and passes all of it into every model
// call. Both run on the same Temporal server with the same worker settings
// and workflow-task timeout, the same scripted model and the same tool, in
// sets of modes (sets.go): A each system's defaults, B local model calls on
// both, C everything local on both; every ratio is judged within a set.
// Each set runs every scenario:
//
//   - long: one user turn over an 800 KB conversation with 5 KB tool
//     outputs, 100 model calls for Agentree and 1,000 for the naive pattern,
//     enough to find where it stops: terminated by the server's 50 MB
//     history limit, or stuck when a workflow task's completion passes
//     gRPC's 4 MB message limit. Per system: calls completed, final status,
//     runs, the largest run's history and the history of all runs, wall time.
//   - short: 100 model calls over a 10 KB conversation with 1 KB tool
//     outputs. The time between consecutive model calls' starts (one model
//     call and its tool call), p50 and p95 per system, against the floors:
//     the same interval for a workflow of no-op activities, and of no-op
//     local activities.
//   - resume: a worker process killed (SIGKILL) during the tool call of call 9
//     of a 10-call conversation and of call 90 of a 1,000-call one; the time
//     from its replacement's start to the next model call.
//   - scale_n: the model-call overhead at calls 10, 100 and 1,000 of one
//     Agentree conversation.
//   - storage: the bytes of an Agentree conversation's rows in Postgres per
//     byte of its messages.
//   - ttft: what Agentree adds to the model's time to first token, from a
//     user message's POST to the REST gateway to the first SSE token.
//   - concurrent: many multi-turn conversations at once per system, each
//     system's worker in a process of its own: throughput, per-call
//     overhead, CPU and memory per worker, Postgres connections.
//   - paced: fewer conversations, each user message sent a think time
//     after the system is ready for it: the turn start at a load both
//     systems sustain, where concurrent's closed loop saturates the
//     machine and measures where its queue forms.
//
// Every scenario runs -repeat times (figures are medians, named after their
// set: setA_…) and, with
// -default-server, again on a dev server of Temporal's default dynamic
// config that the bench starts (figures suffixed _default).
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
	"strings"
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

// run runs the scenarios cfg names, -repeat times each, on the server
// TEMPORAL_ADDRESS names and, with -default-server, on a dev server of
// Temporal's default dynamic config it starts; it prints the report to
// out. Progress, and traces when asked for, go to log.
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
	servers := []server{{addr: os.Getenv("TEMPORAL_ADDRESS")}}
	if cfg.DefaultServer {
		fmt.Fprintln(log, "bench: starting a Temporal dev server with the default dynamic config...")
		dev, err := startDevServer(ctx, cfg.TemporalBin)
		if err != nil {
			return err
		}
		defer dev.stop()
		servers = append(servers, server{addr: dev.addr, suffix: defaultSuffix})
	}
	var trace io.Writer
	if cfg.Trace {
		trace = log
	}
	// results[i][j] is set j on server i.
	sets := cfg.sets()
	results := make([][]*report, len(servers))
	for i, srv := range servers {
		results[i] = make([]*report, len(sets))
		for j, set := range sets {
			var err error
			if results[i][j], err = runOn(ctx, cfg, srv, set, log, trace); err != nil {
				return err
			}
		}
		trace = nil
	}

	fmt.Fprintf(out, "Agentree vs the naive pattern: Temporal at %s, the same worker settings and workflow-task timeout, scripted model; "+
		"each figure the median of %d repetitions (lowest–highest); every ratio within a set\n", servers[0].addr, cfg.Repeat)
	for _, set := range sets {
		fmt.Fprintln(out, set.describe())
	}
	for j, set := range sets {
		results[0][j].printTables(out, " [set "+set.Name+"]")
	}
	if len(servers) > 1 {
		fmt.Fprintf(out, "\n== the same on a Temporal dev server with its default dynamic config (%s): "+
			"no eager activities, the default workflowIdReuseMinimalInterval; its figures end in %s ==\n", servers[1].addr, defaultSuffix)
		for j, set := range sets {
			results[1][j].printTables(out, " ["+strings.TrimPrefix(defaultSuffix, "_")+" config, set "+set.Name+"]")
		}
	}
	for j, set := range sets {
		results[0][j].printTargets(out, "set "+set.Name)
	}
	fmt.Fprintln(out)
	for i, srv := range servers {
		for j, set := range sets {
			results[i][j].printFigures(out, set.prefix(), srv.suffix)
			if set.Name == "A" {
				results[i][j].printHeadline(out, srv.suffix)
			}
		}
	}
	return nil
}

// server is a Temporal server the scenarios run on; suffix ends its
// figures' names.
type server struct{ addr, suffix string }

// defaultSuffix ends the names of the figures taken on the dev server of
// default dynamic config.
const defaultSuffix = "_default"

// runOn runs every scenario cfg names on one server in one set's modes,
// cfg.Repeat times, and returns the repetitions merged with the set's
// targets.
func runOn(ctx context.Context, cfg config, srv server, set benchSet, log, trace io.Writer) (*report, error) {
	b, closeBench, err := openBench(ctx, cfg, srv.addr, set)
	if err != nil {
		return nil, err
	}
	defer closeBench()
	reps := make([]*report, cfg.Repeat)
	for i := range reps {
		reps[i] = &report{}
		for _, s := range b.scenarios() {
			if !cfg.runs(s.name) {
				continue
			}
			fmt.Fprintf(log, "bench: set %s, %s%s, repetition %d of %d...\n", set.Name, s.name, srv.suffix, i+1, cfg.Repeat)
			if err := s.run(ctx, reps[i], trace); err != nil {
				return nil, fmt.Errorf("%s (%s): %w", s.name, srv.addr, err)
			}
		}
		trace = nil
	}
	m := merge(reps)
	m.targets = append(m.targets, targetsFor(set, cfg)...)
	return m, nil
}

// scenario is one scenario: it adds its tables, figures and targets to a
// repetition's report.
type scenario struct {
	name string
	run  func(context.Context, *report, io.Writer) error
}

// scenarios are every scenario, in the order they run.
func (b *bench) scenarios() []scenario {
	return []scenario{{"long", b.long}, {"short", b.short}, {"resume", b.resume}, {"scale_n", b.scaleN}, {"storage", b.storage}, {"ttft", b.ttft}, {"concurrent", b.concurrent}, {"paced", b.paced}, {"junk_flood", b.junkFlood}}
}
