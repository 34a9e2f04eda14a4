package adapter

import (
	"context"
	"errors"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/step"
	"github.com/agentree/agentree/entrystore"
)

// Activity type names.
const (
	CallModelActivity = "agentree.CallModel"
	RunToolActivity   = "agentree.RunTool"
)

// Error types a workflow sees for permanent activity failures.
const (
	ErrTypeInvalidInput = "AgentreeInvalidInput"
	ErrTypeModel        = "AgentreeModelError"
	ErrTypeRetryable    = "AgentreeRetryable"
)

// Activities are the model-call and tool-call activities. Workflows call
// them by name; their inputs and outputs are references, never messages.
type Activities struct {
	deps  step.Deps
	store *entrystore.Store
	// heartbeat is how often a tool call heartbeats while it runs.
	heartbeat time.Duration
}

// CallModel answers the conversation at the input's leaf. See step.CallModel.
func (a *Activities) CallModel(ctx context.Context, in step.ModelInput) (agentsdk.ModelResult, error) {
	// Heartbeats ride on streamed deltas (the SDK throttles them), so a
	// worker that dies mid-stream is noticed within the heartbeat timeout.
	deps := a.deps
	deps.Store = heartbeatingStore{Store: deps.Store, ctx: ctx}
	res, err := step.CallModel(ctx, deps, in)
	return res, classify(err)
}

// RunTool runs one tool call. See step.RunTool.
func (a *Activities) RunTool(ctx context.Context, in step.ToolInput) (agentsdk.ToolResult, error) {
	stop := startHeartbeat(ctx, a.heartbeat)
	defer stop()
	res, err := step.RunTool(ctx, a.deps, in)
	return res, classify(err)
}

// heartbeatingStore heartbeats whenever the model step publishes a delta.
type heartbeatingStore struct {
	agentsdk.Store
	ctx context.Context
}

func (h heartbeatingStore) Publish(ctx context.Context, org, exec, event string, data any) error {
	activity.RecordHeartbeat(h.ctx)
	return h.Store.Publish(ctx, org, exec, event, data)
}

// startHeartbeat heartbeats every period until stopped, so the server
// notices a dead worker and cancellation reaches the running tool.
func startHeartbeat(ctx context.Context, period time.Duration) func() {
	if period <= 0 {
		period = time.Second
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx)
			}
		}
	}()
	return func() { close(done) }
}

// classify turns step errors into Temporal errors: bad input and
// non-retryable model errors fail at once; a model's retry-after is honoured.
func classify(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	if me, ok := agentsdk.AsModelError(err); ok {
		opts := temporal.ApplicationErrorOptions{NonRetryable: !me.Retryable, Cause: err}
		if me.RetryAfter > 0 {
			opts.NextRetryDelay = me.RetryAfter
		}
		return temporal.NewApplicationErrorWithOptions(me.Error(), ErrTypeModel, opts)
	}
	if errors.Is(err, agentsdk.ErrInvalidInput) {
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeInvalidInput, err)
	}
	return err
}
