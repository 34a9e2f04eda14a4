package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/event"
	"github.com/agentree/agentree/internal/domain"
	"github.com/agentree/agentree/internal/step"
)

// Ops are the segment's store operations: status changes, user entries,
// checkpoints and the lifecycle events that go with them. Each is safe to
// run again (a Temporal local activity may be), and each publishes its
// events only when it changed something.
type Ops struct {
	Store Store
	// RemoteAgents are the names of the remote A2A agents the worker may
	// call as sub-agents (spawn_agents' agents[].remote): the only ones a
	// call may name.
	RemoteAgents []string
	// Workspaces, when set, snapshots the execution's workspace at every
	// checkpoint and restores it when a segment begins without it.
	Workspaces Workspaces
	// MaxSleep is the longest sleep (agentsdk.ToolSleep) the worker
	// allows; <= 0: agentsdk.DefaultMaxSleep.
	MaxSleep time.Duration
	// Appended, when set, is told of the entry a consumption appended (a
	// user message under the leaf), so the worker's context cache
	// (step.Cache.Appended) gives the model call that answers it its
	// context without reading the path again.
	Appended func(orgID, executionID string, entries []agentsdk.Entry)
}

// BeginInput starts a segment.
type BeginInput struct {
	OrgID, ExecutionID, LeafID string
	// Announce is the lifecycle event to publish with the move to RUNNING
	// (agent.started, agent.resumed), or "" for a plain segment.
	Announce string
	// Sequence is the segment's: its checkpoint will be Sequence+1.
	Sequence int `json:",omitempty"`
	// Leaf is the entry LeafID names, when the run holds it already (a
	// segment after a wait in the same run): Begin returns it as it is
	// instead of reading it again, one round trip less on every turn.
	// The output still carries it, so every build replays the marker.
	Leaf *agentsdk.EntryRef `json:",omitempty"`
}

// BeginOutput is what a segment starts from.
type BeginOutput struct {
	Config agentsdk.Config
	Leaf   *agentsdk.EntryRef
	Status domain.Status
	// Ended, for an execution found ended, is its result as the segment
	// that ended it returned it: a segment run again after that one's
	// workflow task was lost (a signal arrived as it completed, a worker
	// died) returns the same.
	Ended *Result `json:",omitempty"`
}

// ended is the result of the ended execution ex: its status, stop reason
// and error, its leaf and, completed, the leaf's text (as Finish
// computed it).
func (o *Ops) ended(ctx context.Context, in BeginInput, ex domain.Execution) (*Result, error) {
	res := &Result{ExecutionID: in.ExecutionID, Status: string(ex.Status), StopReason: ex.StopReason, Error: ex.Error}
	src, err := o.Store.ResumeSource(ctx, in.OrgID, in.ExecutionID)
	if errors.Is(err, agentsdk.ErrNotFound) {
		return res, nil // a store that keeps no more of it
	} else if err != nil {
		return nil, err
	}
	res.LeafID = src.LeafID
	// The usage is the final checkpoint's: a parent adds a child's.
	if c, err := o.Store.GetCheckpoint(ctx, in.OrgID, in.ExecutionID, src.CheckpointSeq); err == nil {
		var st agentsdk.State
		if json.Unmarshal(c.State, &st) == nil {
			res.Usage = st.Usage
		}
	} else if !errors.Is(err, agentsdk.ErrNotFound) {
		return nil, err
	}
	if ex.Status == domain.StatusCompleted && src.LeafID != "" {
		e, err := o.Store.GetEntry(ctx, in.OrgID, src.LeafID)
		if err != nil {
			return nil, err
		}
		if m, err := e.Message(); err == nil {
			res.Text = m.Text()
		}
	}
	return res, nil
}

// Begin loads the config and the leaf and, when announced, marks the
// execution RUNNING.
func (o *Ops) Begin(ctx context.Context, in BeginInput) (BeginOutput, error) {
	// The leaf is read while the execution is: two reads of a turn's
	// start that need not wait for each other.
	var leaf func() (agentsdk.Entry, error)
	if in.LeafID != "" && (in.Leaf == nil || in.Leaf.ID != in.LeafID) {
		leaf = step.Prefetch(func() (agentsdk.Entry, error) { return o.Store.GetEntry(ctx, in.OrgID, in.LeafID) })
	}
	// Announced, the read and the move to RUNNING with its event are one
	// round trip where the store can (Announcer); the rules below decide
	// whatever that did not.
	var ex domain.Execution
	var moved bool
	var err error
	if a, ok := o.Store.(Announcer); ok && in.Announce != "" {
		ex, moved, err = a.BeginAnnounced(ctx, in.OrgID, in.ExecutionID, in.Sequence, []event.Event{begun(in, domain.StatusRunning)})
	} else {
		ex, err = o.Store.Execution(ctx, in.OrgID, in.ExecutionID)
	}
	if err != nil {
		return BeginOutput{}, fmt.Errorf("engine: begin: %w", err)
	}
	cfg, err := DecodeConfig(ex.Config)
	if err != nil {
		return BeginOutput{}, err
	}
	if o.Workspaces != nil && in.LeafID != "" && !ex.Status.Terminal() {
		if err := o.Workspaces.RestoreMissing(ctx, in.OrgID, in.ExecutionID, in.LeafID); err != nil {
			return BeginOutput{}, fmt.Errorf("engine: begin: %w", err)
		}
	}
	// The system prompt is the model step's business; keeping it out of
	// segment code keeps it out of workflow history.
	cfg.SystemPrompt = ""
	// So are client tools' schemas: a call's Client flag, recorded with
	// the answer, is all segment code needs of them.
	cfg.ClientTools = nil
	out := BeginOutput{Config: cfg, Status: ex.Status}
	if ex.Status.Terminal() {
		if out.Ended, err = o.ended(ctx, in, ex); err != nil {
			return BeginOutput{}, fmt.Errorf("engine: begin: %w", err)
		}
	}
	switch {
	case in.Leaf != nil && in.Leaf.ID == in.LeafID:
		out.Leaf = in.Leaf
	case in.LeafID != "":
		e, err := leaf()
		if err != nil {
			return BeginOutput{}, fmt.Errorf("engine: begin: leaf: %w", err)
		}
		ref, err := step.Ref(e)
		if err != nil {
			return BeginOutput{}, err
		}
		out.Leaf = &ref
	}
	if moved {
		out.Status = domain.StatusRunning
		return out, nil
	}
	if in.Announce != "" && !ex.Status.Terminal() && ex.Status != domain.StatusCancelling {
		// This Begin ran before and announced when the execution runs
		// already or has moved on past this segment: a local activity run
		// again after its workflow task was lost — the lost task ran the
		// whole turn, to the checkpoint of its wait (local model and tool
		// calls), and the re-run goes its way again. Then the move
		// announces nothing.
		ran := ex.Status == domain.StatusRunning || ex.CheckpointSeq > in.Sequence
		running, announced, err := o.transition(ctx, in.OrgID, in.ExecutionID, domain.Transition{To: domain.StatusRunning},
			func(status domain.Status) []event.Event {
				if ran {
					return nil
				}
				return []event.Event{begun(in, status)}
			})
		if err != nil {
			return BeginOutput{}, fmt.Errorf("engine: begin: %w", err)
		}
		out.Status = running.Status
		if !announced && !ran && ex.Status != running.Status {
			o.publish(ctx, in.OrgID, in.ExecutionID, begun(in, running.Status))
		}
	}
	return out, nil
}

// begun is the event a segment's Begin announces: agent.started or
// agent.resumed.
func begun(in BeginInput, status domain.Status) event.Event {
	if in.Announce == event.NameResumed {
		return event.Resumed{AgentExecutionID: in.ExecutionID, Status: string(status)}
	}
	return event.Started{AgentExecutionID: in.ExecutionID, Status: string(status)}
}

// transition moves the execution to tr.To and, when the move is made,
// stores the events evs returns for that status with it, in the same
// transaction where the store can (Announcer). announced is false when
// they were not stored: the caller publishes what the move it got calls
// for.
func (o *Ops) transition(ctx context.Context, orgID, executionID string, tr domain.Transition,
	evs func(domain.Status) []event.Event) (ex domain.Execution, announced bool, err error) {
	if a, ok := o.Store.(Announcer); ok {
		if e := evs(tr.To); len(e) > 0 {
			return a.TransitionAnnounced(ctx, orgID, executionID, tr, e)
		}
	}
	ex, err = o.Store.Transition(ctx, orgID, executionID, tr)
	return ex, false, err
}

// DecodeConfig decodes an execution's stored configuration.
func DecodeConfig(raw json.RawMessage) (agentsdk.Config, error) {
	var c agentsdk.Config
	if len(raw) == 0 {
		return c, nil
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return c, fmt.Errorf("engine: decode execution config: %w", err)
	}
	return c, nil
}

// publish sends a lifecycle event. Live events are best effort; the
// execution row is the record.
func (o *Ops) publish(ctx context.Context, org, exec string, ev event.Event) {
	_ = o.Store.Publish(ctx, org, exec, ev)
}

// publishBatch publishes evs, in order, in one write (none when empty).
func (o *Ops) publishBatch(ctx context.Context, org, exec string, evs []event.Event) {
	if len(evs) > 0 {
		_ = o.Store.PublishBatch(ctx, org, exec, evs)
	}
}

// AppendInput appends one entry.
type AppendInput struct {
	OrgID, ExecutionID, ParentID, Key string
	Entry                             agentsdk.NewEntry
}

func (in AppendInput) entry() (agentsdk.Entry, error) {
	e := agentsdk.Entry{
		ExecutionID: in.ExecutionID, ParentID: in.ParentID, Type: in.Entry.Type,
		TurnID: in.Entry.TurnID, Metadata: in.Entry.Metadata, IdempotencyKey: in.Key,
		Content: in.Entry.Content,
	}
	if e.Type == "" {
		e.Type = agentsdk.EntryMessage
	}
	if in.Entry.Message != nil {
		b, err := json.Marshal(in.Entry.Message)
		if err != nil {
			return e, fmt.Errorf("engine: encode entry: %w", err)
		}
		e.Content, e.Role = b, in.Entry.Message.Role
	}
	if noContent(e.Content) {
		e.Content = json.RawMessage(`{}`)
	}
	return e, nil
}

// noContent reports whether raw holds no value: unset, or null after a
// trip through JSON.
func noContent(raw json.RawMessage) bool {
	return len(raw) == 0 || string(raw) == "null"
}

// Append appends an entry (repeat-safe by its key).
func (o *Ops) Append(ctx context.Context, in AppendInput) (agentsdk.EntryRef, error) {
	e, err := in.entry()
	if err != nil {
		return agentsdk.EntryRef{}, err
	}
	got, err := o.Store.AppendEntries(ctx, in.OrgID, []agentsdk.Entry{e})
	if err != nil {
		return agentsdk.EntryRef{}, fmt.Errorf("engine: append: %w", err)
	}
	return step.Ref(got[0])
}

// ConsumeInput turns a signal into an entry.
type ConsumeInput struct {
	AppendInput
	SignalID string
	// NextKey, when set, is the key of the segment's next keyed step (see
	// ConsumeOutput.Deferred).
	NextKey string `json:",omitempty"`
}

// ConsumeOutput is what ConsumeSignal did: the entry it appended (the zero
// ref for a signal consumed before, which the caller ignores), or nothing,
// Deferred.
//
// Deferred: an entry already holds in.NextKey and the signal was not
// consumed under this leaf. A workflow task that ran local activities (a
// model call run locally) and was lost — a worker died — went past this
// point without this signal, which arrived later; its re-run sees the
// signal from its start. Consumed now, the signal's entry would go under
// the leaf beside the answer the lost task wrote, off the path, and the
// re-run would take up that answer (its key finds it) as if it answered
// the signal; taken for a redelivery (a lost task consumed it further
// on), it would be dropped. Deferred, the signal stays pending: the
// re-run goes the lost tasks' way, and takes the signal where the next
// step looks, or where a lost task took it (make chaos
// -local-activities found both).
type ConsumeOutput struct {
	agentsdk.EntryRef
	Deferred bool `json:"deferred,omitempty"`
}

// ConsumeSignal appends the signal's entry and marks it consumed in one
// transaction. A zero entry takes the signal's value as a UserMessage.
func (o *Ops) ConsumeSignal(ctx context.Context, in ConsumeInput) (ConsumeOutput, error) {
	var value func() (json.RawMessage, error)
	if in.NextKey != "" {
		if in.Entry.Message == nil && noContent(in.Entry.Content) {
			// The signal's value and the lost-task check are two reads
			// of a turn's start that need not wait for each other.
			value = step.Prefetch(func() (json.RawMessage, error) { return o.Store.SignalValue(ctx, in.OrgID, in.SignalID) })
		}
		if out, decided, err := o.afterLostTask(ctx, in); decided || err != nil {
			return out, err
		}
	}
	ref, err := o.consumeSignal(ctx, in, value)
	return ConsumeOutput{EntryRef: ref}, err
}

// afterLostTask decides a consumption when an entry already holds
// in.NextKey (a lost task went past this point): the signal's entry when
// that task consumed it under this leaf, else Deferred. Without such an
// entry — one read, the common case — it decides nothing, and the
// consumption goes on as usual.
func (o *Ops) afterLostTask(ctx context.Context, in ConsumeInput) (out ConsumeOutput, decided bool, err error) {
	if _, err := o.Store.EntryByKey(ctx, in.OrgID, in.ExecutionID, in.NextKey); errors.Is(err, agentsdk.ErrNotFound) {
		return out, false, nil
	} else if err != nil {
		return out, false, fmt.Errorf("engine: consume signal: %w", err)
	}
	e, err := o.Store.EntryByKey(ctx, in.OrgID, in.ExecutionID, in.Key)
	switch {
	case err == nil && e.ParentID == in.ParentID:
		out.EntryRef, err = step.Ref(e)
		return out, true, err
	case err == nil || errors.Is(err, agentsdk.ErrNotFound):
		return ConsumeOutput{Deferred: true}, true, nil
	}
	return out, false, fmt.Errorf("engine: consume signal: %w", err)
}

// consumeSignal consumes the signal; an entry without content is the
// signal's value (read by value, or from the store when nil) as a user
// message.
func (o *Ops) consumeSignal(ctx context.Context, in ConsumeInput, value func() (json.RawMessage, error)) (agentsdk.EntryRef, error) {
	if in.Entry.Message == nil && noContent(in.Entry.Content) {
		if value == nil {
			value = func() (json.RawMessage, error) { return o.Store.SignalValue(ctx, in.OrgID, in.SignalID) }
		}
		raw, err := value()
		if err != nil {
			return agentsdk.EntryRef{}, fmt.Errorf("engine: consume signal: %w", err)
		}
		var um agentsdk.UserMessage
		if err := json.Unmarshal(raw, &um); err != nil {
			return agentsdk.EntryRef{}, fmt.Errorf("%w: signal %s value is not a user message: %v", agentsdk.ErrInvalidInput, in.SignalID, err)
		}
		msg := agentsdk.TextMessage(agentsdk.RoleUser, um.Text)
		in.Entry = agentsdk.NewEntry{Type: agentsdk.EntryMessage, Message: &msg}
	}
	e, err := in.entry()
	if err != nil {
		return agentsdk.EntryRef{}, err
	}
	got, err := o.Store.ConsumeSignal(ctx, in.OrgID, in.SignalID, e)
	if errors.Is(err, domain.ErrSignalConsumed) {
		return o.consumedHere(ctx, in, e)
	}
	if err != nil {
		return agentsdk.EntryRef{}, fmt.Errorf("engine: consume signal: %w", err)
	}
	if o.Appended != nil {
		o.Appended(in.OrgID, in.ExecutionID, []agentsdk.Entry{got})
	}
	return step.Ref(got)
}

// consumedHere is the entry that consumed the signal when it hangs under
// in's leaf: this consumption ran before, in a workflow task that was
// lost (a worker died, a signal arrived as it completed), and its re-run
// must move the leaf as the first did, or what follows would go under the
// old leaf and fork the conversation. A signal consumed elsewhere on the
// path (a redelivery) leaves the leaf where it is: the zero ref.
func (o *Ops) consumedHere(ctx context.Context, in ConsumeInput, e agentsdk.Entry) (agentsdk.EntryRef, error) {
	got, err := o.Store.EntryByKey(ctx, in.OrgID, in.ExecutionID, e.IdempotencyKey)
	switch {
	case errors.Is(err, agentsdk.ErrNotFound):
		return agentsdk.EntryRef{}, nil
	case err != nil:
		return agentsdk.EntryRef{}, fmt.Errorf("engine: consume signal: %w", err)
	case got.ParentID != in.ParentID:
		return agentsdk.EntryRef{}, nil
	}
	return step.Ref(got)
}

// SignalValueInput names an inbox row.
type SignalValueInput struct{ OrgID, SignalID string }

// SignalValue loads a signal's value from the inbox.
func (o *Ops) SignalValue(ctx context.Context, in SignalValueInput) (json.RawMessage, error) {
	raw, err := o.Store.SignalValue(ctx, in.OrgID, in.SignalID)
	if err != nil {
		return nil, fmt.Errorf("engine: signal value: %w", err)
	}
	return raw, nil
}

// EntryInput names an entry.
type EntryInput struct{ OrgID, EntryID string }

// Entry returns an entry's reference.
func (o *Ops) Entry(ctx context.Context, in EntryInput) (agentsdk.EntryRef, error) {
	e, err := o.Store.GetEntry(ctx, in.OrgID, in.EntryID)
	if err != nil {
		return agentsdk.EntryRef{}, fmt.Errorf("engine: entry: %w", err)
	}
	return step.Ref(e)
}

// AppendToolResults appends the results of tool calls that ran at once,
// in the model's order (step.AppendToolResults).
func (o *Ops) AppendToolResults(ctx context.Context, in step.AppendResultsInput) ([]agentsdk.ToolResult, error) {
	return step.AppendToolResults(ctx, step.Deps{Store: o.Store}, in)
}

// PublishInput is a data event from segment code.
type PublishInput struct {
	OrgID, ExecutionID, Event string
	Data                      json.RawMessage
}

// Publish sends one stream event.
func (o *Ops) Publish(ctx context.Context, in PublishInput) error {
	ev, err := event.Decode(in.Event, in.Data)
	if err != nil {
		return fmt.Errorf("%w: %v", agentsdk.ErrInvalidInput, err)
	}
	return o.Store.Publish(ctx, in.OrgID, in.ExecutionID, ev)
}
