package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/agentree/agentree/adapter"
	aclient "github.com/agentree/agentree/adapter/client"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/agentsdk/scripted"
)

// The systems' names, as the figures spell them.
const (
	nameAgentree = "agentree"
	nameNaive    = "naive"
	// nameWorkerHeld is Agentree with persistenceMode local: the conversation
	// in the worker's SQLite file instead of Postgres.
	nameWorkerHeld = "agentree_local"
	// nameTraced is Agentree with tracing on.
	nameTraced = "agentree_traced"
)

// system is one of the two systems under test, as the scenarios drive it.
type system interface {
	name() string
	// start begins a conversation of plan p on queue and returns its
	// workflow ID.
	start(ctx context.Context, queue string, p plan, conversation int) (string, error)
	// wait blocks until the conversation ends; it returns its final status
	// and, if the server or a failure ended it, why.
	wait(ctx context.Context, id string) (status, reason string, err error)
	// stop ends a conversation that is still running.
	stop(ctx context.Context, id string) error
	// calls counts the model calls the conversation completed.
	calls(ctx context.Context, id string) (int, error)
	temporal() client.Client
	toolActivity() string
	// heartbeats are the activity heartbeats its client's workers have
	// sent so far.
	heartbeats() int64
}

// outcome is what one conversation did.
type outcome struct {
	ID             string
	Calls          int
	Status, Reason string
	Runs           []runStat
	Wall           time.Duration
	// Intervals are the times between consecutive model calls' starts.
	Intervals []time.Duration
	// Heartbeats are the activity heartbeats its system's workers sent
	// while it ran (conversations run one at a time in-process).
	Heartbeats int64
}

// largest is the outcome's largest run, by history bytes.
func (o outcome) largest() runStat {
	var m runStat
	for _, r := range o.Runs {
		if r.Bytes > m.Bytes {
			m = r
		}
	}
	return m
}

// total is the history of all the outcome's runs together.
func (o outcome) total() (events, bytes int64) {
	for _, r := range o.Runs {
		events += r.Events
		bytes += r.Bytes
	}
	return events, bytes
}

// converse runs one conversation on a system's in-process worker to its end.
func (b *bench) converse(ctx context.Context, s system, calls, conversation, toolBytes int) (outcome, error) {
	p := plan{ID: b.newPlanID(s.name()), Calls: calls, ToolBytes: toolBytes}
	began, beats := time.Now(), s.heartbeats()
	id, err := s.start(ctx, b.queues.of(s.name()), p, conversation)
	if err != nil {
		return outcome{}, err
	}
	o := outcome{ID: id}
	if o.Status, o.Reason, err = s.wait(ctx, id); err != nil {
		return o, err
	}
	o.Heartbeats = s.heartbeats() - beats
	o.Wall = time.Since(began)
	o.Intervals = b.calls.intervals(p.ID)
	if o.Runs, err = runChain(ctx, s.temporal(), id); err != nil {
		return o, err
	}
	o.Calls, err = s.calls(ctx, id)
	return o, err
}

// agentree drives Agentree's react agent through the adapter's client.
// traced is the same worker setup with tracing on (every span recorded
// and handed to an exporter that drops it): what tracing costs.
type agentree struct {
	b      *bench
	traced bool
	// org, when set, is the organization its executions run in (the
	// bench's own otherwise).
	org string
	// multiTurn starts executions in multi-turn mode: after each answer
	// they wait for the next user message.
	multiTurn bool
}

// orgID is the organization the executions run in.
func (a agentree) orgID() string {
	if a.org != "" {
		return a.org
	}
	return a.b.org.ID
}

func (a agentree) name() string {
	if a.traced {
		return nameTraced
	}
	return nameAgentree
}

func (a agentree) temporal() client.Client {
	if a.traced {
		return a.b.sys.traced
	}
	return a.b.sys.agentree
}
func (agentree) toolActivity() string { return adapter.RunToolActivity }
func (a agentree) heartbeats() int64  { return a.b.sys.agentreeBeats.count() }

func (a agentree) client(queue string) *aclient.Client {
	return aclient.NewClient(a.temporal(), a.b.store, queue)
}

func (a agentree) start(ctx context.Context, queue string, p plan, conversation int) (string, error) {
	return a.startIn(ctx, queue, p, conversation, "")
}

func (a agentree) startIn(ctx context.Context, queue string, p plan, conversation int, persistence string) (string, error) {
	mode := agentsdk.ModeOneShot
	if a.multiTurn {
		mode = agentsdk.ModeMultiTurn
	}
	ex, err := a.client(queue).Start(ctx, aclient.StartRequest{
		OrgID: a.orgID(), Kind: react.Kind, UserPrompt: p.prompt(conversation),
		Config: agentsdk.Config{
			Models: []agentsdk.ModelRef{scripted.Model("")}, Tools: []string{ToolName}, Mode: mode,
			MaxTurns: p.Calls, LoopThreshold: -1, PersistenceMode: persistence,
			// The naive pattern sends the whole conversation every call, and
			// the scripted model reads its plan from the first prompt: a
			// compaction would change both what is compared and the script.
			Compaction: &agentsdk.Compaction{Enabled: &compactionOff},
		},
	})
	return ex.ID, err
}

// compactionOff turns compaction off in the benchmark's executions.
var compactionOff = false

// agentreeWorkerHeld is Agentree with persistenceMode local.
type agentreeWorkerHeld struct{ agentree }

func (agentreeWorkerHeld) name() string { return nameWorkerHeld }

func (a agentreeWorkerHeld) start(ctx context.Context, queue string, p plan, conversation int) (string, error) {
	return a.startIn(ctx, queue, p, conversation, agentsdk.PersistenceWorkerHeld)
}

// calls counts the model calls recorded in the worker's store.
func (a agentreeWorkerHeld) calls(ctx context.Context, id string) (int, error) {
	return a.b.sys.held.ModelCalls(ctx, id)
}

func (a agentree) wait(ctx context.Context, id string) (string, string, error) {
	if _, err := a.client("").Wait(ctx, id); ctx.Err() != nil {
		return "", "", fmt.Errorf("bench: wait for %s: %w", id, err)
	}
	ex, err := a.b.store.GetExecution(ctx, a.orgID(), id)
	return string(ex.Status), ex.Error, err
}

func (a agentree) stop(ctx context.Context, id string) error {
	if _, err := a.client("").Cancel(ctx, a.orgID(), id); err != nil {
		return err
	}
	_, _, err := a.wait(ctx, id)
	return err
}

// calls counts the execution's answered model calls, as its usage does.
func (a agentree) calls(ctx context.Context, id string) (int, error) {
	lines, err := a.b.store.ExecutionUsage(ctx, a.orgID(), id)
	var n int64
	for _, l := range lines {
		n += l.Calls
	}
	return int(n), err
}

// agentreeToolHeartbeat is Agentree's default tool heartbeat timeout; the
// naive agent's tool calls get the same outside the resume scenario.
const agentreeToolHeartbeat = 5 * time.Second

// trace prints the history of one of the outcome's runs, the middle one,
// with relative times: where a step's time goes. A nil w prints nothing.
func (b *bench) trace(ctx context.Context, w io.Writer, s system, o outcome) error {
	if w == nil || len(o.Runs) == 0 {
		return nil
	}
	run := o.Runs[len(o.Runs)/2]
	evs, err := historyOf(ctx, s.temporal(), o.ID, run.RunID)
	if err != nil {
		return err
	}
	dumpHistory(w, fmt.Sprintf("%s: run %d of %d of %s", s.name(), len(o.Runs)/2+1, len(o.Runs), o.ID), evs[:min(len(evs), 150)], time.Time{})
	return nil
}

// naive drives the naive pattern's workflow with a plain Temporal client.
type naive struct {
	b *bench
	// heartbeat is the tool activity's heartbeat timeout.
	heartbeat time.Duration
	// mode's Naive fields say which of its calls are local activities.
	mode mode
	// deadline, when set, bounds a conversation: wait reports one still
	// running after it, or whose workflow task keeps failing, STUCK
	// (watch).
	deadline time.Duration
}

// naiveSystem is the naive pattern in the set's mode, its tool calls'
// heartbeat timeout heartbeat.
func (b *bench) naiveSystem(heartbeat time.Duration) naive {
	return naive{b: b, heartbeat: heartbeat, mode: b.set.Mode}
}

func (naive) name() string              { return nameNaive }
func (n naive) temporal() client.Client { return n.b.sys.naive }
func (naive) toolActivity() string      { return NaiveToolActivity }
func (n naive) heartbeats() int64       { return n.b.sys.naiveBeats.count() }

func (n naive) start(ctx context.Context, queue string, p plan, conversation int) (string, error) {
	in := NaiveInput{
		Model: scripted.Model(""), Tools: []agentsdk.ToolSpec{newTool(nil).Spec()}, MaxCalls: p.Calls,
		Messages: []agentsdk.Message{agentsdk.TextMessage(agentsdk.RoleUser, p.prompt(conversation))}, ToolHeartbeat: n.heartbeat,
		LocalModelCalls: n.mode.NaiveLocalModelCalls, LocalTools: n.mode.NaiveLocalTools,
	}
	run, err := n.b.sys.naive.ExecuteWorkflow(ctx, naiveStart(p.ID, queue), NaiveWorkflowName, in)
	if err != nil {
		return "", fmt.Errorf("bench: start the naive agent: %w", err)
	}
	n.b.mu.Lock()
	n.b.naiveIDs = append(n.b.naiveIDs, run.GetID())
	n.b.mu.Unlock()
	return run.GetID(), nil
}

func (n naive) wait(ctx context.Context, id string) (string, string, error) {
	if n.deadline > 0 {
		if why, err := n.watch(ctx, id); err != nil || why != "" {
			return statusStuck, why, err
		}
	}
	var res NaiveResult
	err := n.b.sys.naive.GetWorkflow(ctx, id, "").Get(ctx, &res)
	if ctx.Err() != nil {
		return "", "", fmt.Errorf("bench: wait for %s: %w", id, err)
	}
	d, derr := n.b.sys.naive.DescribeWorkflowExecution(ctx, id, "")
	if derr != nil {
		return "", "", errors.Join(err, derr)
	}
	status := statusName(d.WorkflowExecutionInfo.Status)
	if err == nil {
		return status, "", nil
	}
	reason, rerr := closeReason(ctx, n.b.sys.naive, id)
	return status, reason, rerr
}

func (n naive) stop(ctx context.Context, id string) error {
	return n.b.sys.naive.TerminateWorkflow(ctx, id, "", "bench: measured")
}

// calls counts the completed model calls in the history: activities, or
// local activities' markers.
func (n naive) calls(ctx context.Context, id string) (int, error) {
	evs, err := historyOf(ctx, n.b.sys.naive, id, "")
	return completedActivities(evs, NaiveModelActivity), err
}

// naiveStart are the naive workflows' start options: Agentree's
// workflow-task timeout, so a local activity's workflow task heartbeats
// and times out as Agentree's does.
func naiveStart(id, queue string) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{ID: id, TaskQueue: queue, WorkflowTaskTimeout: aclient.WorkflowTaskTimeout}
}

// slowServer reports whether err is the server not answering a call in
// time (the SDK's per-call deadline, or Unavailable): on a loaded dev
// server a single DescribeWorkflowExecution passed its 10 s in CI.
func slowServer(err error) bool {
	var unavailable *serviceerror.Unavailable
	var deadline *serviceerror.DeadlineExceeded
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &unavailable) || errors.As(err, &deadline)
}

// statusStuck is the status of a naive conversation watch found stuck.
const statusStuck = "STUCK"

// stuckAttempts is the workflow-task attempt at which watch calls a run
// stuck: its task failed (or timed out) twice in a row. A workflow task
// that heartbeats does not count: each heartbeat starts a new task.
const stuckAttempts = 3

// watch polls a naive run until it closes, and returns "", or until it
// is stuck — its workflow task failing again and again (a completion the
// server refuses is retried forever), or still running after n.deadline
// — and then terminates it and returns why.
func (n naive) watch(ctx context.Context, id string) (string, error) {
	end := time.Now().Add(n.deadline)
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		d, err := n.b.sys.naive.DescribeWorkflowExecution(ctx, id, "")
		if err != nil && (ctx.Err() != nil || !slowServer(err)) {
			return "", fmt.Errorf("bench: describe %s: %w", id, err)
		}
		// On a poll the busy server did not answer in time (err != nil
		// here), the next one asks again.
		if err == nil {
			if d.WorkflowExecutionInfo.Status != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
				return "", nil
			}
			why := ""
			if wt := d.PendingWorkflowTask; wt.GetAttempt() >= stuckAttempts {
				why = fmt.Sprintf("its workflow task failed %d times in a row", wt.GetAttempt()-1)
			} else if time.Now().After(end) {
				why = fmt.Sprintf("still running after %s", n.deadline)
			}
			if why != "" {
				cause, err := lastTaskFailure(ctx, n.b.sys.naive, id)
				if err != nil {
					return "", err
				}
				if cause != "" {
					why += "; " + cause
				}
				return why, n.b.sys.naive.TerminateWorkflow(ctx, id, "", "bench: stuck: "+why)
			}
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("bench: watch %s: %w", id, ctx.Err())
		case <-tick.C:
		}
	}
}
