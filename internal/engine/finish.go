package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/event"
	"github.com/agentree/agentree/internal/domain"
)

// CheckpointReplacer is a Store that can rewrite its latest checkpoint
// (see Ops.Checkpoint); ErrNotFound when the latest has another sequence.
type CheckpointReplacer interface {
	ReplaceCheckpoint(ctx context.Context, c domain.Checkpoint) error
}

// replaceOrphan rewrites checkpoint prev, found at in's sequence with
// another leaf, when in's leaf extends prev's. That is a segment run
// again after the workflow task that first ran it was lost: Temporal
// never recorded prev, and this run took another way to the same
// sequence — most often a signal (an approval, a message) that had
// arrived by then and is now seen earlier. A leaf that does not extend
// prev's (a stale segment moving the execution back) stays refused.
func (o *Ops) replaceOrphan(ctx context.Context, in CheckpointInput, prev domain.Checkpoint, state, meta json.RawMessage) error {
	r, ok := o.Store.(CheckpointReplacer)
	if !ok || prev.LeafEntryID == "" || in.LeafID == "" {
		return errors.New("not an extension of the recorded checkpoint")
	}
	path, err := o.Store.Path(ctx, in.OrgID, in.LeafID)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(path, func(e agentsdk.Entry) bool { return e.ID == prev.LeafEntryID }) {
		return errors.New("not an extension of the recorded checkpoint")
	}
	return r.ReplaceCheckpoint(ctx, domain.Checkpoint{OrgID: in.OrgID, ExecutionID: in.ExecutionID, Sequence: in.Sequence,
		LeafEntryID: in.LeafID, State: state, Metadata: meta})
}

// Checkpoint inserts the checkpoint row (a retry that finds its own row is
// fine) and publishes agent.checkpoint, and agent.waiting when waiting.
func (o *Ops) Checkpoint(ctx context.Context, in CheckpointInput) error {
	// The agent's State alone: the fields seed 000 also names
	// (usageByModel, totalUsage, turnIndex) repeat its usage and turn, and
	// the gateway derives them when it serves a checkpoint.
	state, err := json.Marshal(in.State)
	if err != nil {
		return fmt.Errorf("engine: checkpoint: %w", err)
	}
	// A turn's checkpoint, the common one, records no reason: it reads as
	// {"reason":"turn"} (gateway).
	var meta json.RawMessage
	if in.Wait {
		meta = WaitMeta(in.WaitReason, in.WakeAt)
	}
	// The workspace first: a checkpoint recorded is a snapshot recorded,
	// and a retry that finds the row finds the snapshot too.
	if o.Workspaces != nil && in.LeafID != "" {
		if err := o.Workspaces.Capture(ctx, in.OrgID, in.ExecutionID, in.LeafID); err != nil {
			return fmt.Errorf("engine: checkpoint %d: %w", in.Sequence, err)
		}
	}
	// Where the store can (Announcer), each write commits with its
	// event: the checkpoint with agent.checkpoint, the wait with
	// agent.waiting, both in one transaction when the checkpoint is new.
	// Otherwise both events go out in one write after them.
	a, announces := o.Store.(Announcer)
	var evs []event.Event
	cp := domain.Checkpoint{
		OrgID: in.OrgID, ExecutionID: in.ExecutionID, Sequence: in.Sequence,
		LeafEntryID: in.LeafID, State: state, Metadata: meta, Steps: in.Steps,
	}
	recorded := event.Checkpoint{AgentExecutionID: in.ExecutionID, Sequence: in.Sequence}
	switch {
	case announces && in.Wait:
		var moved bool
		moved, err = a.AppendCheckpointAndWait(ctx, cp, []event.Event{recorded},
			[]event.Event{o.waitingEvent(ctx, in, domain.StatusWaiting)})
		if err == nil && moved {
			return nil
		}
	case announces:
		err = a.AppendCheckpointAnnounced(ctx, cp, []event.Event{recorded})
	default:
		err = o.Store.AppendCheckpoint(ctx, cp)
	}
	switch {
	case errors.Is(err, domain.ErrConflict):
		prev, gerr := o.Store.GetCheckpoint(ctx, in.OrgID, in.ExecutionID, in.Sequence)
		if gerr != nil {
			return fmt.Errorf("engine: checkpoint %d: %w", in.Sequence, gerr)
		}
		if prev.LeafEntryID != in.LeafID {
			if rerr := o.replaceOrphan(ctx, in, prev, state, meta); rerr != nil {
				return fmt.Errorf("engine: checkpoint %d: %w (%w)", in.Sequence, err, rerr)
			}
		}
		// Our own row from an earlier attempt — most often a local
		// activity run again because the workflow task that ran it was
		// lost — which announced it already: a second agent.checkpoint
		// would reach clients twice.
	case err != nil:
		return fmt.Errorf("engine: checkpoint %d: %w", in.Sequence, err)
	case !announces:
		evs = append(evs, recorded)
	}
	if in.Wait {
		ex, announced, err := o.transition(ctx, in.OrgID, in.ExecutionID, domain.Transition{To: domain.StatusWaiting},
			func(status domain.Status) []event.Event { return []event.Event{o.waitingEvent(ctx, in, status)} })
		if err != nil {
			// The checkpoint is stored: its event goes out now, as a retry
			// finds the row and announces nothing.
			o.publishBatch(ctx, in.OrgID, in.ExecutionID, evs)
			return fmt.Errorf("engine: wait: %w", err)
		}
		if !announced {
			evs = append(evs, o.waitingEvent(ctx, in, ex.Status))
		}
	}
	// One write for the checkpoint's event and the wait's.
	o.publishBatch(ctx, in.OrgID, in.ExecutionID, evs)
	return nil
}

// recordedPast reports whether err refused an ending's checkpoint
// because the store holds a later one: a workflow task that ran further
// (its local calls stored their entries and checkpoint) was lost, and its
// replay met a cancel that arrived meanwhile and ends the execution
// before redoing that work. The execution ends where the store's latest
// checkpoint is; failing the ending instead left the workflow FAILED and
// the execution CANCELLING for good (make soak, a cancel around a
// Temporal restart).
func (o *Ops) recordedPast(ctx context.Context, in FinishInput, err error) bool {
	if !errors.Is(err, domain.ErrConflict) {
		return false
	}
	ex, gerr := o.Store.Execution(ctx, in.OrgID, in.ExecutionID)
	return gerr == nil && ex.CheckpointSeq > in.Checkpoint.Sequence
}

// FinishInput ends an execution.
type FinishInput struct {
	OrgID, ExecutionID, LeafID string
	Status                     domain.Status
	StopReason, Error          string
	// Known are the signals the segment holds unconsumed; a completion
	// goes ahead despite them (the agent has seen them), but not despite
	// any other unconsumed signal in the inbox.
	Known []string `json:",omitempty"`
	// Checkpoint, when set, is recorded with the terminal status (after
	// a completion the inbox allowed, before any other end), so an ended
	// execution's latest checkpoint is at its leaf.
	Checkpoint *CheckpointInput `json:",omitempty"`
}

// FinishOutput is the execution's result.
type FinishOutput struct {
	Text string
	// Pending, when set, are acknowledged signals the segment has not
	// received yet: the execution did not complete, and the agent must
	// act on them first.
	Pending []agentsdk.Signal `json:",omitempty"`
}

// Finish moves the execution to its terminal status; a completed one's
// output is its leaf's text. A completion is refused while the inbox holds
// a signal the segment does not know of (a message acknowledged while the
// final answer was written): Pending lists them and nothing changes.
func (o *Ops) Finish(ctx context.Context, in FinishInput) (FinishOutput, error) {
	var out FinishOutput
	tr := domain.Transition{To: in.Status, Error: in.Error, StopReason: in.StopReason}
	var ex domain.Execution
	var err error
	if in.Status == domain.StatusCompleted {
		if in.LeafID != "" {
			e, err := o.Store.GetEntry(ctx, in.OrgID, in.LeafID)
			if err != nil {
				return out, fmt.Errorf("engine: finish: %w", err)
			}
			if m, err := e.Message(); err == nil {
				out.Text = m.Text()
			}
			tr.Output, _ = json.Marshal(map[string]string{"text": out.Text, "entryId": in.LeafID})
		}
		var pending []agentsdk.Signal
		// The last step counts with the completion, in its transaction: a
		// reader that sees COMPLETED sees every step.
		var cp *CheckpointInput
		if in.Checkpoint != nil {
			c := *in.Checkpoint
			tr.Steps, c.Steps = c.Steps, 0
			cp = &c
		}
		ex, pending, err = o.Store.CompleteUnlessSignalled(ctx, in.OrgID, in.ExecutionID, in.LeafID, in.Known, tr)
		if err == nil && len(pending) > 0 {
			return FinishOutput{Pending: pending}, nil
		}
		// Only now: a completion the inbox refused goes on, and its next
		// segment's checkpoint takes this sequence.
		if err == nil && cp != nil {
			err = o.Checkpoint(ctx, *cp)
		}
	} else {
		if in.Checkpoint != nil {
			if err := o.Checkpoint(ctx, *in.Checkpoint); err != nil && !o.recordedPast(ctx, in, err) {
				return out, err
			}
		}
		if tr.To.Terminal() {
			// Before the status: whoever sees the execution ended sees
			// no call still waiting for a decision (seed 002's rule).
			if err := o.Store.CancelAwaitingToolCalls(ctx, in.OrgID, in.ExecutionID); err != nil {
				return out, fmt.Errorf("engine: finish: %w", err)
			}
		}
		// The ending's event commits with it where the store can
		// (Announcer): a stream that sees the execution ended finds its
		// event stored, rather than waiting a grace for it. A pause's
		// event names the steps the move counts, known only after it.
		var announced bool
		ex, announced, err = o.transition(ctx, in.OrgID, in.ExecutionID, tr, func(status domain.Status) []event.Event {
			if status == domain.StatusPaused || tr.StopReason == "" || status == domain.StatusFailed && tr.Error == "" {
				return nil
			}
			return endedEvents(in.ExecutionID, domain.Execution{Status: status, StopReason: tr.StopReason, Error: tr.Error})
		})
		if err == nil && announced {
			return out, o.cancelAwaiting(ctx, in, ex)
		}
	}
	if err != nil {
		return out, fmt.Errorf("engine: finish: %w", err)
	}
	if err := o.cancelAwaiting(ctx, in, ex); err != nil {
		return out, err
	}
	o.publishBatch(ctx, in.OrgID, in.ExecutionID, endedEvents(in.ExecutionID, ex))
	return out, nil
}

// cancelAwaiting cancels the calls of an ended execution still waiting
// for a decision.
func (o *Ops) cancelAwaiting(ctx context.Context, in FinishInput, ex domain.Execution) error {
	if !ex.Status.Terminal() {
		return nil
	}
	if err := o.Store.CancelAwaitingToolCalls(ctx, in.OrgID, in.ExecutionID); err != nil {
		return fmt.Errorf("engine: finish: %w", err)
	}
	return nil
}

// endedEvents announce the end (or pause) ex reached: none for a live
// status.
func endedEvents(executionID string, ex domain.Execution) []event.Event {
	switch st := string(ex.Status); ex.Status {
	case domain.StatusCompleted:
		return []event.Event{event.Completed{AgentExecutionID: executionID, Status: st, StopReason: ex.StopReason}}
	case domain.StatusFailed:
		return []event.Event{event.Failed{AgentExecutionID: executionID, Status: st, StopReason: ex.StopReason, Error: ex.Error}}
	case domain.StatusCancelled:
		return []event.Event{event.Cancelled{AgentExecutionID: executionID, Status: st, StopReason: ex.StopReason}}
	case domain.StatusPaused:
		return []event.Event{event.Paused{AgentExecutionID: executionID, Status: st, StopReason: ex.StopReason, Steps: ex.StepCount}}
	}
	return nil
}
