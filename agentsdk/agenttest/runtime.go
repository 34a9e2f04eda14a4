package agenttest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/event"
	"github.com/agentree/agentree/agentsdk/step"
)

// Options configure an in-memory execution.
type Options struct {
	Agent      agentsdk.Agent
	Providers  []agentsdk.Provider
	Tools      []*agentsdk.Tool
	Config     agentsdk.Config
	UserPrompt string
	// Tasks are custom tasks for Context.RunTask, by name.
	Tasks map[string]func(ctx context.Context, input json.RawMessage) (any, error)
	// MaxSegments bounds Run, against agents that never stop; default 10,000.
	MaxSegments int
}

// Status is where an in-memory execution stands.
type Status string

// The statuses an in-memory execution reaches.
const (
	StatusRunning   Status = "RUNNING"
	StatusWaiting   Status = "WAITING"
	StatusCompleted Status = "COMPLETED"
	StatusFailed    Status = "FAILED"
)

// Execution is one in-memory execution.
type Execution struct {
	opts     Options
	deps     step.Deps
	Store    *Store
	leaf     *agentsdk.EntryRef
	state    agentsdk.State
	pending  []agentsdk.Signal
	values   map[string]json.RawMessage
	seq      int
	Status   Status
	Reason   string
	Segments int
	// Checkpoints are the leaves checkpointed, in order.
	Checkpoints []string
}

// Start creates an execution with its first user entry. Call Run.
func Start(opts Options) (*Execution, error) {
	tools, err := agentsdk.NewTools(opts.Tools...)
	if err != nil {
		return nil, err
	}
	provs := agentsdk.Providers{}
	for _, p := range opts.Providers {
		provs[p.Name()] = p
	}
	endpoints, err := agentsdk.NewEndpoints(opts.Providers...)
	if err != nil {
		return nil, err
	}
	if err := opts.Config.Validate(provs, tools); err != nil {
		return nil, err
	}
	if opts.MaxSegments == 0 {
		opts.MaxSegments = 10000
	}
	x := &Execution{opts: opts, Store: newStore(opts.Config), values: map[string]json.RawMessage{}, Status: StatusRunning}
	x.deps = step.Deps{Store: x.Store, Endpoints: endpoints, Tools: tools}
	msg := agentsdk.TextMessage(agentsdk.RoleUser, opts.UserPrompt)
	b, _ := json.Marshal(msg)
	es, err := x.Store.AppendEntries(context.Background(), "", []agentsdk.Entry{{Type: agentsdk.EntryMessage, Role: agentsdk.RoleUser, Content: b, IdempotencyKey: "input"}})
	if err != nil {
		return nil, err
	}
	ref, _ := step.Ref(es[0])
	x.leaf = &ref
	return x, nil
}

// Signal delivers a signal. A userMessage's value is an agentsdk.UserMessage.
func (x *Execution) Signal(name string, value any) error {
	b, err := json.Marshal(value)
	if err != nil {
		return err
	}
	id := fmt.Sprintf("s%04d", len(x.values)+1)
	x.values[id] = b
	x.pending = append(x.pending, agentsdk.Signal{ID: id, Name: name})
	if x.Status == StatusWaiting {
		x.Status = StatusRunning
	}
	return nil
}

// Run runs segments until the execution waits or ends.
func (x *Execution) Run(ctx context.Context) error {
	for x.Status == StatusRunning {
		if x.Segments >= x.opts.MaxSegments {
			return fmt.Errorf("agenttest: more than %d segments", x.opts.MaxSegments)
		}
		x.Segments++
		mc := &memContext{ctx: ctx, x: x, state: x.state}
		out, err := x.opts.Agent.RunSegment(mc)
		x.state = mc.state
		if err != nil {
			x.Status, x.Reason = StatusFailed, err.Error()
			return nil
		}
		if b, _ := json.Marshal(x.state); len(b) > agentsdk.MaxStateBytes {
			x.Status, x.Reason = StatusFailed, "state over the limit"
			return nil
		}
		switch out.Kind {
		case agentsdk.OutcomeContinue:
			x.checkpoint()
		case agentsdk.OutcomeWait:
			x.checkpoint()
			if !mc.hasAny(out.WaitFor) {
				x.Status, x.Reason = StatusWaiting, out.Reason
			}
		case agentsdk.OutcomeComplete:
			x.Status, x.Reason = StatusCompleted, out.Reason
		case agentsdk.OutcomeFail:
			x.Status, x.Reason = StatusFailed, out.Reason
		default:
			return fmt.Errorf("agenttest: unknown outcome %q", out.Kind)
		}
	}
	return nil
}

func (x *Execution) checkpoint() {
	x.seq++
	x.Checkpoints = append(x.Checkpoints, x.leaf.ID)
}

// State is the agent's state after the last segment.
func (x *Execution) State() agentsdk.State { return x.state }

// Messages is the conversation on the active path, root first.
func (x *Execution) Messages() ([]agentsdk.Message, error) {
	path, err := x.Store.Path(context.Background(), "", x.leaf.ID)
	if err != nil {
		return nil, err
	}
	return step.Messages(path)
}

// memContext is agentsdk.Context for one in-memory segment.
type memContext struct {
	ctx   context.Context
	x     *Execution
	state agentsdk.State
	step  int
}

func (c *memContext) key() string {
	c.step++
	return fmt.Sprintf("mem/%d/%d", c.x.seq, c.step)
}

func (c *memContext) hasAny(names []string) bool {
	for _, s := range c.x.pending {
		if len(names) == 0 || slices.Contains(names, s.Name) {
			return true
		}
	}
	return false
}

func (c *memContext) ExecutionID() string      { return "mem" }
func (c *memContext) OrgID() string            { return "" }
func (c *memContext) Sequence() int            { return c.x.seq }
func (c *memContext) Config() agentsdk.Config  { return c.x.opts.Config }
func (c *memContext) Leaf() *agentsdk.EntryRef { return c.x.leaf }
func (c *memContext) State() *agentsdk.State   { return &c.state }
func (c *memContext) Now() time.Time           { return time.Now() }
func (c *memContext) Logger() agentsdk.Logger  { return slog.Default() }
func (c *memContext) Cancelled() bool          { return c.ctx.Err() != nil }

func (c *memContext) Append(e agentsdk.NewEntry) (*agentsdk.EntryRef, error) {
	content := e.Content
	role := agentsdk.Role("")
	if e.Message != nil {
		content, _ = json.Marshal(e.Message)
		role = e.Message.Role
	}
	if e.Type == "" {
		e.Type = agentsdk.EntryMessage
	}
	es, err := c.x.Store.AppendEntries(c.ctx, "", []agentsdk.Entry{{
		ParentID: c.x.leaf.ID, Type: e.Type, Role: role, Content: content,
		TurnID: e.TurnID, Metadata: e.Metadata, IdempotencyKey: c.key(),
	}})
	if err != nil {
		return nil, err
	}
	ref, err := step.Ref(es[0])
	if err != nil {
		return nil, err
	}
	c.x.leaf = &ref
	return &ref, nil
}

func (c *memContext) CallModel(call agentsdk.ModelCall) (*agentsdk.ModelResult, error) {
	models := call.Models
	if len(models) == 0 {
		models = c.x.opts.Config.Models
	}
	if len(models) == 0 {
		return nil, fmt.Errorf("%w: no models configured", agentsdk.ErrInvalidInput)
	}
	key, fallback := c.key(), ""
	for i, m := range models {
		res, err := step.CallModel(c.ctx, c.x.deps, step.ModelInput{
			ExecutionID: c.ExecutionID(), OrgID: c.OrgID(), LeafID: c.x.leaf.ID, Model: m, Key: key, TurnID: call.TurnID, FallbackReason: fallback,
		})
		if err == nil {
			c.x.leaf = &res.Entry
			return &res, nil
		}
		me, ok := agentsdk.AsModelError(err)
		if !ok || !me.Retryable || i == len(models)-1 {
			return nil, err
		}
		fallback = fmt.Sprintf("%s failed: %v", m.Key(), err)
	}
	return nil, errors.New("unreachable")
}

func (c *memContext) RunTool(assistantID string, call agentsdk.ToolCallRef) (*agentsdk.ToolResult, error) {
	res, err := step.RunTool(c.ctx, c.x.deps, step.ToolInput{
		ExecutionID: c.ExecutionID(), OrgID: c.OrgID(), AssistantID: assistantID, LeafID: c.x.leaf.ID, ToolCallID: call.ID, Key: c.key(), StepNumber: c.state.Steps + 1,
	})
	if err != nil {
		return nil, err
	}
	c.x.leaf = &res.Entry
	return &res, nil
}

func (c *memContext) RunTask(name string, input any, output any) error {
	fn, ok := c.x.opts.Tasks[name]
	if !ok {
		return fmt.Errorf("%w: unknown task %q", agentsdk.ErrInvalidInput, name)
	}
	in, err := json.Marshal(input)
	if err != nil {
		return err
	}
	out, err := fn(c.ctx, in)
	if err != nil {
		return err
	}
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, output)
}

func (c *memContext) Signals() []agentsdk.Signal { return slices.Clone(c.x.pending) }
func (c *memContext) HasSignal(name string) bool { return c.hasAny([]string{name}) }

func (c *memContext) ConsumeSignal(s agentsdk.Signal, e agentsdk.NewEntry) (*agentsdk.EntryRef, error) {
	if e.Message == nil && len(e.Content) == 0 {
		var um agentsdk.UserMessage
		if err := json.Unmarshal(c.x.values[s.ID], &um); err != nil {
			return nil, fmt.Errorf("%w: signal %s is not a user message", agentsdk.ErrInvalidInput, s.ID)
		}
		msg := agentsdk.TextMessage(agentsdk.RoleUser, um.Text)
		e = agentsdk.NewEntry{Type: agentsdk.EntryMessage, Message: &msg}
	}
	ref, err := c.Append(e)
	if err != nil {
		return nil, err
	}
	c.x.pending = slices.DeleteFunc(c.x.pending, func(p agentsdk.Signal) bool { return p.ID == s.ID })
	return ref, nil
}

func (c *memContext) SignalValue(s agentsdk.Signal, v any) error {
	raw, ok := c.x.values[s.ID]
	if !ok {
		return fmt.Errorf("agenttest: signal %s: %w", s.ID, agentsdk.ErrNotFound)
	}
	return json.Unmarshal(raw, v)
}

func (c *memContext) StreamData(v any) error {
	p, err := event.Custom(v)
	if err != nil {
		return err
	}
	return c.x.Store.Publish(c.ctx, "", "", event.Data{AgentExecutionID: c.ExecutionID(), Data: p})
}
