package adapter

import (
	"encoding/json"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/event"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/engine"
)

// The types that cross the runtime boundary live in the engine, so
// clients need not import this package.
type (
	SegmentInput = engine.SegmentInput
	Result       = engine.Result
)

// SignalName is the one Temporal signal Agentree sends.
const SignalName = engine.SignalName

// segmentRunner runs one agent kind's segments.
type segmentRunner struct {
	agent agentsdk.Agent
	opts  *Options
}

// run is the workflow function registered under the agent's kind.
func (r *segmentRunner) run(ctx workflow.Context, in SegmentInput) (Result, error) {
	sigCh := workflow.GetSignalChannel(ctx, SignalName)
	wc := newWorkflowContext(ctx, r.opts, in)
	drain := func() {
		for {
			var s agentsdk.Signal
			if !sigCh.ReceiveAsync(&s) {
				return
			}
			wc.addSignal(s)
		}
	}
	drain()

	// The run's history budget is recorded once per run, so a worker
	// restarted with another budget still replays this run as it ran.
	var budget runBudget
	enc := workflow.SideEffect(ctx, func(workflow.Context) any { return runBudget{Events: r.opts.RunEvents, Bytes: r.opts.RunBytes} })
	if err := enc.Get(&budget); err != nil {
		return Result{}, err
	}

	announce := ""
	if in.Sequence == 0 && in.LeafID != "" && !in.Resumed {
		announce = event.NameStarted
	} else if in.Resumed {
		announce = event.NameResumed
	}
	for {
		if announce != "" || wc.leaf == nil {
			var begin BeginOutput
			if err := wc.local(wc.ops.Begin, BeginInput{OrgID: wc.in.OrgID, ExecutionID: wc.in.ExecutionID, LeafID: wc.in.LeafID, Announce: announce}, &begin); err != nil {
				return Result{}, err
			}
			if begin.Status.Terminal() {
				return Result{ExecutionID: in.ExecutionID, Status: string(begin.Status)}, nil
			}
			if begin.Status == entrystore.StatusCancelling {
				return r.cancelled(ctx, wc)
			}
			wc.cfg, wc.leaf, announce = begin.Config, begin.Leaf, ""
		}

		receivedBefore := wc.received
		outcome, err := r.agent.RunSegment(wc)
		if ctx.Err() != nil {
			return r.cancelled(ctx, wc)
		}
		if err != nil {
			return r.finish(wc, entrystore.StatusFailed, "error", err.Error())
		}
		drain()
		if b, _ := json.Marshal(wc.state); len(b) > agentsdk.MaxStateBytes {
			return r.finish(wc, entrystore.StatusFailed, "error",
				fmt.Sprintf("agent state is %d bytes, over the %d-byte limit: keep large data in entries", len(b), agentsdk.MaxStateBytes))
		}

		if outcome.Kind == agentsdk.OutcomeComplete {
			// A signal that arrived while the segment ran — or one stored
			// and acknowledged but not yet delivered — is acted on before
			// the execution completes: the agent runs again and sees it.
			if wc.received == receivedBefore {
				res, done, err := r.complete(wc, outcome.Reason)
				if done {
					return res, err
				}
			}
			outcome = agentsdk.Continue()
		}
		switch outcome.Kind {
		case agentsdk.OutcomeContinue, agentsdk.OutcomeWait:
			wait := outcome.Kind == agentsdk.OutcomeWait && !wc.hasAny(outcome.WaitFor)
			if err := r.checkpoint(wc, wait, outcome.Reason); err != nil {
				return Result{}, err
			}
			if wait {
				for !wc.hasAny(outcome.WaitFor) {
					sel := workflow.NewSelector(ctx)
					sel.AddReceive(sigCh, func(c workflow.ReceiveChannel, _ bool) {
						var s agentsdk.Signal
						c.Receive(ctx, &s)
						wc.addSignal(s)
					})
					sel.AddReceive(ctx.Done(), func(workflow.ReceiveChannel, bool) {})
					sel.Select(ctx)
					if ctx.Err() != nil {
						return r.cancelled(ctx, wc)
					}
				}
				drain()
				announce = event.NameResumed
			}
			if !budget.roomForAnother(ctx) {
				return Result{}, workflow.NewContinueAsNewError(ctx, r.agent.Kind(), wc.nextInput(wait))
			}
			wc.advance()
		case agentsdk.OutcomeFail:
			return r.finish(wc, entrystore.StatusFailed, "failed", outcome.Reason)
		default:
			return r.finish(wc, entrystore.StatusFailed, "error", fmt.Sprintf("agent %s returned unknown outcome %q", r.agent.Kind(), outcome.Kind))
		}
	}
}

// roomForAnother reports whether this run's history leaves room for another
// segment within the budget; if not, the run continues as new. Continuing
// as new at every checkpoint would keep runs smallest, but servers delay the
// first task of a run that follows one younger than
// history.workflowIdReuseMinimalInterval (1 s by default) — a second per
// model turn — so a run holds as many segments as its budget allows.
func (b runBudget) roomForAnother(ctx workflow.Context) bool {
	if b.Events <= 1 {
		return false
	}
	info := workflow.GetInfo(ctx)
	return info.GetCurrentHistoryLength() < b.Events && info.GetCurrentHistorySize() < b.Bytes
}

// runBudget is a run's history budget (Options.RunEvents, RunBytes).
type runBudget struct{ Events, Bytes int }

// checkpoint records the checkpoint that ends a segment; with wait it also
// marks the execution WAITING.
func (r *segmentRunner) checkpoint(wc *workflowContext, wait bool, reason string) error {
	if wc.leaf == nil {
		return temporal.NewNonRetryableApplicationError("nothing to checkpoint: the execution has no entries", ErrTypeInvalidInput, nil)
	}
	in := wc.checkpointInput()
	in.Wait, in.WaitReason = wait, reason
	return wc.local(wc.ops.Checkpoint, *in, nil)
}

// finalCheckpoint is the checkpoint an ending segment records with its
// terminal status, so the latest checkpoint's leaf is the execution's
// leaf and its last steps are counted; nil when the segment appended
// nothing since the last checkpoint.
func (wc *workflowContext) finalCheckpoint() *CheckpointInput {
	if wc.leaf == nil || wc.leaf.ID == wc.in.LeafID {
		return nil
	}
	return wc.checkpointInput()
}

// finish ends the execution with a terminal status.
func (r *segmentRunner) finish(wc *workflowContext, status entrystore.Status, stopReason, errText string) (Result, error) {
	leaf := ""
	if wc.leaf != nil {
		leaf = wc.leaf.ID
	}
	var out FinishOutput
	err := wc.local(wc.ops.Finish, FinishInput{
		OrgID: wc.in.OrgID, ExecutionID: wc.in.ExecutionID, LeafID: leaf,
		Status: status, StopReason: stopReason, Error: errText, Checkpoint: wc.finalCheckpoint(),
	}, &out)
	if err != nil {
		return Result{}, err
	}
	res := Result{ExecutionID: wc.in.ExecutionID, Status: string(status), StopReason: stopReason, Error: errText, LeafID: leaf, Text: out.Text}
	if status == entrystore.StatusFailed {
		return res, temporal.NewNonRetryableApplicationError(errText, "AgentFailed", nil, res)
	}
	return res, nil
}

// complete ends the execution COMPLETED unless the inbox holds signals the
// workflow has not received; then it adds them and reports not done.
func (r *segmentRunner) complete(wc *workflowContext, stopReason string) (Result, bool, error) {
	var out FinishOutput
	in := FinishInput{
		OrgID: wc.in.OrgID, ExecutionID: wc.in.ExecutionID, LeafID: wc.leafID(),
		Status: entrystore.StatusCompleted, StopReason: stopReason, Known: wc.pendingIDs(),
		Checkpoint: wc.finalCheckpoint(),
	}
	if err := wc.local(wc.ops.Finish, in, &out); err != nil {
		return Result{}, true, err
	}
	if len(out.Pending) > 0 {
		for _, s := range out.Pending {
			wc.addSignal(s)
		}
		return Result{}, false, nil
	}
	return Result{ExecutionID: wc.in.ExecutionID, Status: string(entrystore.StatusCompleted), StopReason: stopReason,
		LeafID: in.LeafID, Text: out.Text}, true, nil
}

// cancelled records CANCELLED on a context that outlives the cancellation
// and reports the run as cancelled to Temporal.
func (r *segmentRunner) cancelled(ctx workflow.Context, wc *workflowContext) (Result, error) {
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	wc.ctx = dctx
	if _, err := r.finish(wc, entrystore.StatusCancelled, "cancelled", ""); err != nil {
		return Result{}, err
	}
	return Result{ExecutionID: wc.in.ExecutionID, Status: string(entrystore.StatusCancelled)}, temporal.NewCanceledError()
}

// storeWriteTimeout bounds one attempt of a store write.
const storeWriteTimeout = 30 * time.Second

// forever stands for "no limit" where Temporal needs a duration.
const forever = 10 * 365 * 24 * time.Hour

// localOptions are the options of the workflow's store writes. A local
// activity's schedule-to-close timeout defaults to its start-to-close
// timeout, which would end the retries of a store write after 30 seconds
// of outage; it is OutageLimit instead (no limit by default). Retries back
// off to at most 5 seconds, under the workflow task timeout, so the SDK
// retries them in the worker while heartbeating the workflow task rather
// than through server timers.
func (o *Options) localOptions() workflow.LocalActivityOptions {
	limit := o.OutageLimit
	if limit <= 0 {
		limit = forever
	}
	return workflow.LocalActivityOptions{
		StartToCloseTimeout:    storeWriteTimeout,
		ScheduleToCloseTimeout: limit,
		RetryPolicy:            infraRetry(),
	}
}
