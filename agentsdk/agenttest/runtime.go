package agenttest

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/internal/domain"
	"github.com/agentree/agentree/internal/engine"
	"github.com/agentree/agentree/internal/step"
)

// Options configure an in-memory execution.
type Options struct {
	Agent     agentsdk.Agent
	Providers []agentsdk.Provider
	Tools     []*agentsdk.Tool
	// ToolPolicy is the worker's tool policy, as the plugin's.
	ToolPolicy agentsdk.Policies
	Config     agentsdk.Config
	UserPrompt string
	// Activities are the agent's own activities for Context.RunActivity,
	// by name.
	Activities map[string]func(ctx context.Context, input json.RawMessage) (any, error)
	// MaxSegments bounds Run, against agents that never stop; default 10,000.
	MaxSegments int
	// ModelAttempts and ToolAttempts are as the Temporal plugin's options
	// (defaults 4 and 3). The in-memory runtime retries without waiting.
	ModelAttempts, ToolAttempts int32
	// ExecutionID names the execution (default "mem").
	ExecutionID string
	// Budget, when set, is asked before every model call, as the Temporal
	// plugin asks the organization's daily quotas: an error wrapping
	// agentsdk.ErrBudgetSpent (an *agentsdk.BudgetError) refuses the call
	// and the execution ends PAUSED with stop reason budget.
	Budget func(ctx context.Context, orgID string) error
}

// Status is where an in-memory execution stands: the execution row's
// status, as in production.
type Status = domain.Status

// The statuses an in-memory execution reaches.
const (
	StatusRunning    = domain.StatusRunning
	StatusWaiting    = domain.StatusWaiting
	StatusCancelling = domain.StatusCancelling
	StatusCompleted  = domain.StatusCompleted
	StatusFailed     = domain.StatusFailed
	StatusCancelled  = domain.StatusCancelled
)

// Execution is one in-memory execution, run by the same segment engine as
// the Temporal plugin; only the port differs (direct calls, retries
// without waiting, one goroutine that hands control back while the
// execution waits).
type Execution struct {
	opts  Options
	deps  step.Deps
	Store *Store
	port  *memPort

	// Status is the execution's status; Reason the wait reason, stop
	// reason or error that goes with it.
	Status Status
	Reason string
	// Segments counts the agent's RunSegment calls.
	Segments int
	// Checkpoints are the leaves checkpointed, in order.
	Checkpoints []string

	started bool
	state   agentsdk.State
	leafID  string
	runErr  error
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
	if opts.ModelAttempts <= 0 {
		opts.ModelAttempts = 4
	}
	if opts.ToolAttempts <= 0 {
		opts.ToolAttempts = 3
	}
	if opts.ExecutionID == "" {
		opts.ExecutionID = "mem"
	}
	x := &Execution{opts: opts, Store: newStore(opts.Config, opts.ExecutionID), Status: StatusRunning}
	x.deps = step.Deps{Store: x.Store, Endpoints: endpoints, Tools: tools, Policy: agentsdk.Operator{Policy: opts.ToolPolicy},
		Gate: budgetOf(opts.Budget)}
	msg := agentsdk.TextMessage(agentsdk.RoleUser, opts.UserPrompt)
	b, _ := json.Marshal(msg)
	es, err := x.Store.AppendEntries(context.Background(), "", []agentsdk.Entry{{
		ExecutionID: opts.ExecutionID, Type: agentsdk.EntryMessage, Role: agentsdk.RoleUser, Content: b,
		IdempotencyKey: opts.ExecutionID + "/input",
	}})
	if err != nil {
		return nil, err
	}
	x.leafID = es[0].ID
	x.port = newMemPort(x)
	return x, nil
}

// Signal delivers a signal. A userMessage's value is an agentsdk.UserMessage.
func (x *Execution) Signal(name string, value any) error {
	b, err := json.Marshal(value)
	if err != nil {
		return err
	}
	id := x.Store.putSignal(name, b)
	x.port.deliver(agentsdk.Signal{ID: id, Name: name})
	if x.Status == StatusWaiting {
		x.Status = StatusRunning
	}
	return nil
}

// Cancel requests cancellation, as a client's DELETE does: the execution
// becomes CANCELLING, a running tool's context is cancelled, and the next
// Run records CANCELLED.
func (x *Execution) Cancel() error {
	if _, err := x.Store.Transition(context.Background(), "", x.opts.ExecutionID, domain.Transition{To: StatusCancelling}); err != nil {
		return err
	}
	x.port.cancel()
	x.Status = StatusCancelling
	return nil
}

// Run runs segments until the execution waits or ends.
func (x *Execution) Run(ctx context.Context) error {
	if x.Status.Terminal() {
		return x.runErr
	}
	if !x.started {
		x.started = true
		go x.drive()
	} else {
		x.port.wake <- struct{}{}
	}
	select {
	case <-x.port.idle:
	case <-ctx.Done():
		return ctx.Err()
	}
	x.refresh()
	return x.runErr
}

// drive runs the engine, continuing as new as the engine asks, until the
// execution ends. It runs only while Run waits for it.
func (x *Execution) drive() {
	in := engine.SegmentInput{ExecutionID: x.opts.ExecutionID, LeafID: x.leafID, ShortKeys: true}
	agent := &countingAgent{Agent: x.opts.Agent, x: x}
	for {
		_, next, err := engine.Run(x.port, agent, in)
		if err != nil {
			x.runErr = err
		}
		if err != nil || next == nil {
			x.port.ended = true
			x.port.idle <- struct{}{}
			return
		}
		in = *next
	}
}

// refresh reads the status and reason from the store.
func (x *Execution) refresh() {
	ex := x.Store.execution()
	x.Status = ex.Status
	switch {
	case ex.Status == StatusWaiting:
		x.Reason = x.port.waitReason
	case ex.Status == StatusFailed:
		x.Reason = ex.Error
	case ex.Status.Terminal():
		x.Reason = ex.StopReason
	}
	x.Checkpoints = x.Store.checkpointLeaves()
	x.state = x.port.state
}

// countingAgent counts segments and stops agents that never end.
type countingAgent struct {
	agentsdk.Agent
	x *Execution
}

func (a *countingAgent) RunSegment(ctx agentsdk.Context) (agentsdk.Outcome, error) {
	a.x.Segments++
	if a.x.Segments > a.x.opts.MaxSegments {
		a.x.runErr = fmt.Errorf("agenttest: more than %d segments", a.x.opts.MaxSegments)
		return agentsdk.Outcome{}, a.x.runErr
	}
	out, err := a.Agent.RunSegment(ctx)
	a.x.port.state = *ctx.State()
	return out, err
}

// ExecutionID is the execution's ID (Options.ExecutionID).
func (x *Execution) ExecutionID() string { return x.opts.ExecutionID }

// State is the agent's state after the last segment.
func (x *Execution) State() agentsdk.State { return x.state }

// Messages is the conversation on the active path, root first.
func (x *Execution) Messages() ([]agentsdk.Message, error) {
	path, err := x.Store.Path(context.Background(), "", x.Store.lastLeaf())
	if err != nil {
		return nil, err
	}
	return step.Messages(path)
}

// budgetOf is Options.Budget as the steps ask it: it refuses or allows a
// call and never downgrades one (the share spent is the store's to know).
func budgetOf(check func(ctx context.Context, orgID string) error) func(ctx context.Context, orgID, executionID, key string) (step.Gate, error) {
	if check == nil {
		return nil
	}
	return func(ctx context.Context, orgID, _, _ string) (step.Gate, error) {
		return step.Gate{}, check(ctx, orgID)
	}
}
