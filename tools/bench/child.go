package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/worker"

	"github.com/agentree/agentree/entrystore"
)

// workerEnv, set in a process's environment, makes the bench binary (or
// its test binary) a worker process instead; its value is a workerSpec in
// JSON. The resume scenario kills such processes.
const workerEnv = "AGENTREE_BENCH_WORKER"

// envProfile, when set, is a path prefix under which each worker process
// writes a CPU profile of its run (<prefix>-<system>-<pid>.cpu) and, as it
// stops, a heap profile (.heap) and its memory statistics (.memstats):
// where a worker's time and memory go, e.g. concurrent's.
const envProfile = "AGENTREE_BENCH_PROFILE"

// startCPUProfile profiles the process's CPU into path until stop.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// writeHeap writes the process's heap profile to prefix.heap and its
// runtime.MemStats to prefix.memstats, best effort.
func writeHeap(prefix string) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	stats := fmt.Sprintf("HeapInuse=%d HeapSys=%d StackInuse=%d Sys=%d NumGC=%d HeapObjects=%d Goroutines=%d\n",
		ms.HeapInuse, ms.HeapSys, ms.StackInuse, ms.Sys, ms.NumGC, ms.HeapObjects, runtime.NumGoroutine())
	_ = os.WriteFile(prefix+".memstats", []byte(stats), 0o644)
	if f, err := os.Create(prefix + ".heap"); err == nil {
		_ = pprof.Lookup("heap").WriteTo(f, 0)
		f.Close()
	}
}

// workerSpec configures a worker process.
type workerSpec struct {
	DatabaseURL     string
	TemporalAddress string
	Queues          queues
	ToolHeartbeat   time.Duration
	// BlockAt is the step whose tool call blocks until the process dies;
	// -1 for none.
	BlockAt int
	// Log is where the process appends what it does, a line each:
	// "<event> <plan ID or -> <step> <unix nanoseconds>", where event is
	// start (its workers begin polling), call (a model call begins),
	// end (a model call's answer is complete; with LogEnds), block (the
	// tool call of step BlockAt began and holds) or heartbeat (an
	// activity heartbeat reached the server; its step is the count so
	// far).
	Log     string
	LogEnds bool
	// Mode is how Agentree's worker runs its calls.
	Mode mode
	// Only, when set, runs that system's workers alone.
	Only string
}

// runWorkerProcess is a worker process's main: both systems' workers, run
// until SIGINT or SIGTERM (or SIGKILL).
func runWorkerProcess(raw string) error {
	var spec workerSpec
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		return fmt.Errorf("bench: worker spec: %w", err)
	}
	ctx := context.Background()
	pcfg, err := entrystore.PoolConfig(spec.DatabaseURL)
	if err != nil {
		return err
	}
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return err
	}
	defer pool.Close()
	// Connected before "start", so the time to resume is the worker's,
	// not the process's or the pool's.
	if err := pool.Ping(ctx); err != nil {
		return err
	}
	logf, err := os.OpenFile(spec.Log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	var mu sync.Mutex
	write := func(event, planID string, step int, at time.Time) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(logf, "%s %s %d %d\n", event, planID, step, at.UnixNano())
	}
	opts := systemOptions{
		TemporalAddress: spec.TemporalAddress, Queues: spec.Queues, ToolHeartbeat: spec.ToolHeartbeat,
		Record: func(planID string, step int, at time.Time) { write("call", planID, step, at) },
		Only:   spec.Only, TempDir: filepath.Dir(spec.Log), Mode: spec.Mode,
		OnHeartbeat: func(n int64) { write("heartbeat", "-", int(n), time.Now()) },
	}
	if spec.LogEnds {
		opts.RecordEnd = func(planID string, step int, at time.Time) { write("end", planID, step, at) }
	}
	if spec.BlockAt >= 0 {
		opts.Block = func(ctx context.Context, step int) {
			if step == spec.BlockAt {
				write("block", "-", step, time.Now())
				<-ctx.Done()
			}
		}
	}
	sys, err := dialSystems(entrystore.New(pool), opts)
	if err != nil {
		return err
	}
	defer sys.close()
	if prefix := os.Getenv(envProfile); prefix != "" {
		stop, err := startCPUProfile(fmt.Sprintf("%s-%s-%d.cpu", prefix, spec.Only, os.Getpid()))
		if err != nil {
			return err
		}
		defer stop()
	}
	write("start", "-", -1, time.Now())
	if err := sys.start(); err != nil {
		return err
	}
	<-worker.InterruptCh()
	if prefix := os.Getenv(envProfile); prefix != "" {
		writeHeap(fmt.Sprintf("%s-%s-%d", prefix, spec.Only, os.Getpid()))
	}
	return nil
}

// child is a worker process this bench started.
type child struct {
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

// startChild re-runs this binary as a worker process on the resume queues.
func (b *bench) startChild(dir, name string, blockAt int) (*child, error) {
	return startWorkerProcess(workerSpec{
		DatabaseURL: b.dbURL, TemporalAddress: b.temporal, Queues: b.resumeQueues(),
		ToolHeartbeat: b.cfg.ResumeHeartbeat, BlockAt: blockAt, Log: filepath.Join(dir, name+".log"),
		// A worker that dies mid-call stands for a long, heartbeating
		// tool: the tool is an activity whatever the set.
		Mode: mode{ActivityModelCalls: b.set.Mode.ActivityModelCalls, ActivityToolCalls: true},
	})
}

// startWorkerProcess re-runs this binary as a worker process of spec.
func startWorkerProcess(s workerSpec) (*child, error) {
	spec, _ := json.Marshal(s)
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	c := &child{cmd: exec.Command(exe), log: s.Log, done: make(chan struct{})}
	c.cmd.Env = append(os.Environ(), workerEnv+"="+string(spec))
	c.cmd.Stdout, c.cmd.Stderr = os.Stderr, os.Stderr
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("bench: start worker process: %w", err)
	}
	go func() { _ = c.cmd.Wait(); close(c.done) }()
	return c, nil
}

// kill ends the process with SIGKILL, as a crash would.
func (c *child) kill() {
	_ = c.cmd.Process.Signal(syscall.SIGKILL)
	<-c.done
}

// stop asks the process to stop its workers, and kills it if it will not.
func (c *child) stop() {
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		c.kill()
	}
}

// await polls the process's log until it records event for plan and step,
// and returns when that happened.
func (c *child) await(ctx context.Context, event, planID string, step int) (time.Time, error) {
	prefix := fmt.Sprintf("%s %s %d ", event, planID, step)
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		b, err := os.ReadFile(c.log)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return time.Time{}, err
		}
		for _, line := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, prefix); ok {
				var ns int64
				if _, err := fmt.Sscan(rest, &ns); err != nil {
					return time.Time{}, fmt.Errorf("bench: worker log line %q: %w", line, err)
				}
				return time.Unix(0, ns), nil
			}
		}
		select {
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("bench: waiting for %q in the worker's log: %w", strings.TrimSpace(prefix), ctx.Err())
		case <-c.done:
			return time.Time{}, fmt.Errorf("bench: the worker process exited before %q", strings.TrimSpace(prefix))
		case <-tick.C:
		}
	}
}
