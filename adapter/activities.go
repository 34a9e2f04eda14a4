package adapter

import (
	"context"
	"errors"
	"math"
	"sync/atomic"
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

// Activities are the model-call and tool-call activities. Workflows call
// them by name; their inputs and outputs are references, never messages.
//
// Their retry policies have no attempt limit, so an unreachable store or a
// dead worker is retried until it is back. Model and tool failures are
// counted here instead, in the activity's heartbeat details, which the
// server keeps from one attempt to the next: only they use up
// ModelAttempts and ToolAttempts.
type Activities struct {
	deps  step.Deps
	store *entrystore.Store
	// modelAttempts and toolAttempts are Options.ModelAttempts, ToolAttempts.
	modelAttempts, toolAttempts int32
	// modelTimeout bounds one model call (Options.ModelTimeout).
	modelTimeout time.Duration
	// modelHeartbeat and toolHeartbeat are how often calls heartbeat.
	modelHeartbeat, toolHeartbeat time.Duration
}

// CallModel answers the conversation at the input's leaf. See step.CallModel.
func (a *Activities) CallModel(ctx context.Context, in step.ModelInput) (agentsdk.ModelResult, error) {
	failures := previousFailures(ctx)
	stop := startHeartbeat(ctx, a.modelHeartbeat, failures)
	defer stop()
	// The model's own deadline makes a hung model a model error, counted
	// like any other; the activity's start-to-close timeout is later.
	mctx, cancel := context.WithTimeout(ctx, a.modelTimeout)
	defer cancel()
	res, err := step.CallModel(mctx, a.deps, in)
	if err == nil {
		return res, nil
	}
	me, ok := agentsdk.AsModelError(err)
	if !ok || errors.Is(ctx.Err(), context.Canceled) {
		return res, storeError(err)
	}
	if !me.Retryable {
		return res, temporal.NewNonRetryableApplicationError(me.Error(), ErrTypeModel, err)
	}
	n := failures.Add(1)
	activity.RecordHeartbeat(ctx, n)
	if n >= a.modelAttempts {
		return res, temporal.NewNonRetryableApplicationError(errAttempts(in.Model.Key(), n, me), ErrTypeModelExhausted, err)
	}
	delay := me.RetryAfter
	if delay <= 0 {
		delay = backoff(n)
	}
	return res, temporal.NewApplicationErrorWithOptions(me.Error(), ErrTypeModel,
		temporal.ApplicationErrorOptions{Cause: err, NextRetryDelay: delay})
}

// RunTool runs one tool call. See step.RunTool.
func (a *Activities) RunTool(ctx context.Context, in step.ToolInput) (agentsdk.ToolResult, error) {
	failures := previousFailures(ctx)
	stop := startHeartbeat(ctx, a.toolHeartbeat, failures)
	defer stop()
	res, err := step.RunTool(ctx, a.deps, in)
	if err == nil || !agentsdk.IsRetryable(err) || ctx.Err() != nil {
		return res, storeError(err)
	}
	n := failures.Add(1)
	activity.RecordHeartbeat(ctx, n)
	if n >= a.toolAttempts {
		return res, temporal.NewNonRetryableApplicationError(errAttempts("tool call "+in.ToolCallID, n, err), ErrTypeTool, err)
	}
	return res, temporal.NewApplicationErrorWithOptions(err.Error(), ErrTypeTool,
		temporal.ApplicationErrorOptions{Cause: err, NextRetryDelay: backoff(n)})
}

// previousFailures is the count of model or tool failures earlier attempts
// recorded in their heartbeat details (0 on the first attempt).
func previousFailures(ctx context.Context) *atomic.Int32 {
	var n atomic.Int32
	var prev int32
	if activity.HasHeartbeatDetails(ctx) && activity.GetHeartbeatDetails(ctx, &prev) == nil {
		n.Store(prev)
	}
	return &n
}

// backoff is the wait before retrying after the nth counted failure: 1 s,
// doubling, at most 30 s.
func backoff(n int32) time.Duration {
	d := time.Duration(float64(time.Second) * math.Pow(2, float64(n-1)))
	return min(d, 30*time.Second)
}

// startHeartbeat heartbeats every period until stopped, whatever the call
// is doing, so the server notices a dead worker within the heartbeat
// timeout and cancellation reaches the running call. Each heartbeat
// carries the failure count, which the next attempt reads back.
func startHeartbeat(ctx context.Context, period time.Duration, failures *atomic.Int32) func() {
	if period <= 0 {
		period = time.Second
	}
	activity.RecordHeartbeat(ctx, failures.Load())
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
				activity.RecordHeartbeat(ctx, failures.Load())
			}
		}
	}()
	return func() { close(done) }
}
