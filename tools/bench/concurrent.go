package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// concurrent runs many multi-turn conversations at once on each system:
// -concurrent-conversations executions of -concurrent-turns user turns,
// each turn a streaming model call that asks for -concurrent-tools tool
// calls of -concurrent-tool-delay, then the answer. Each system's worker
// runs alone in a process of its own (as resume's do), so its CPU time
// and memory can be read from /proc.
//
// The next user message is sent as soon as the system is ready for it:
// Agentree's execution reads WAITING with a new checkpoint (read when
// the store notifies an event of it, as the gateway's SSE hears them:
// waitWatcher); the naive workflow's
// answer is complete in its worker (after which the workflow only blocks
// on its signal channel; a signal sent earlier waits there). That favours
// the naive pattern by the checkpoint Agentree records after its answer
// (in the same workflow task) and the notification's way to the bench.
//
// Per system: throughput (model calls over the wall time, first start to
// last answer); the overhead of each model call inside a turn (the
// interval from its start to the next call's, minus the model's time as
// the worker measured it, from the call's start to its answer, and one
// tool's time: the tools of an answer run at once in both); the turn
// start, from sending a user message (after the first) to the start of the
// model call that answers it; the worker process's CPU time per model
// call and peak resident memory; and, for Agentree, the most Postgres
// connections its worker held (by application_name) and the database's
// (every client's) at once, sampled every 100 ms. When the Temporal
// server and Postgres run on this machine, the CPU time each used per
// model call (serverMeter): with the model and tools scripted, the
// Temporal server is where a small machine runs out first. Agentree's
// Postgres figure includes the bench's own reads of its executions'
// status (waitWatcher: on its notifications, and every second) and connection counts.
func (b *bench) concurrent(ctx context.Context, r *report, trace io.Writer) error {
	c := b.cfg
	dir, err := os.MkdirTemp("", "agentree-bench-concurrent-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	t := r.table(fmt.Sprintf("concurrent: %d conversations at once, %d turns each; a turn: a %s streaming model call (%d tokens) asking for %d tool calls of %s, then the answer",
		c.ConcConversations, c.ConcTurns, c.StreamModelTime, c.StreamTokens, c.ConcTools, c.ConcToolDelay),
		"", "calls/s", "overhead p50", "overhead p99", "turn start p50", "turn start p99", "CPU s / call", "peak RSS MB", "model calls", "wall", "PG conns: worker", "database",
		"Temporal CPU s / call", "Postgres CPU s / call", "actions / call")
	res := map[string]concResult{}
	for _, sys := range []string{nameAgentree, nameNaive} {
		cr, err := b.concurrentRun(ctx, dir, sys, load{name: "concurrent", conversations: c.ConcConversations, turns: c.ConcTurns})
		if err != nil {
			return fmt.Errorf("bench: concurrent, %s: %w", sys, err)
		}
		res[sys] = cr
		n := "concurrent_" + sys + "_"
		tput := float64(cr.calls) / cr.wall.Seconds()
		p50, p99 := percentile(cr.overheads, .5), percentile(cr.overheads, .99)
		t50, t99 := percentile(cr.turnStarts, .5), percentile(cr.turnStarts, .99)
		cpu := floatOf(cr.cpu.Seconds()/float64(cr.calls), 5)
		rss := floatOf(float64(cr.rss)/(1<<20), 1)
		r.add(n+"throughput", tput)
		r.add(n+"p50_overhead_ms", p50)
		r.add(n+"p99_overhead_ms", p99)
		r.add(n+"turn_start_p50_ms", t50)
		r.add(n+"turn_start_p99_ms", t99)
		r.add(n+"first_start_p50_ms", percentile(cr.firstStarts, .5))
		r.add(n+"first_start_p99_ms", percentile(cr.firstStarts, .99))
		r.add(n+"ready_gap_p50_ms", percentile(cr.readyGaps, .5))
		r.add(n+"ready_gap_p99_ms", percentile(cr.readyGaps, .99))
		r.add(n+"cpu_s_per_call", cpu)
		r.add(n+"rss_mb", rss)
		r.add(n+"actions_per_call", floatOf(cr.actionsPerCall, 2))
		perCall := func(d time.Duration) any {
			if d < 0 {
				return "" // not on this machine
			}
			return floatOf(d.Seconds()/float64(cr.calls), 5)
		}
		tcpu, pcpu := perCall(cr.serverCPU), perCall(cr.pgCPU)
		if cr.serverCPU >= 0 {
			r.add(n+"temporal_cpu_s_per_call", tcpu)
		}
		if cr.pgCPU >= 0 {
			r.add(n+"postgres_cpu_s_per_call", pcpu)
		}
		if sys == nameAgentree {
			t.row(sys, tput, p50, p99, t50, t99, cpu, rss, cr.calls, cr.wall, cr.pgMax, cr.pgDBMax, tcpu, pcpu, floatOf(cr.actionsPerCall, 2))
		} else {
			t.row(sys, tput, p50, p99, t50, t99, cpu, rss, cr.calls, cr.wall, "", "", tcpu, pcpu, floatOf(cr.actionsPerCall, 2))
		}
	}
	a, nv := res[nameAgentree], res[nameNaive]
	tr := (float64(a.calls) / a.wall.Seconds()) / (float64(nv.calls) / nv.wall.Seconds())
	ts := ratio(percentile(a.turnStarts, .5), percentile(nv.turnStarts, .5))
	rss := ratio(a.rss, nv.rss)
	act := 0.0
	if nv.actionsPerCall > 0 {
		act = a.actionsPerCall / nv.actionsPerCall
	}
	r.add("concurrent_throughput_ratio", tr)
	r.add("turn_start_p50_ratio", ts)
	r.add("rss_ratio", rss)
	r.add("actions_per_call_ratio", act)
	r.add("concurrent_pg_connections_max", a.pgMax)
	r.add("concurrent_pg_connections_db_max", a.pgDBMax)
	t.row("agentree / naive", tr, "", "", ts, "", "", rss, "", "", "", "", "", "", act)
	return nil
}

// concResult is what one system's concurrent run measured.
type concResult struct {
	calls     int
	wall      time.Duration
	overheads []time.Duration
	// turnStarts are, for each user message after a conversation's first,
	// the time from sending it to the start of the model call that
	// answers it.
	turnStarts []time.Duration
	// firstStarts are, per conversation, the time from starting it to its
	// first model call's start; readyGaps, per turn but the last, from the
	// end of the turn's answer to the next user message, less the think
	// time (the time the system takes to be seen ready for it).
	firstStarts, readyGaps []time.Duration
	cpu                    time.Duration
	rss                    int64
	// serverCPU and pgCPU are the CPU time the Temporal server and
	// Postgres used over the run, when they run on this machine (-1 when
	// not).
	serverCPU, pgCPU time.Duration
	// pgMax is the most connections the worker held at once; pgDBMax the
	// database's, every client's.
	pgMax, pgDBMax int
	// actionsPerCall are the Temporal Cloud actions per model call of a
	// sample of the conversations (multiTurnActions), and the activity
	// heartbeats the worker sent per model call of them all.
	actionsPerCall float64
	heartbeats     int
}

// load is what a concurrent run runs: its conversations, their user
// turns, and the think time before each user message after the first (0:
// sent as soon as the system is ready). name ("concurrent", "paced")
// names its queues and plans.
type load struct {
	name                 string
	conversations, turns int
	think                time.Duration
}

// concurrentRun runs l's conversations at once on one system's worker
// process; with a think time their starts are spread over it.
func (b *bench) concurrentRun(ctx context.Context, dir, sys string, l load) (concResult, error) {
	c := b.cfg
	var res concResult
	q := queues{Agentree: b.queues.Agentree + "-" + l.name, Naive: b.queues.Naive + "-" + l.name}
	app := "agentree-bench-" + b.suffix + "-" + sys
	dbURL, err := withParam(b.dbURL, "application_name", app)
	if err == nil && c.ConcPoolConns > 0 {
		dbURL, err = withParam(dbURL, "pool_max_conns", fmt.Sprint(c.ConcPoolConns))
	}
	if err != nil {
		return res, err
	}
	logPath := filepath.Join(dir, fmt.Sprintf("%s-%s.log", sys, randomHex(4)))
	ch, err := startWorkerProcess(workerSpec{DatabaseURL: dbURL, TemporalAddress: b.temporal, Queues: q,
		BlockAt: -1, Log: logPath, LogEnds: true, Only: sys, Mode: b.set.Mode})
	if err != nil {
		return res, err
	}
	defer ch.stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-ch.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	wl := newWorkerLog(logPath)
	go wl.follow(ctx, 5*time.Millisecond)
	if _, err := wl.await(ctx, "start", "-", -1); err != nil {
		return res, err
	}
	pid := ch.cmd.Process.Pid
	cpu0, err := procCPU(pid)
	if err != nil {
		return res, err
	}
	servers := newServerMeter(b.temporal, b.dbURL)

	var d chatDriver
	sctx, stopSampling := context.WithCancel(ctx)
	defer stopSampling()
	samples := make(chan [2]int, 1)
	if sys == nameAgentree {
		watch := newWaitWatcher(b)
		go watch.run(ctx)
		d = &agentreeChat{b: b, queue: q.Agentree, watch: watch, seq: map[string]int{}}
		go func() { samples <- b.samplePgConnections(sctx, app) }()
	} else {
		samples <- [2]int{}
		d = naiveChat{b: b, queue: q.Naive, log: wl}
	}

	plans := make([]plan, l.conversations)
	ids, sent := make([]string, len(plans)), make([][]time.Time, len(plans))
	errs := make([]error, len(plans))
	began := time.Now()
	var wg sync.WaitGroup
	for i := range plans {
		plans[i] = plan{ID: b.newPlanID(l.name + "-" + sys), Calls: 2, Turns: l.turns, Tools: c.ConcTools, ToolBytes: 256,
			ModelMs: int(c.StreamModelTime / time.Millisecond), Tokens: c.StreamTokens, TokenMs: int(c.StreamTokenDelay / time.Millisecond),
			ToolMs: int(c.ConcToolDelay / time.Millisecond)}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = pause(ctx, time.Duration(i)*l.think/time.Duration(len(plans)))
			if errs[i] == nil {
				ids[i], sent[i], errs[i] = converseTurns(ctx, d, plans[i], l.think)
			}
			if errs[i] != nil {
				cancel()
			}
		}()
	}
	wg.Wait()
	res.wall = time.Since(began)
	stopSampling()
	pg := <-samples
	res.pgMax, res.pgDBMax = pg[0], pg[1]
	for _, err := range errs {
		if err != nil {
			return res, err
		}
	}
	cpu1, err := procCPU(pid)
	if err != nil {
		return res, err
	}
	res.cpu = cpu1 - cpu0
	res.serverCPU, res.pgCPU = servers.used()
	if res.rss, err = procPeakRSS(pid); err != nil {
		return res, err
	}
	for i, p := range plans {
		starts, ends := wl.times("call", p.ID), wl.times("end", p.ID)
		res.calls += len(starts)
		if s0, ok := starts[0]; ok {
			res.firstStarts = append(res.firstStarts, s0.Sub(sent[i][0]))
		}
		for turn := 0; turn+1 < len(sent[i]); turn++ {
			if end, ok := ends[(turn+1)*p.Calls-1]; ok {
				res.readyGaps = append(res.readyGaps, sent[i][turn+1].Sub(end)-l.think)
			}
		}
		for turn := 1; turn < len(sent[i]); turn++ {
			if start, ok := starts[turn*p.Calls]; ok {
				res.turnStarts = append(res.turnStarts, start.Sub(sent[i][turn]))
			}
		}
		for step := range p.Calls * p.Turns {
			next, ok1 := starts[step+1]
			end, ok2 := ends[step]
			if ok1 && ok2 && step%p.Calls != p.Calls-1 {
				res.overheads = append(res.overheads, next.Sub(end)-c.ConcToolDelay)
			}
		}
	}
	if want := l.conversations * l.turns * 2; res.calls != want {
		return res, fmt.Errorf("%d model calls, not %d", res.calls, want)
	}
	if err := d.finish(ctx, ids); err != nil {
		return res, err
	}
	res.actionsPerCall, err = b.multiTurnActions(ctx, sys, ids[:min(len(ids), actionSample)], l.turns*2)
	// Heartbeats are not in history: the worker logs each it sends.
	res.heartbeats = len(wl.times("heartbeat", "-"))
	res.actionsPerCall += float64(res.heartbeats) / float64(res.calls)
	return res, err
}

// actionSample is how many of the concurrent conversations' histories
// multiTurnActions reads.
const actionSample = 10

// multiTurnActions is the Temporal Cloud actions per model call of the
// conversations ids (every run of each, its end included), each of calls
// model calls: what a multi-turn conversation costs, its signals, status
// upserts and continue-as-new included, where actions counts one user
// turn.
func (b *bench) multiTurnActions(ctx context.Context, sys string, ids []string, calls int) (float64, error) {
	tc := b.sys.agentree
	if sys == nameNaive {
		tc = b.sys.naive
	}
	var a actions
	for _, id := range ids {
		runs, err := runChain(ctx, tc, id)
		if err == nil {
			err = a.addRuns(ctx, tc, id, runs)
		}
		if err != nil {
			return 0, err
		}
	}
	return float64(a.total()) / float64(len(ids)*calls), nil
}

// samplePgConnections counts Postgres connections every 100 ms until ctx
// ends, and returns the most at once: those named app, and the
// database's.
func (b *bench) samplePgConnections(ctx context.Context, app string) [2]int {
	var most [2]int
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		var mine, all int
		err := b.store.Pool().QueryRow(ctx, `SELECT count(*) FILTER (WHERE application_name = $1), count(*)
			FROM pg_stat_activity WHERE datname = current_database()`, app).Scan(&mine, &all)
		if err == nil {
			most[0], most[1] = max(most[0], mine), max(most[1], all)
		}
		select {
		case <-ctx.Done():
			return most
		case <-tick.C:
		}
	}
}
