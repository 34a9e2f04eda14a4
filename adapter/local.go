package adapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/event"
	"github.com/agentree/agentree/agentsdk/step"
	"github.com/agentree/agentree/entrystore"
)

// storeOps are the workflow's store writes, run as local activities: no
// task-queue round trip, recorded as markers, repeat-safe.
type storeOps struct {
	es *entrystore.Store
}

// BeginInput starts a segment.
type BeginInput struct {
	OrgID, ExecutionID, LeafID string
	// Announce is the lifecycle event to publish with the move to RUNNING
	// (agent.started, agent.resumed), or "" for a plain segment.
	Announce string
}

// BeginOutput is what a segment starts from.
type BeginOutput struct {
	Config agentsdk.Config
	Leaf   *agentsdk.EntryRef
	Status entrystore.Status
}

// Begin loads the config and the leaf and, when announced, marks the
// execution RUNNING.
func (o *storeOps) Begin(ctx context.Context, in BeginInput) (BeginOutput, error) {
	out, err := o.begin(ctx, in)
	return out, storeError(err)
}

func (o *storeOps) begin(ctx context.Context, in BeginInput) (BeginOutput, error) {
	ex, err := o.es.GetExecutionSettings(ctx, in.OrgID, in.ExecutionID)
	if err != nil {
		return BeginOutput{}, fmt.Errorf("adapter: begin: %w", err)
	}
	cfg, err := decodeConfig(ex.Config)
	if err != nil {
		return BeginOutput{}, err
	}
	// The system prompt is the model activity's business; keeping it out
	// of workflow code keeps it out of history.
	cfg.SystemPrompt = ""
	out := BeginOutput{Config: cfg, Status: ex.Status}
	if in.LeafID != "" {
		e, err := o.es.GetEntry(ctx, in.OrgID, in.LeafID)
		if err != nil {
			return BeginOutput{}, fmt.Errorf("adapter: begin: leaf: %w", err)
		}
		ref, err := step.Ref(toSDKEntry(e))
		if err != nil {
			return BeginOutput{}, err
		}
		out.Leaf = &ref
	}
	if in.Announce != "" && !ex.Status.Terminal() && ex.Status != entrystore.StatusCancelling {
		running, err := o.es.Transition(ctx, in.OrgID, in.ExecutionID, entrystore.Transition{To: entrystore.StatusRunning})
		if err != nil {
			return BeginOutput{}, fmt.Errorf("adapter: begin: %w", err)
		}
		out.Status = running.Status
		var ev event.Event = event.Started{AgentExecutionID: in.ExecutionID, Status: string(running.Status)}
		if in.Announce == event.NameResumed {
			ev = event.Resumed{AgentExecutionID: in.ExecutionID, Status: string(running.Status)}
		}
		o.publish(ctx, in.OrgID, in.ExecutionID, ev)
	}
	return out, nil
}

func (o *storeOps) publish(ctx context.Context, org, exec string, ev event.Event) {
	b, _ := json.Marshal(ev)
	// Live events are best effort; the execution row is the record.
	_, _ = o.es.AppendStreamEvent(ctx, org, exec, ev.Name(), b)
}

// AppendInput appends one entry.
type AppendInput struct {
	OrgID, ExecutionID, ParentID, Key string
	Entry                             agentsdk.NewEntry
}

func newEntryContent(e agentsdk.NewEntry) (json.RawMessage, agentsdk.Role, error) {
	if e.Message != nil {
		b, err := json.Marshal(e.Message)
		return b, e.Message.Role, err
	}
	if len(e.Content) == 0 {
		return json.RawMessage(`{}`), "", nil
	}
	return e.Content, "", nil
}

func (in AppendInput) storeEntry() (entrystore.Entry, error) {
	content, role, err := newEntryContent(in.Entry)
	if err != nil {
		return entrystore.Entry{}, fmt.Errorf("adapter: encode entry: %w", err)
	}
	typ := in.Entry.Type
	if typ == "" {
		typ = agentsdk.EntryMessage
	}
	return entrystore.Entry{
		OrgID: in.OrgID, ExecutionID: in.ExecutionID, ParentID: in.ParentID,
		Type: string(typ), Role: string(role), Content: content,
		TurnID: in.Entry.TurnID, Metadata: in.Entry.Metadata, IdempotencyKey: in.Key,
	}, nil
}

// Append appends an entry (repeat-safe by its key).
func (o *storeOps) Append(ctx context.Context, in AppendInput) (agentsdk.EntryRef, error) {
	e, err := in.storeEntry()
	if err != nil {
		return agentsdk.EntryRef{}, err
	}
	got, _, err := o.es.AppendEntry(ctx, e)
	if err != nil {
		return agentsdk.EntryRef{}, storeError(fmt.Errorf("adapter: append: %w", err))
	}
	return step.Ref(toSDKEntry(got))
}

// ConsumeInput turns a signal into an entry.
type ConsumeInput struct {
	AppendInput
	SignalID string
}

// ConsumeSignal appends the signal's entry and marks it consumed in one
// transaction. A zero entry takes the signal's value as a UserMessage.
func (o *storeOps) ConsumeSignal(ctx context.Context, in ConsumeInput) (agentsdk.EntryRef, error) {
	if in.Entry.Message == nil && len(in.Entry.Content) == 0 {
		sig, err := o.es.GetSignal(ctx, in.OrgID, in.SignalID)
		if err != nil {
			return agentsdk.EntryRef{}, storeError(fmt.Errorf("adapter: consume signal: %w", err))
		}
		var um agentsdk.UserMessage
		if err := json.Unmarshal(sig.Value, &um); err != nil {
			return agentsdk.EntryRef{}, fmt.Errorf("%w: signal %s value is not a user message: %v", agentsdk.ErrInvalidInput, in.SignalID, err)
		}
		msg := agentsdk.TextMessage(agentsdk.RoleUser, um.Text)
		in.Entry = agentsdk.NewEntry{Type: agentsdk.EntryMessage, Message: &msg}
	}
	e, err := in.storeEntry()
	if err != nil {
		return agentsdk.EntryRef{}, err
	}
	got, err := o.es.ConsumeSignal(ctx, in.OrgID, in.SignalID, e)
	if errors.Is(err, entrystore.ErrSignalConsumed) {
		// A redelivery of a signal consumed before (in this run or an
		// earlier one): the zero ref tells the workflow to ignore it.
		return agentsdk.EntryRef{}, nil
	}
	if err != nil {
		return agentsdk.EntryRef{}, storeError(fmt.Errorf("adapter: consume signal: %w", err))
	}
	return step.Ref(toSDKEntry(got))
}

// SignalValueInput names an inbox row.
type SignalValueInput struct{ OrgID, SignalID string }

// SignalValue loads a signal's value from the inbox.
func (o *storeOps) SignalValue(ctx context.Context, in SignalValueInput) (json.RawMessage, error) {
	s, err := o.es.GetSignal(ctx, in.OrgID, in.SignalID)
	if err != nil {
		return nil, storeError(fmt.Errorf("adapter: signal value: %w", err))
	}
	return s.Value, nil
}

// CheckpointInput records a checkpoint.
type CheckpointInput struct {
	OrgID, ExecutionID, LeafID string
	Sequence                   int
	State                      agentsdk.State
	Steps                      int // steps done in this segment
	// Wait, when set, also marks the execution WAITING for WaitReason.
	Wait       bool
	WaitReason string
}

// Checkpoint inserts the checkpoint row (a retry that finds its own row is
// fine) and publishes agent.checkpoint, and agent.waiting when waiting.
func (o *storeOps) Checkpoint(ctx context.Context, in CheckpointInput) error {
	return storeError(o.checkpoint(ctx, in))
}

func (o *storeOps) checkpoint(ctx context.Context, in CheckpointInput) error {
	state, err := json.Marshal(in.State)
	if err != nil {
		return fmt.Errorf("adapter: checkpoint: %w", err)
	}
	meta, _ := json.Marshal(map[string]any{"reason": map[bool]string{true: "wait", false: "turn"}[in.Wait]})
	_, err = o.es.AppendCheckpoint(ctx, entrystore.Checkpoint{
		OrgID: in.OrgID, ExecutionID: in.ExecutionID, Sequence: in.Sequence,
		LeafEntryID: in.LeafID, State: state, Metadata: meta,
	})
	if errors.Is(err, entrystore.ErrConflict) {
		prev, gerr := o.es.GetCheckpoint(ctx, in.OrgID, in.ExecutionID, in.Sequence)
		if gerr != nil {
			return fmt.Errorf("adapter: checkpoint %d: %w", in.Sequence, gerr)
		}
		if prev.LeafEntryID != in.LeafID {
			return fmt.Errorf("adapter: checkpoint %d: %w", in.Sequence, err)
		}
		// Our own row from an earlier attempt — most often a local
		// activity run again because the workflow task that ran it was
		// lost — which announced it already: a second agent.checkpoint
		// would reach clients twice.
	} else if err != nil {
		return fmt.Errorf("adapter: checkpoint %d: %w", in.Sequence, err)
	} else {
		if in.Steps > 0 {
			if err := o.es.AddSteps(ctx, in.OrgID, in.ExecutionID, in.Steps); err != nil {
				return fmt.Errorf("adapter: checkpoint steps: %w", err)
			}
		}
		o.publish(ctx, in.OrgID, in.ExecutionID, event.Checkpoint{AgentExecutionID: in.ExecutionID, Sequence: in.Sequence})
	}
	if in.Wait {
		ex, err := o.es.Transition(ctx, in.OrgID, in.ExecutionID, entrystore.Transition{To: entrystore.StatusWaiting})
		if err != nil {
			return fmt.Errorf("adapter: wait: %w", err)
		}
		o.publish(ctx, in.OrgID, in.ExecutionID, event.Waiting{AgentExecutionID: in.ExecutionID, Status: string(ex.Status), Reason: in.WaitReason})
	}
	return nil
}

// FinishInput ends an execution.
type FinishInput struct {
	OrgID, ExecutionID, LeafID string
	Status                     entrystore.Status
	StopReason, Error          string
	// Known are the signals the workflow holds unconsumed; a completion
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
	// Pending, when set, are acknowledged signals the workflow has not
	// received yet: the execution did not complete, and the agent must act
	// on them first.
	Pending []agentsdk.Signal `json:",omitempty"`
}

// Finish moves the execution to its terminal status; a completed one's
// output is its leaf's text. A completion is refused while the inbox holds
// a signal the workflow does not know of (a message acknowledged while the
// final answer was written): Pending lists them and nothing changes.
func (o *storeOps) Finish(ctx context.Context, in FinishInput) (FinishOutput, error) {
	out, err := o.finish(ctx, in)
	return out, storeError(err)
}

func (o *storeOps) finish(ctx context.Context, in FinishInput) (FinishOutput, error) {
	var out FinishOutput
	tr := entrystore.Transition{To: in.Status, Error: in.Error, StopReason: in.StopReason}
	var ex entrystore.Execution
	var err error
	if in.Status == entrystore.StatusCompleted {
		if in.LeafID != "" {
			e, err := o.es.GetEntry(ctx, in.OrgID, in.LeafID)
			if err != nil {
				return out, fmt.Errorf("adapter: finish: %w", err)
			}
			if m, err := toSDKEntry(e).Message(); err == nil {
				out.Text = m.Text()
			}
			tr.Output, _ = json.Marshal(map[string]string{"text": out.Text, "entryId": in.LeafID})
		}
		var pending []entrystore.Signal
		ex, pending, err = o.es.CompleteUnlessSignalled(ctx, in.OrgID, in.ExecutionID, in.Known, tr)
		if err == nil && len(pending) > 0 {
			out = FinishOutput{}
			for _, p := range pending {
				out.Pending = append(out.Pending, agentsdk.Signal{ID: p.ID, Name: p.Name})
			}
			return out, nil
		}
		// Only now: a completion the inbox refused goes on, and its next
		// segment's checkpoint takes this sequence.
		if err == nil && in.Checkpoint != nil {
			err = o.checkpoint(ctx, *in.Checkpoint)
		}
	} else {
		if in.Checkpoint != nil {
			if err := o.checkpoint(ctx, *in.Checkpoint); err != nil {
				return out, err
			}
		}
		ex, err = o.es.Transition(ctx, in.OrgID, in.ExecutionID, tr)
	}
	if err != nil {
		return out, fmt.Errorf("adapter: finish: %w", err)
	}
	switch st := string(ex.Status); ex.Status {
	case entrystore.StatusCompleted:
		o.publish(ctx, in.OrgID, in.ExecutionID, event.Completed{AgentExecutionID: in.ExecutionID, Status: st, StopReason: ex.StopReason})
	case entrystore.StatusFailed:
		o.publish(ctx, in.OrgID, in.ExecutionID, event.Failed{AgentExecutionID: in.ExecutionID, Status: st, StopReason: ex.StopReason, Error: ex.Error})
	case entrystore.StatusCancelled:
		o.publish(ctx, in.OrgID, in.ExecutionID, event.Cancelled{AgentExecutionID: in.ExecutionID, Status: st, StopReason: ex.StopReason})
	}
	return out, nil
}

// PublishInput is a data event from workflow code.
type PublishInput struct {
	OrgID, ExecutionID, Event string
	Data                      json.RawMessage
}

// Publish sends one stream event.
func (o *storeOps) Publish(ctx context.Context, in PublishInput) error {
	_, err := o.es.AppendStreamEvent(ctx, in.OrgID, in.ExecutionID, in.Event, in.Data)
	return storeError(err)
}
