package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

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
	// nameLocal is Agentree with persistenceMode local: the conversation
	// in the worker's SQLite file instead of Postgres.
	nameLocal = "agentree_local"
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
	began := time.Now()
	id, err := s.start(ctx, b.queues.of(s.name()), p, conversation)
	if err != nil {
		return outcome{}, err
	}
	o := outcome{ID: id}
	if o.Status, o.Reason, err = s.wait(ctx, id); err != nil {
		return o, err
	}
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

// agentreeLocal is Agentree with persistenceMode local.
type agentreeLocal struct{ agentree }

func (agentreeLocal) name() string { return nameLocal }

func (a agentreeLocal) start(ctx context.Context, queue string, p plan, conversation int) (string, error) {
	return a.startIn(ctx, queue, p, conversation, agentsdk.PersistenceLocal)
}

// calls counts the model calls recorded in the worker's local store.
func (a agentreeLocal) calls(ctx context.Context, id string) (int, error) {
	return a.b.sys.local.ModelCalls(ctx, id)
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
}

func (naive) name() string              { return nameNaive }
func (n naive) temporal() client.Client { return n.b.sys.naive }
func (naive) toolActivity() string      { return NaiveToolActivity }

func (n naive) start(ctx context.Context, queue string, p plan, conversation int) (string, error) {
	in := NaiveInput{
		Model: scripted.Model(""), Tools: []agentsdk.ToolSpec{newTool(nil).Spec()}, MaxCalls: p.Calls,
		Messages: []agentsdk.Message{agentsdk.TextMessage(agentsdk.RoleUser, p.prompt(conversation))}, ToolHeartbeat: n.heartbeat,
	}
	run, err := n.b.sys.naive.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: p.ID, TaskQueue: queue}, NaiveWorkflowName, in)
	if err != nil {
		return "", fmt.Errorf("bench: start the naive agent: %w", err)
	}
	n.b.mu.Lock()
	n.b.naiveIDs = append(n.b.naiveIDs, run.GetID())
	n.b.mu.Unlock()
	return run.GetID(), nil
}

func (n naive) wait(ctx context.Context, id string) (string, string, error) {
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

// calls counts the completed model-call activities in the history.
func (n naive) calls(ctx context.Context, id string) (int, error) {
	evs, err := historyOf(ctx, n.b.sys.naive, id, "")
	return completedActivities(evs, NaiveModelActivity), err
}
