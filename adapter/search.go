package adapter

import (
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agentree/agentree/adapter/client"
	"github.com/agentree/agentree/agentsdk/event"
	"github.com/agentree/agentree/internal/domain"
	"github.com/agentree/agentree/internal/engine"
)

// searchAttributesChange is the workflow change that keeps the
// AgentreeStatus search attribute current: each upsert is a history event,
// so runs recorded before it replay without them. Version 2 shows RUNNING
// only once a turn outlasts its workflow task (upsertStatus).
const searchAttributesChange = "agentree-search-attributes"

// statusAfter is the status a successful store operation leaves the
// execution in, when it changes it — RUNNING (or whatever Begin found),
// WAITING, or the terminal status a Finish recorded.
func statusAfter(in, out any) (status domain.Status, ok bool) {
	switch in := in.(type) {
	case engine.BeginInput:
		if b, ok := out.(*engine.BeginOutput); ok && b.Status != "" {
			return b.Status, true
		}
	case engine.CheckpointInput:
		if in.Wait {
			return domain.StatusWaiting, true
		}
	case engine.FinishInput:
		if o, ok := out.(*engine.FinishOutput); ok && len(o.Pending) == 0 {
			return in.Status, true
		}
	}
	return "", false
}

// upsertStatus sets AgentreeStatus to status when it differs from the
// run's, with AgentreeKind on a run that lacks it (a workflow started
// before it was set). The workflow task fails, and is
// retried, when the cluster does not have the attributes registered.
//
// From the change's version 2 on, RUNNING waits until the turn outlasts
// the workflow task it is in (showRunning): a turn whose steps all run in
// one task (local model calls and tools) and end in a wait is recorded by
// Temporal at once, so showing RUNNING would take two visibility writes
// per turn — on the dev server most of a turn's cost — for a state
// nobody could have seen.
func (p *temporalPort) upsertStatus(status domain.Status) error {
	if !p.searchVersionKnown {
		p.searchVersion = version(p.ctx, p.budget.Changes, searchAttributesChange, 2)
		p.searchVersionKnown = true
	}
	if p.searchVersion == workflow.DefaultVersion {
		return nil
	}
	if status == domain.StatusRunning && p.searchVersion >= 2 {
		p.running.pending = true
		p.watchLongTasks()
		return nil
	}
	p.running.pending = false
	return p.setStatus(status)
}

// setStatus upserts AgentreeStatus (see upsertStatus).
func (p *temporalPort) setStatus(status domain.Status) error {
	current := workflow.GetTypedSearchAttributes(p.ctx)
	if !current.ContainsKey(client.SearchOrg) {
		// Started without them (a cluster where they are not registered:
		// client.ExecuteWorkflow): an upsert would fail the workflow task.
		return nil
	}
	if v, ok := current.GetKeyword(client.SearchStatus); ok && v == string(status) {
		return nil
	}
	updates := []temporal.SearchAttributeUpdate{client.SearchStatus.ValueSet(string(status))}
	if !current.ContainsKey(client.SearchKind) {
		updates = append(updates, client.SearchKind.ValueSet(workflow.GetInfo(p.ctx).WorkflowType.Name))
	}
	return workflow.UpsertTypedSearchAttributes(p.ctx, updates...)
}

// runningStatus is a RUNNING that upsertStatus has not shown yet.
type runningStatus struct {
	pending bool
	// watching: watchLongTasks runs.
	watching bool
	// inLocal is set while the workflow waits on local activities, which
	// began with the history at since.
	inLocal bool
	since   int
}

// showRunning upserts a pending RUNNING: the turn is about to outlast its
// workflow task (it waits on an activity, a timer, a child or a signal).
// The upsert cannot fail with the attributes setStatus sets; were it to,
// the status would stay as it was, which is no reason to fail the turn.
func (p *temporalPort) showRunning() {
	if !p.running.pending {
		return
	}
	p.running.pending = false
	_ = p.setStatus(domain.StatusRunning)
}

// watchLongTasks starts, once per run, the coroutine that shows a pending
// RUNNING when local activities outlast the workflow task that runs them:
// the SDK then heartbeats the task (completes it and starts another) and
// the history grows while the workflow waits. The upsert goes out with the
// next heartbeat, about 4 s later. The history a task starts with is the
// same on replay, so the coroutine upserts where it did.
func (p *temporalPort) watchLongTasks() {
	if p.running.watching {
		return
	}
	p.running.watching = true
	workflow.Go(p.ctx, func(ctx workflow.Context) {
		for {
			err := workflow.Await(ctx, func() bool {
				r := p.running
				return r.pending && r.inLocal && workflow.GetInfo(ctx).GetCurrentHistoryLength() > r.since
			})
			if err != nil {
				return // cancelled: the run's end records its status
			}
			p.showRunning()
		}
	})
}

// getLocal waits on a local activity's future, into out, letting
// watchLongTasks see the workflow task outlasted meanwhile.
func (p *temporalPort) getLocal(f workflow.Future, out any) error {
	p.running.inLocal, p.running.since = true, workflow.GetInfo(p.ctx).GetCurrentHistoryLength()
	defer func() { p.running.inLocal = false }()
	return f.Get(p.ctx, out)
}

// countStatus counts an execution that started (its first Begin) or
// ended, by kind and status, through the workflow's metrics handler,
// which records nothing while a run replays.
func (p *temporalPort) countStatus(in any, status domain.Status) {
	name := ""
	switch in := in.(type) {
	case engine.BeginInput:
		if in.Announce == event.NameStarted {
			name = "agentree.executions.started"
		}
	case engine.FinishInput:
		name = "agentree.executions.finished"
	}
	if name == "" {
		return
	}
	tags := map[string]string{"kind": workflow.GetInfo(p.ctx).WorkflowType.Name, "status": string(status)}
	workflow.GetMetricsHandler(p.ctx).WithTags(tags).Counter(name).Inc(1)
}
