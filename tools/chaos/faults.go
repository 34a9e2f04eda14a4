package main

import (
	"context"
	"fmt"
	"math/rand"
	"strconv"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
)

// The faults a run injects.
const (
	workerKill      = "worker-kill"
	gatewayKill     = "gateway-kill"
	postgresRestart = "postgres-restart"
	postgresOutage  = "postgres-outage"
	temporalRestart = "temporal-restart"
	failoverKind    = "failover" // failover.go
)

// fault is one injected fault.
type fault struct {
	Kind string
	At   time.Time
	// Gated: a model or tool call was in flight when it landed (on the
	// killed worker, for a worker kill).
	Gated bool
	// InFlight are the executions with a call in flight then (on the
	// killed worker, for a worker kill): their next progress measures
	// recovery.
	InFlight []string
	Detail   string
	Err      string
}

// schedule is the faults cfg asks for, in a seeded random order.
func schedule(cfg config, rng *rand.Rand) []string {
	var kinds []string
	add := func(kind string, n int) {
		for range n {
			kinds = append(kinds, kind)
		}
	}
	add(workerKill, cfg.WorkerKills)
	add(gatewayKill, cfg.GatewayKills)
	add(postgresRestart, cfg.PostgresRestarts)
	add(postgresOutage, cfg.Outages)
	add(temporalRestart, cfg.TemporalRestarts)
	kinds = append(kinds, resourceKinds(cfg)...)
	if cfg.Failover {
		add(failoverKind, 1)
	}
	rng.Shuffle(len(kinds), func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })
	return kinds
}

// injector fires the faults at random moments, each (when it can) while a
// model or tool call is in flight.
type injector struct {
	c    *cluster
	cfg  config
	rng  *rand.Rand
	live func() []string // executions not yet done
	// tags maps the live executions' message tag prefixes to their IDs.
	tags func() map[string]string
}

// localCalls: the workers run calls as local activities, inside workflow
// tasks, where Temporal does not show them as started activities.
func (in *injector) localCalls() bool { return !in.cfg.ActivityModelCalls || !in.cfg.ActivityToolCalls }

func (in *injector) run(ctx context.Context, kinds []string) []*fault {
	var out []*fault
	for _, kind := range kinds {
		gap := in.cfg.FaultGapMin + time.Duration(in.rng.Int63n(int64(in.cfg.FaultGapMax-in.cfg.FaultGapMin)+1))
		if sleepCtx(ctx, gap) != nil {
			return out
		}
		f := &fault{Kind: kind}
		calls := in.awaitInFlight(ctx)
		if err := in.fire(ctx, f, calls); err != nil {
			f.Err = err.Error()
		}
		in.c.logf("chaos: %s at %s gated=%v in-flight=%d %s %s", f.Kind, f.At.Format("15:04:05.000"), f.Gated, len(f.InFlight), f.Detail, f.Err)
		out = append(out, f)
	}
	return out
}

// inFlight is a started activity, or with local calls a workflow task
// busy with local ones: the execution and the worker running it ("" when
// Temporal does not say).
type inFlight struct{ exec, worker string }

// localTaskBusy is how long a workflow task has run when it is taken to be
// running local activities (a task without them takes milliseconds).
const localTaskBusy = 100 * time.Millisecond

// awaitInFlight polls Temporal until some execution has a model or tool
// call started (for a worker kill, on a worker still running), or
// GateWait passes.
func (in *injector) awaitInFlight(ctx context.Context) []inFlight {
	deadline := time.Now().Add(in.cfg.GateWait)
	for {
		calls := in.started(ctx)
		if len(calls) > 0 || time.Now().After(deadline) || ctx.Err() != nil {
			return calls
		}
		_ = sleepCtx(ctx, 100*time.Millisecond)
	}
}

// started lists the started activities of the live executions on workers
// that run: an activity of a killed worker stays started, on the server,
// until its heartbeat times out.
func (in *injector) started(ctx context.Context) []inFlight {
	var pids []string
	for _, w := range in.c.workers {
		if pid := w.pid(); pid != 0 {
			pids = append(pids, strconv.Itoa(pid)+"@")
		}
	}
	running := func(identity string) bool {
		for _, p := range pids {
			if strings.HasPrefix(identity, p) {
				return true
			}
		}
		return false
	}
	var out []inFlight
	for _, id := range in.live() {
		dctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		d, err := in.c.tc.DescribeWorkflowExecution(dctx, id, "")
		cancel()
		if err != nil {
			continue
		}
		for _, a := range d.GetPendingActivities() {
			if a.GetState() == enumspb.PENDING_ACTIVITY_STATE_STARTED && running(a.GetLastWorkerIdentity()) {
				out = append(out, inFlight{exec: id, worker: a.GetLastWorkerIdentity()})
			}
		}
		// Local calls run inside workflow tasks: one
		// started a while ago is running them. Temporal does not say on
		// which worker, so a worker kill picks one at random.
		if wt := d.GetPendingWorkflowTask(); in.localCalls() && wt.GetState() == enumspb.PENDING_WORKFLOW_TASK_STATE_STARTED &&
			time.Since(wt.GetStartedTime().AsTime()) > localTaskBusy {
			out = append(out, inFlight{exec: id})
		}
	}
	return out
}

func (in *injector) fire(ctx context.Context, f *fault, calls []inFlight) error {
	f.Gated = len(calls) > 0
	switch f.Kind {
	case workerKill:
		w := in.victim(calls)
		pid := w.pid()
		f.Gated, f.InFlight = false, nil
		for _, cl := range calls {
			if pid != 0 && strings.HasPrefix(cl.worker, strconv.Itoa(pid)+"@") {
				f.Gated = true
				f.InFlight = append(f.InFlight, cl.exec)
			}
		}
		if !f.Gated && in.localCalls() {
			// Local calls name no worker in Temporal: the model-call log
			// does, and its calls' messages name their executions. The
			// kill lands on a worker with a model call open, and those
			// executions are timed.
			if v, execs := in.openCallWorker(); v != nil {
				w, f.Gated, f.InFlight = v, true, execs
			}
		}
		f.At = time.Now()
		f.Detail = fmt.Sprintf("%s pid %d", w.name, w.kill())
		return nil
	case gatewayKill:
		for _, cl := range calls {
			f.InFlight = append(f.InFlight, cl.exec)
		}
		f.At = time.Now()
		f.Detail = fmt.Sprintf("pid %d", in.c.gateway.kill())
		return in.c.waitGateway(ctx, 2*time.Minute)
	case postgresRestart, postgresOutage:
		for _, cl := range calls {
			f.InFlight = append(f.InFlight, cl.exec)
		}
		f.At = time.Now()
		if err := in.c.stopPostgres(ctx); err != nil {
			return err
		}
		if f.Kind == postgresOutage {
			f.Detail = "down " + in.cfg.OutageLength.String()
			if err := sleepCtx(ctx, in.cfg.OutageLength); err != nil {
				return err
			}
		}
		return in.c.startPostgresServer(ctx)
	case temporalRestart:
		for _, cl := range calls {
			f.InFlight = append(f.InFlight, cl.exec)
		}
		f.At = time.Now()
		f.Detail = fmt.Sprintf("pid %d, down %s", in.c.temporal.kill(), in.cfg.TemporalDown)
		deadline := time.Now().Add(2 * time.Minute)
		for !in.c.temporalHealthy(ctx) {
			if time.Now().After(deadline) {
				return fmt.Errorf("the Temporal dev server did not come back within 2m (log %s)", in.c.temporal.logPath)
			}
			if err := sleepCtx(ctx, 200*time.Millisecond); err != nil {
				return err
			}
		}
		return nil
	case failoverKind:
		return in.failover(ctx, f, calls)
	}
	if handled, err := in.fireResource(ctx, f, calls); handled { // resources.go
		return err
	}
	return fmt.Errorf("unknown fault %q", f.Kind)
}

// openCallWorker is a running worker with a model call started and not
// ended in the model-call log (nil for none), and the live executions
// those calls are of.
func (in *injector) openCallWorker() (*proc, []string) {
	recs, err := readCallLog(in.c.callLog())
	if err != nil {
		return nil, nil
	}
	type call struct {
		pid  int
		user string
		turn int
	}
	open := map[call]int{}
	for _, r := range recs {
		k := call{r.PID, r.User, r.Turn}
		switch r.Phase {
		case "start":
			open[k]++
		case "end":
			open[k]--
		}
	}
	tags := in.tags()
	for _, w := range in.c.workers {
		pid := w.pid()
		if pid == 0 {
			continue
		}
		var execs []string
		found := false
		for k, n := range open {
			if k.pid != pid || n <= 0 {
				continue
			}
			found = true
			for prefix, id := range tags {
				if strings.HasPrefix(k.user, prefix) {
					execs = append(execs, id)
				}
			}
		}
		if found {
			return w, execs
		}
	}
	return nil, nil
}

// victim is the worker running the most started calls; with none, a
// random one.
func (in *injector) victim(calls []inFlight) *proc {
	best, most := in.c.workers[in.rng.Intn(len(in.c.workers))], 0
	for _, w := range in.c.workers {
		pid := w.pid()
		n := 0
		for _, cl := range calls {
			if pid != 0 && strings.HasPrefix(cl.worker, strconv.Itoa(pid)+"@") {
				n++
			}
		}
		if n > most {
			best, most = w, n
		}
	}
	return best
}

// newRand is the seeded source of every random choice.
func newRand(seed int64) *rand.Rand { return rand.New(rand.NewSource(seed)) }
