package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/event"
	"github.com/agentree/agentree/internal/domain"
)

// ErrNothingToCheckpoint: a segment ended without any entry to point at.
var ErrNothingToCheckpoint = fmt.Errorf("%w: nothing to checkpoint: the execution has no entries", agentsdk.ErrInvalidInput)

// Run runs an execution's segments from in: it begins each segment,
// calls the agent, and turns the outcome into a checkpoint, a wait for
// signals or an end. It returns the execution's result when it ended
// (Status COMPLETED, FAILED or CANCELLED, or the status it found ended),
// or, when the run holds no more segments (Port.RoomForAnother), the next
// segment's input to continue as new with. An error is a store operation
// that failed for good.
func Run(p Port, agent agentsdk.Agent, in SegmentInput) (Result, *SegmentInput, error) {
	r := &runner{port: p, agent: agent, seg: newSegment(p, in)}
	return r.run(in)
}

type runner struct {
	port  Port
	agent agentsdk.Agent
	seg   *segment
}

func (r *runner) run(in SegmentInput) (Result, *SegmentInput, error) {
	seg := r.seg
	seg.drain()
	if in.Waiting != nil && !seg.ends(in.WaitFor, in.WakeAt) {
		// The run before this one checkpointed and ended as the execution
		// began to wait: mark it WAITING (its checkpoint, recorded
		// already, is not announced again) and wait, then resume as that
		// run would have.
		if err := r.port.Local(OpCheckpoint, *in.Waiting, nil); err != nil {
			return Result{}, nil, err
		}
		ok, err := r.await(in.WaitFor, in.WakeAt, in.Waiting.Approval)
		if err != nil {
			return Result{}, nil, err
		}
		if !ok {
			return r.cancelled()
		}
	}
	announce := ""
	if in.Sequence == 0 && in.LeafID != "" && !in.Resumed {
		announce = event.NameStarted
	} else if in.Resumed {
		announce = event.NameResumed
	}
	for {
		if announce != "" || seg.leaf == nil {
			var begin BeginOutput
			if err := r.port.Local(OpBegin, BeginInput{OrgID: seg.in.OrgID, ExecutionID: seg.in.ExecutionID, LeafID: seg.in.LeafID, Announce: announce,
				Sequence: seg.in.Sequence, Leaf: seg.leaf}, &begin); err != nil {
				return Result{}, nil, err
			}
			if begin.Status.Terminal() {
				if begin.Ended != nil {
					return *begin.Ended, nil, nil
				}
				return Result{ExecutionID: in.ExecutionID, Status: string(begin.Status)}, nil, nil
			}
			if begin.Status == domain.StatusCancelling {
				return r.cancelled()
			}
			seg.cfg, seg.leaf, announce = begin.Config, begin.Leaf, ""
		}

		receivedBefore := seg.received
		outcome, err := r.agent.RunSegment(seg)
		if r.port.Cancelled() {
			return r.cancelled()
		}
		if errors.Is(err, agentsdk.ErrBudgetSpent) {
			// The model call was refused before it was made: nothing of
			// the conversation is lost, and a resume continues from this
			// leaf once the organization's quota allows.
			return r.finish(domain.StatusPaused, agentsdk.StopBudget, agentsdk.BudgetReason(err))
		}
		if err != nil {
			return r.finish(domain.StatusFailed, "error", tenantText(r.port.Logger(), in.ExecutionID, "execution", err.Error(), err))
		}
		seg.drain()
		outcome = seg.withDeadline(outcome)
		if b, _ := json.Marshal(seg.state); len(b) > agentsdk.MaxStateBytes {
			return r.finish(domain.StatusFailed, "error",
				fmt.Sprintf("agent state is %d bytes, over the %d-byte limit: keep large data in entries", len(b), agentsdk.MaxStateBytes))
		}

		if outcome.Kind == agentsdk.OutcomeComplete {
			// A signal that arrived while the segment ran — or one stored
			// and acknowledged but not yet delivered — is acted on before
			// the execution completes: the agent runs again and sees it.
			if seg.received == receivedBefore {
				res, done, err := r.complete(outcome.Reason)
				if done || err != nil {
					return res, nil, err
				}
			}
			outcome = agentsdk.Continue()
		}
		switch outcome.Kind {
		case agentsdk.OutcomeContinue, agentsdk.OutcomeWait:
			// A signal that came during the segment's last step may end
			// its wait before it begins.
			seg.drain()
			wait := outcome.Kind == agentsdk.OutcomeWait && !seg.ends(outcome.WaitFor, outcome.WakeAt)
			if wait && !r.port.RoomForAnother(true) {
				// The run ends here, and the next one marks the execution
				// WAITING and waits: a client that answers at once cannot
				// race the run's end, and the new run starts while
				// nobody waits on it.
				if err := r.checkpoint(false, "", nil); err != nil {
					return Result{}, nil, err
				}
				next := seg.handOff(true)
				next.Waiting = r.checkpointInput(true, outcome.Reason, outcome.WakeAt)
				next.Waiting.Steps = 0 // counted by the checkpoint just recorded
				next.WaitFor, next.WakeAt = outcome.WaitFor, outcome.WakeAt
				return Result{}, &next, nil
			}
			var wakeAt *time.Time
			if wait {
				wakeAt = outcome.WakeAt
			}
			if err := r.checkpoint(wait, outcome.Reason, wakeAt); err != nil {
				return Result{}, nil, err
			}
			if wait {
				ok, err := r.await(outcome.WaitFor, wakeAt, seg.approval)
				if err != nil {
					return Result{}, nil, err
				}
				if !ok {
					return r.cancelled()
				}
				announce = event.NameResumed
			}
			if !r.port.RoomForAnother(false) {
				next := seg.handOff(wait)
				return Result{}, &next, nil
			}
			seg.advance()
		case agentsdk.OutcomeFail:
			return r.finish(domain.StatusFailed, "failed", outcome.Reason)
		case agentsdk.OutcomePause:
			return r.finish(domain.StatusPaused, outcome.Reason, "")
		default:
			return r.finish(domain.StatusFailed, "error", fmt.Sprintf("agent %s returned unknown outcome %q", r.agent.Kind(), outcome.Kind))
		}
	}
}

// await waits until a signal named in names (any, when empty) is held,
// or until wakeAt when set (then an empty names means the timer alone),
// and reports false when the execution was cancelled instead. When the
// timer is the deadline of approval, its expiry's decisions are added.
func (r *runner) await(names []string, wakeAt *time.Time, approval *PendingApproval) (bool, error) {
	seg := r.seg
	for !seg.ends(names, wakeAt) {
		if wakeAt == nil {
			s, ok := r.port.Await()
			if !ok {
				return false, nil
			}
			seg.addSignal(s)
			continue
		}
		s, fired, ok := r.port.AwaitUntil(*wakeAt)
		if !ok {
			return false, nil
		}
		if fired {
			n, err := r.expire(approval)
			if err != nil {
				return false, err
			}
			if n == 0 && approval != nil && approval.Deadline != nil {
				// Every call has a person's decision on its way: wait
				// for it, the timer spent.
				wakeAt = nil
				continue
			}
			break
		}
		seg.addSignal(s)
	}
	seg.drain()
	return true, nil
}

// checkpoint records the checkpoint that ends a segment; with wait it also
// marks the execution WAITING (until wakeAt, when set).
func (r *runner) checkpoint(wait bool, reason string, wakeAt *time.Time) error {
	if r.seg.leaf == nil {
		return ErrNothingToCheckpoint
	}
	return r.port.Local(OpCheckpoint, *r.checkpointInput(wait, reason, wakeAt), nil)
}

// checkpointInput is the checkpoint that ends the segment; with wait it
// marks the execution WAITING for reason, until wakeAt when set.
func (r *runner) checkpointInput(wait bool, reason string, wakeAt *time.Time) *CheckpointInput {
	in := r.seg.checkpointInput()
	in.Wait, in.WaitReason, in.WakeAt = wait, reason, wakeAt
	return in
}

// finish ends the execution with a terminal status.
func (r *runner) finish(status domain.Status, stopReason, errText string) (Result, *SegmentInput, error) {
	seg := r.seg
	var out FinishOutput
	err := r.port.Local(OpFinish, FinishInput{
		OrgID: seg.in.OrgID, ExecutionID: seg.in.ExecutionID, LeafID: seg.leafID(),
		Status: status, StopReason: stopReason, Error: errText, Checkpoint: seg.finalCheckpoint(),
	}, &out)
	if err != nil {
		return Result{}, nil, err
	}
	return Result{ExecutionID: seg.in.ExecutionID, Status: string(status), StopReason: stopReason, Error: errText,
		LeafID: seg.leafID(), Text: out.Text, Usage: seg.state.Usage}, nil, nil
}

// complete ends the execution COMPLETED unless the inbox holds signals the
// segment has not received; then it adds them and reports not done.
func (r *runner) complete(stopReason string) (Result, bool, error) {
	seg := r.seg
	var out FinishOutput
	in := FinishInput{
		OrgID: seg.in.OrgID, ExecutionID: seg.in.ExecutionID, LeafID: seg.leafID(),
		Status: domain.StatusCompleted, StopReason: stopReason, Known: seg.pendingIDs(),
		Checkpoint: seg.finalCheckpoint(),
	}
	if err := r.port.Local(OpFinish, in, &out); err != nil {
		return Result{}, true, err
	}
	if len(out.Pending) > 0 {
		for _, s := range out.Pending {
			seg.addSignal(s)
		}
		return Result{}, false, nil
	}
	return Result{ExecutionID: seg.in.ExecutionID, Status: string(domain.StatusCompleted), StopReason: stopReason,
		LeafID: in.LeafID, Text: out.Text, Usage: seg.state.Usage}, true, nil
}

// cancelled records CANCELLED, its store operations detached from the
// cancellation.
func (r *runner) cancelled() (Result, *SegmentInput, error) {
	r.port.Detach()
	if _, _, err := r.finish(domain.StatusCancelled, "cancelled", ""); err != nil {
		return Result{}, nil, err
	}
	return Result{ExecutionID: r.seg.in.ExecutionID, Status: string(domain.StatusCancelled)}, nil, nil
}
