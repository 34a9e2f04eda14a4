package adapter

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/event"
	"github.com/agentree/agentree/agentsdk/step"
)

// workflowContext is agentsdk.Context inside a segment workflow.
type workflowContext struct {
	ctx     workflow.Context
	opts    *Options
	ops     *storeOps
	in      SegmentInput
	cfg     agentsdk.Config
	leaf    *agentsdk.EntryRef
	state   *agentsdk.State
	pending []agentsdk.Signal
	seen    map[string]bool
	// received counts the signals added, so the workflow can tell whether
	// any arrived while a segment ran.
	received int
	step     int
}

var _ agentsdk.Context = (*workflowContext)(nil)

func newWorkflowContext(ctx workflow.Context, opts *Options, in SegmentInput) *workflowContext {
	st := in.State
	wc := &workflowContext{ctx: ctx, opts: opts, ops: opts.ops, in: in, state: &st, seen: map[string]bool{}}
	for _, s := range in.Signals {
		wc.addSignal(s)
	}
	return wc
}

// addSignal queues a signal once, whatever the number of deliveries in
// this run; one consumed in an earlier run is dropped by ConsumeSignal.
func (c *workflowContext) addSignal(s agentsdk.Signal) {
	if s.ID == "" || c.seen[s.ID] {
		return
	}
	c.seen[s.ID] = true
	c.received++
	c.pending = append(c.pending, s)
}

// pendingIDs are the IDs of the signals held and not yet consumed.
func (c *workflowContext) pendingIDs() []string {
	ids := make([]string, len(c.pending))
	for i, s := range c.pending {
		ids[i] = s.ID
	}
	return ids
}

func (c *workflowContext) hasAny(names []string) bool {
	for _, s := range c.pending {
		if len(names) == 0 || slices.Contains(names, s.Name) {
			return true
		}
	}
	return false
}

func (c *workflowContext) nextInput(resumed bool) SegmentInput {
	leaf := ""
	if c.leaf != nil {
		leaf = c.leaf.ID
	}
	return SegmentInput{
		ExecutionID: c.in.ExecutionID, OrgID: c.in.OrgID, Sequence: c.in.Sequence + 1,
		LeafID: leaf, State: *c.state, Signals: c.pending, Resumed: resumed,
	}
}

// checkpointInput is the checkpoint that ends this segment at its leaf.
func (c *workflowContext) checkpointInput() *CheckpointInput {
	return &CheckpointInput{
		OrgID: c.in.OrgID, ExecutionID: c.in.ExecutionID, LeafID: c.leaf.ID,
		Sequence: c.in.Sequence + 1, State: *c.state, Steps: c.state.Steps - c.in.State.Steps,
	}
}

// advance starts the next segment in the same run, from where this one
// checkpointed.
func (c *workflowContext) advance() {
	c.in = c.nextInput(false)
	c.in.Signals = nil
	c.step = 0
}

// key is the idempotency key of the segment's next append:
// {execution}/{sequence}/{step}.
func (c *workflowContext) key() string {
	c.step++
	return fmt.Sprintf("%s/%d/%d", c.in.ExecutionID, c.in.Sequence, c.step)
}

func (c *workflowContext) local(fn any, in any, out any) error {
	f := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(c.ctx, c.opts.localOptions()), fn, in)
	if out == nil {
		return f.Get(c.ctx, nil)
	}
	return f.Get(c.ctx, out)
}

func (c *workflowContext) leafID() string {
	if c.leaf == nil {
		return ""
	}
	return c.leaf.ID
}

func (c *workflowContext) ExecutionID() string      { return c.in.ExecutionID }
func (c *workflowContext) OrgID() string            { return c.in.OrgID }
func (c *workflowContext) Sequence() int            { return c.in.Sequence }
func (c *workflowContext) Config() agentsdk.Config  { return c.cfg }
func (c *workflowContext) Leaf() *agentsdk.EntryRef { return c.leaf }
func (c *workflowContext) State() *agentsdk.State   { return c.state }
func (c *workflowContext) Now() time.Time           { return workflow.Now(c.ctx) }
func (c *workflowContext) Logger() agentsdk.Logger  { return workflow.GetLogger(c.ctx) }
func (c *workflowContext) Cancelled() bool          { return c.ctx.Err() != nil }

func (c *workflowContext) Append(e agentsdk.NewEntry) (*agentsdk.EntryRef, error) {
	var ref agentsdk.EntryRef
	in := AppendInput{OrgID: c.in.OrgID, ExecutionID: c.in.ExecutionID, ParentID: c.leafID(), Key: c.key(), Entry: e}
	if err := c.local(c.ops.Append, in, &ref); err != nil {
		return nil, err
	}
	c.leaf = &ref
	return &ref, nil
}

func (c *workflowContext) CallModel(call agentsdk.ModelCall) (*agentsdk.ModelResult, error) {
	models := call.Models
	if len(models) == 0 {
		models = c.cfg.Models
	}
	if len(models) == 0 {
		return nil, fmt.Errorf("%w: no models configured", agentsdk.ErrInvalidInput)
	}
	key := c.key()
	actx := workflow.WithActivityOptions(c.ctx, c.opts.modelActivityOptions())
	fallback := ""
	for i, m := range models {
		in := step.ModelInput{
			OrgID: c.in.OrgID, ExecutionID: c.in.ExecutionID, LeafID: c.leafID(),
			Model: m, Key: key, TurnID: call.TurnID, FallbackReason: fallback,
		}
		var res agentsdk.ModelResult
		err := workflow.ExecuteActivity(actx, CallModelActivity, in).Get(c.ctx, &res)
		if err == nil {
			c.leaf = &res.Entry
			return &res, nil
		}
		// Only a model that kept failing with retryable model errors falls
		// back: a bad request fails the same on any model, and the store
		// or a worker being down is retried until it is back, never here.
		if c.ctx.Err() != nil || i == len(models)-1 || !isErrType(err, ErrTypeModelExhausted) {
			return nil, err
		}
		fallback = fmt.Sprintf("%s failed after retries: %v", m.Key(), rootCause(err))
		c.Logger().Warn("model failed; falling back", "model", m.Key(), "next", models[i+1].Key(), "error", err)
	}
	return nil, errors.New("unreachable")
}

func rootCause(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}

func (c *workflowContext) RunTool(assistantID string, call agentsdk.ToolCallRef) (*agentsdk.ToolResult, error) {
	in := step.ToolInput{
		OrgID: c.in.OrgID, ExecutionID: c.in.ExecutionID, AssistantID: assistantID,
		LeafID: c.leafID(), ToolCallID: call.ID, Key: c.key(), StepNumber: c.state.Steps + 1,
	}
	var res agentsdk.ToolResult
	actx := workflow.WithActivityOptions(c.ctx, c.opts.toolActivityOptions())
	if err := workflow.ExecuteActivity(actx, RunToolActivity, in).Get(c.ctx, &res); err != nil {
		return nil, err
	}
	c.leaf = &res.Entry
	return &res, nil
}

func (c *workflowContext) RunTask(name string, input any, output any) error {
	actx := workflow.WithActivityOptions(c.ctx, c.opts.taskActivityOptions())
	return workflow.ExecuteActivity(actx, name, input).Get(c.ctx, output)
}

func (c *workflowContext) Signals() []agentsdk.Signal { return slices.Clone(c.pending) }

func (c *workflowContext) HasSignal(name string) bool { return c.hasAny([]string{name}) }

func (c *workflowContext) ConsumeSignal(s agentsdk.Signal, e agentsdk.NewEntry) (*agentsdk.EntryRef, error) {
	in := ConsumeInput{
		AppendInput: AppendInput{OrgID: c.in.OrgID, ExecutionID: c.in.ExecutionID, ParentID: c.leafID(), Key: "signal/" + s.ID, Entry: e},
		SignalID:    s.ID,
	}
	var ref agentsdk.EntryRef
	if err := c.local(c.ops.ConsumeSignal, in, &ref); err != nil {
		return nil, err
	}
	c.pending = slices.DeleteFunc(c.pending, func(p agentsdk.Signal) bool { return p.ID == s.ID })
	if ref.ID == "" {
		// A redelivery of a signal consumed before: nothing appended, and
		// the leaf stays where it is.
		return c.leaf, nil
	}
	c.leaf = &ref
	return &ref, nil
}

func (c *workflowContext) SignalValue(s agentsdk.Signal, v any) error {
	var raw json.RawMessage
	if err := c.local(c.ops.SignalValue, SignalValueInput{OrgID: c.in.OrgID, SignalID: s.ID}, &raw); err != nil {
		return err
	}
	return json.Unmarshal(raw, v)
}

func (c *workflowContext) StreamData(v any) error {
	p, err := event.Custom(v)
	if err != nil {
		return err
	}
	b, err := json.Marshal(event.Data{AgentExecutionID: c.in.ExecutionID, Data: p})
	if err != nil {
		return err
	}
	return c.local(c.ops.Publish, PublishInput{OrgID: c.in.OrgID, ExecutionID: c.in.ExecutionID, Event: event.NameData, Data: b}, nil)
}
