package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/event"
	"github.com/agentree/agentree/internal/step"
)

// ErrModelExhausted marks a model call that kept failing with retryable
// model errors until its attempts ran out: the next model is tried.
var ErrModelExhausted = errors.New("model failed after its attempts")

// MarkExhausted marks err (a model call's last failure) as ErrModelExhausted,
// keeping its chain: the fallback reason names its root cause.
func MarkExhausted(err error) error { return exhaustedError{err} }

type exhaustedError struct{ err error }

func (e exhaustedError) Error() string        { return e.err.Error() }
func (e exhaustedError) Unwrap() error        { return e.err }
func (e exhaustedError) Is(target error) bool { return target == ErrModelExhausted }

// segment is agentsdk.Context for one segment, over a Port.
type segment struct {
	port    Port
	in      SegmentInput
	cfg     agentsdk.Config
	leaf    *agentsdk.EntryRef
	state   *agentsdk.State
	pending []agentsdk.Signal
	seen    map[string]bool
	// received counts the signals added, so the run loop can tell whether
	// any arrived while a segment ran.
	received int
	step     int
	// approval, once the agent asked for decisions, is what the
	// segment's waiting checkpoint lists.
	approval *PendingApproval
	// clientCalls, once client tool calls wait for outputs, is what the
	// segment's waiting checkpoint lists.
	clientCalls *PendingApproval
}

var _ agentsdk.Context = (*segment)(nil)

func newSegment(p Port, in SegmentInput) *segment {
	st := in.State
	s := &segment{port: p, in: in, state: &st, seen: map[string]bool{}}
	for _, sig := range in.Signals {
		s.addSignal(sig)
	}
	return s
}

// addSignal queues a signal once, whatever the number of deliveries in
// this run; one consumed in an earlier run is dropped by ConsumeSignal.
func (c *segment) addSignal(s agentsdk.Signal) {
	if s.ID == "" || c.seen[s.ID] {
		return
	}
	c.seen[s.ID] = true
	c.received++
	c.pending = append(c.pending, s)
}

// drain adds the signals the port received since the last look.
func (c *segment) drain() {
	for _, s := range c.port.Received() {
		c.addSignal(s)
	}
}

// pendingIDs are the IDs of the signals held and not yet consumed.
func (c *segment) pendingIDs() []string {
	ids := make([]string, len(c.pending))
	for i, s := range c.pending {
		ids[i] = s.ID
	}
	return ids
}

// ends reports whether the signals held end a wait for names: with
// wakeAt set, no names means only the timer ends it.
func (c *segment) ends(names []string, wakeAt *time.Time) bool {
	if wakeAt != nil && len(names) == 0 {
		return false
	}
	return c.hasAny(names)
}

func (c *segment) hasAny(names []string) bool {
	for _, s := range c.pending {
		if len(names) == 0 || slices.Contains(names, s.Name) {
			return true
		}
	}
	return false
}

func (c *segment) nextInput(resumed bool) SegmentInput {
	return SegmentInput{
		ExecutionID: c.in.ExecutionID, OrgID: c.in.OrgID, Sequence: c.in.Sequence + 1,
		LeafID: c.leafID(), State: *c.state, Signals: c.pending, Resumed: resumed, Local: c.in.Local,
		ShortKeys: c.in.ShortKeys,
	}
}

// handOff is the next run's input: the signals received by now travel
// with it (DESIGN: none is lost to continue-as-new).
func (c *segment) handOff(resumed bool) SegmentInput {
	c.drain()
	return c.nextInput(resumed)
}

// checkpointInput is the checkpoint that ends this segment at its leaf.
func (c *segment) checkpointInput() *CheckpointInput {
	return &CheckpointInput{
		OrgID: c.in.OrgID, ExecutionID: c.in.ExecutionID, LeafID: c.leaf.ID,
		Sequence: c.in.Sequence + 1, State: *c.state, Steps: c.state.Steps - c.in.State.Steps,
		Approval: c.approval, ClientCalls: c.clientCalls,
	}
}

// finalCheckpoint is the checkpoint an ending segment records with its
// terminal status, so the latest checkpoint's leaf is the execution's
// leaf and its last steps are counted; nil when the segment appended
// nothing since the last checkpoint.
func (c *segment) finalCheckpoint() *CheckpointInput {
	if c.leaf == nil || c.leaf.ID == c.in.LeafID {
		return nil
	}
	return c.checkpointInput()
}

// advance starts the next segment in the same run, from where this one
// checkpointed.
func (c *segment) advance() {
	c.in = c.nextInput(false)
	c.in.Signals = nil
	c.step = 0
	c.approval, c.clientCalls = nil, nil
}

// key is the idempotency key of the segment's next append:
// {sequence}/{step} ({execution}/{sequence}/{step} unless ShortKeys).
func (c *segment) key() string {
	c.step++
	return c.stepKey(c.step)
}

// peekKey is the key the next key() returns.
func (c *segment) peekKey() string { return c.stepKey(c.step + 1) }

func (c *segment) stepKey(step int) string {
	if c.in.ShortKeys {
		return strconv.Itoa(c.in.Sequence) + "/" + strconv.Itoa(step)
	}
	return fmt.Sprintf("%s/%d/%d", c.in.ExecutionID, c.in.Sequence, step)
}

func (c *segment) leafID() string {
	if c.leaf == nil {
		return ""
	}
	return c.leaf.ID
}

func (c *segment) ExecutionID() string      { return c.in.ExecutionID }
func (c *segment) OrgID() string            { return c.in.OrgID }
func (c *segment) Sequence() int            { return c.in.Sequence }
func (c *segment) Config() agentsdk.Config  { return c.cfg }
func (c *segment) Leaf() *agentsdk.EntryRef { return c.leaf }
func (c *segment) State() *agentsdk.State   { return c.state }
func (c *segment) Now() time.Time           { return c.port.Now() }
func (c *segment) Logger() agentsdk.Logger  { return c.port.Logger() }
func (c *segment) Cancelled() bool          { return c.port.Cancelled() }

func (c *segment) Append(e agentsdk.NewEntry) (*agentsdk.EntryRef, error) {
	var ref agentsdk.EntryRef
	in := AppendInput{OrgID: c.in.OrgID, ExecutionID: c.in.ExecutionID, ParentID: c.leafID(), Key: c.key(), Entry: e}
	if err := c.port.Local(OpAppend, in, &ref); err != nil {
		return nil, err
	}
	c.leaf = &ref
	return &ref, nil
}

func (c *segment) CallModel(call agentsdk.ModelCall) (*agentsdk.ModelResult, error) {
	models := call.Models
	if len(models) == 0 {
		models = c.cfg.Models
	}
	if len(models) == 0 {
		return nil, fmt.Errorf("%w: no models configured", agentsdk.ErrInvalidInput)
	}
	key := c.key()
	fallback := ""
	for i, m := range models {
		res, err := c.port.CallModel(step.ModelInput{
			OrgID: c.in.OrgID, ExecutionID: c.in.ExecutionID, LeafID: c.leafID(),
			Model: m, Key: key, TurnID: call.TurnID, FallbackReason: fallback,
		})
		if err == nil {
			c.leaf = &res.Entry
			if c.oneStep() {
				c.state.Steps++
			}
			return &res, nil
		}
		// Only a model that kept failing with retryable model errors falls
		// back: a bad request fails the same on any model, and the store
		// or a worker being down is retried until it is back, never here.
		if c.port.Cancelled() || i == len(models)-1 || !errors.Is(err, ErrModelExhausted) {
			return nil, err
		}
		fallback = tenantText(c.Logger(), c.in.ExecutionID, "fallback",
			fmt.Sprintf("%s failed after retries: %s", m.Key(), rootCause(err)), err)
		c.Logger().Warn("model failed; falling back", "model", m.Key(), "next", models[i+1].Key(), "error", err)
	}
	return nil, errors.New("unreachable")
}

// rootCause is the message of err's innermost cause: the same text
// whichever runtime carried the error (a Temporal application error's
// Message, without the type and retry flags its Error adds).
func rootCause(err error) string {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			break
		}
		err = next
	}
	if m, ok := err.(interface{ Message() string }); ok {
		return m.Message()
	}
	return err.Error()
}

func (c *segment) RunTool(assistantID string, call agentsdk.ToolCallRef) (*agentsdk.ToolResult, error) {
	return c.runTool(assistantID, call, c.toolStep(0))
}

func (c *segment) runTool(assistantID string, call agentsdk.ToolCallRef, stepNumber int) (*agentsdk.ToolResult, error) {
	res, err := c.port.RunTool(step.ToolInput{
		OrgID: c.in.OrgID, ExecutionID: c.in.ExecutionID, AssistantID: assistantID,
		LeafID: c.leafID(), ToolCallID: call.ID, Key: c.key(), StepNumber: stepNumber, Local: call.Local,
	})
	if err != nil {
		return nil, err
	}
	c.leaf = &res.Entry
	return &res, nil
}

func (c *segment) RunActivity(name string, input any, output any) error {
	return c.port.RunActivity(name, input, output)
}

func (c *segment) Signals() []agentsdk.Signal { return slices.Clone(c.pending) }

func (c *segment) HasSignal(name string) bool { return c.hasAny([]string{name}) }

func (c *segment) ConsumeSignal(s agentsdk.Signal, e agentsdk.NewEntry) (*agentsdk.EntryRef, error) {
	in := ConsumeInput{
		AppendInput: AppendInput{OrgID: c.in.OrgID, ExecutionID: c.in.ExecutionID, ParentID: c.leafID(), Key: "signal/" + s.ID, Entry: e},
		SignalID:    s.ID,
	}
	if s.Name == agentsdk.SignalUserMessage {
		// A user message may wait for the next step (ConsumeOutput.Deferred).
		in.NextKey = c.peekKey()
	}
	return c.consume(OpConsumeSignal, in, s.ID)
}

// consume runs op, which consumes the signal signalID with an entry, and
// moves the leaf to that entry.
func (c *segment) consume(op Op, in any, signalID string) (*agentsdk.EntryRef, error) {
	var out ConsumeOutput
	if err := c.port.Local(op, in, &out); err != nil {
		return nil, err
	}
	if out.Deferred {
		// The signal stays pending, the leaf where it is.
		return c.leaf, nil
	}
	ref := out.EntryRef
	c.pending = slices.DeleteFunc(c.pending, func(p agentsdk.Signal) bool { return p.ID == signalID })
	if ref.ID == "" {
		// A redelivery of a signal consumed before: nothing appended, and
		// the leaf stays where it is.
		return c.leaf, nil
	}
	c.leaf = &ref
	return &ref, nil
}

func (c *segment) SignalValue(s agentsdk.Signal, v any) error {
	var raw json.RawMessage
	if err := c.port.Local(OpSignalValue, SignalValueInput{OrgID: c.in.OrgID, SignalID: s.ID}, &raw); err != nil {
		return err
	}
	return json.Unmarshal(raw, v)
}

func (c *segment) StreamData(v any) error {
	p, err := event.Custom(v)
	if err != nil {
		return err
	}
	b, err := json.Marshal(event.Data{AgentExecutionID: c.in.ExecutionID, Data: p})
	if err != nil {
		return err
	}
	return c.port.Local(OpPublish, PublishInput{OrgID: c.in.OrgID, ExecutionID: c.in.ExecutionID, Event: event.NameData, Data: b}, nil)
}

// oneStep reports whether this execution counts steps as
// agentsdk.ChangeOneStep says: one per model call, its tool calls sharing
// its number.
func (c *segment) oneStep() bool {
	return c.port.Version(agentsdk.ChangeOneStep, agentsdk.RuntimeChanges[agentsdk.ChangeOneStep]) != agentsdk.DefaultVersion
}

// toolStep is the step number of the tool call answered nth (from 0)
// after the last one counted: the step of the model call that asked for
// it, or, before ChangeOneStep, a number of its own.
func (c *segment) toolStep(nth int) int {
	if c.oneStep() {
		return c.state.Steps
	}
	return c.state.Steps + nth + 1
}
