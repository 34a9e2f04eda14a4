package adapter

import (
	"encoding/json"
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/internal/step"
)

// callModelLocal makes a model call's first attempt as a local activity:
// it runs in the workflow task that asked for it, with no task-queue round
// trip before or after, and the next step follows in the same task. The
// call is keyed (step.CallModel finds an answer already written), so a
// worker that dies mid-call costs its replacement no second answer; the
// task's timeout (5 s) is then how soon another worker retries it, as the
// activity's heartbeat timeout would.
//
// It is called by its registered name, as startTool's local tool calls
// are: a worker.WorkflowReplayer registers no activities, so a local
// activity given as a function would be named there after the function
// ("CallModel"), not as the worker recorded it, and a team's replay test
// would fail as nondeterministic (TestReplayerReplaysLocalCalls).
//
// done is false when the activity's attempts should take over (see
// settleLocal); an answer, a final error or a cancellation is done.
func (p *temporalPort) callModelLocal(in *step.ModelInput) (res agentsdk.ModelResult, done bool, err error) {
	lctx := workflow.WithLocalActivityOptions(p.ctx, p.opts.localModelOptions())
	err = p.getLocal(workflow.ExecuteLocalActivity(lctx, CallModelActivity, *in), &res)
	p.noteMarker(res)
	if err == nil && len(res.Entry.ToolCalls) == 0 {
		p.commit()
	}
	if isErrType(err, ErrTypeCancelRequested) {
		cancelled, err := p.awaitCancel()
		return res, cancelled, err
	}
	done, err = p.settleLocal(err, ErrTypeModel, &in.Failures)
	return res, done, err
}

// settleLocal decides what follows a first attempt run as a local
// activity that ended with err. done is false when the activity's attempts
// should take over: after a retryable failure of the call itself (of
// errType: counted in *failures, past its delay), or a store or worker
// failure (a timeout, a panic). No error, a final error or a cancellation
// is done.
func (p *temporalPort) settleLocal(err error, errType string, failures *int32) (done bool, _ error) {
	if err == nil || p.ctx.Err() != nil {
		return true, err
	}
	var ae *temporal.ApplicationError
	switch {
	case !errors.As(err, &ae):
		// A timeout or a panic: the activity tries again.
		return false, nil
	case ae.NonRetryable():
		return true, err
	case ae.Type() == errType:
		*failures = 1
		if d := ae.NextRetryDelay(); d > 0 {
			p.showRunning()
			if err := workflow.Sleep(p.ctx, d); err != nil {
				return true, err
			}
		}
	}
	return false, nil
}

// awaitCancel follows a local call that stopped because a client asked
// to cancel its execution (cancelWatch): the workflow's own cancel request
// is on its way — the gateway asks Temporal right after it marks the
// execution — and arrives with the next workflow task. It reports whether
// it came (err is then the cancellation). One that does not come within
// cancelArrival (a gateway that died between the two) leaves the call to
// the activity's attempts, as any unsettled first attempt.
func (p *temporalPort) awaitCancel() (cancelled bool, err error) {
	_, err = workflow.AwaitWithTimeout(p.ctx, cancelArrival, func() bool { return p.ctx.Err() != nil })
	if p.ctx.Err() == nil {
		return false, nil
	}
	if err == nil {
		err = temporal.NewCanceledError()
	}
	return true, err
}

// cancelArrival is how long a call stopped for a cancellation waits for
// the workflow's cancel request.
const cancelArrival = 30 * time.Second

// startTool starts a tool call of the activity act: as a local activity
// when its tool runs locally (step.ToolInput.Local), otherwise as an
// activity.
func (p *temporalPort) startTool(act string, in step.ToolInput) workflow.Future {
	if in.Local {
		return workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(p.ctx, p.opts.localToolOptions()), act, in)
	}
	p.showRunning()
	return workflow.ExecuteActivity(workflow.WithActivityOptions(p.ctx, p.opts.toolActivityOptions()), act, in)
}

// toolResult waits for a tool call startTool started, into out. A local
// first attempt that did not settle the call (settleLocal) is retried as
// the activity act.
func (p *temporalPort) toolResult(f workflow.Future, act string, in step.ToolInput, out any) error {
	if !in.Local {
		return f.Get(p.ctx, out)
	}
	err := p.getLocal(f, out)
	p.noteMarker(out)
	if isErrType(err, ErrTypeCancelRequested) {
		if cancelled, err := p.awaitCancel(); cancelled {
			return err
		}
		err = nil
	}
	done, err := p.settleLocal(err, ErrTypeTool, &in.Failures)
	if done {
		return err
	}
	in.Local = false
	return p.startTool(act, in).Get(p.ctx, out)
}

// commit ended the workflow task after an answer without tool calls, so
// Temporal recorded the call before the turn ended on it, in runs that
// recorded commitChange below version 2; it does nothing in newer runs.
//
// Why it is no longer needed: what follows such an answer — completing
// the execution, or waiting — depends on the signals delivered so far,
// and a task that was lost (a worker killed) re-runs with the signals
// that arrived since, from its start. The boundary was added for that,
// before the re-run learned to go the lost task's way: a message seen
// early is deferred to where the lost task stopped
// (engine.ConsumeOutput.Deferred); the engine does not wait while it holds
// a message the wait is for, and the react agent answers a held message
// rather than waiting or completing; a repeated checkpoint is a no-op; and
// the store refuses a message to an execution it has completed (a
// completion with a message in the inbox the run has not seen does not go
// ahead). The boundary only moved where a re-run began — a re-run of the
// task that began the turn sees the same early signals either way — at
// the cost of a workflow task and two events per turn, a third of a local
// turn's server work (make chaos -local-activities, seeds 1, 2, 3 and 5:
// no fault without it).
//
// Version 1 was a signal the workflow sends itself: Temporal refuses it
// at once (a workflow cannot signal itself), and the failure wakes a new
// workflow task. Before it (the default version) a one-millisecond timer,
// which Temporal fires no sooner than history.timerProcessorMaxTimeShift
// (1 s by default) after the timer queue last looked. Should a server
// ever deliver the signal, its channel is never read.
func (p *temporalPort) commit() {
	// A cancellation during either is the engine's to see.
	switch version(p.ctx, p.budget.Changes, commitChange, 2) {
	case workflow.DefaultVersion:
		_ = workflow.Sleep(p.ctx, time.Millisecond)
	case 1:
		self := workflow.GetInfo(p.ctx).WorkflowExecution.ID
		_ = workflow.SignalExternalWorkflow(p.ctx, self, "", commitSignal, nil).Get(p.ctx, nil)
	}
}

// commitChange is the change that ended a workflow task with a refused
// signal to itself rather than a timer (version 1), then with nothing
// (version 2; commit).
const commitChange = "agentree-commit-signal"

// commitSignal is the name of the signal commit sends.
const commitSignal = "agentree.commit"

// markerOverhead is about what a local activity's marker event holds
// besides its result: its type, IDs and times.
const markerOverhead = 300

// pendingMarkers are the markers of the workflow task in progress: local
// activities, recorded when the task completes. The history length and
// size the workflow sees are those of the task's start, so a task that
// runs many of them (a model call and its tool calls, all local) would
// otherwise overrun the budget unseen.
type pendingMarkers struct{ at, events, bytes int }

// noteMarker counts a local activity's marker, its result out.
func (p *temporalPort) noteMarker(out any) {
	if !p.budget.Markers {
		return
	}
	if n := workflow.GetInfo(p.ctx).GetCurrentHistoryLength(); n != p.pending.at {
		p.pending = pendingMarkers{at: n}
	}
	b, _ := json.Marshal(out)
	p.pending.events++
	p.pending.bytes += len(b) + markerOverhead
}

// historyNow is the run's history length and size, with the markers of
// the task in progress when the run counts them.
func (p *temporalPort) historyNow() (events, bytes int) {
	info := workflow.GetInfo(p.ctx)
	events, bytes = info.GetCurrentHistoryLength(), info.GetCurrentHistorySize()
	if p.budget.Markers && p.pending.at == events {
		events, bytes = events+p.pending.events, bytes+p.pending.bytes
	}
	return events, bytes
}
