package adapter

import (
	"context"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/engine"
	"github.com/agentree/agentree/internal/step"
)

// Activity type names.
const (
	CallModelActivity = "agentree.CallModel"
	RunToolActivity   = "agentree.RunTool"
	// ExecuteToolActivity runs a tool call without appending its result:
	// calls of one answer run at once and their results are appended in
	// order afterwards.
	ExecuteToolActivity = "agentree.ExecuteTool"
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
	// retention is the prune's policy for organizations without one.
	retention entrystore.RetentionPolicy
	obs       *observer
	// cancels stops local calls whose executions are being cancelled.
	cancels *cancelWatch
	// remotes are Options.RemoteAgents by name.
	remotes map[string]agentsdk.RemoteAgent
}

// CallModel answers the conversation at the input's leaf. See step.CallModel.
func (a *Activities) CallModel(ctx context.Context, in step.ModelInput) (agentsdk.ModelResult, error) {
	ctx, unwatch := a.watchLocal(ctx, in.OrgID, in.ExecutionID)
	defer unwatch()
	failures := previousFailures(ctx, in.Failures)
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
	if cancelRequested(ctx) {
		return res, errCallCancelled
	}
	if berr, ok := budgetError(err); ok {
		return res, berr
	}
	// A call whose own context ended (cancelled, or a local first attempt
	// past LocalCallLimit) failed for no fault of the model's.
	if _, ok := agentsdk.AsModelError(err); !ok || ctx.Err() != nil {
		return res, storeError(err)
	}
	f := engine.ClassifyModel(ctx, err, in.Model, failures.Load(), a.modelAttempts)
	return res, a.counted(ctx, failures, f, ErrTypeModel, ErrTypeModelExhausted, err)
}

// Compact writes a manual compaction for the workflow to append (the
// built-in activity agentsdk.CompactActivity). See step.Compact.
func (a *Activities) Compact(ctx context.Context, in agentsdk.CompactInput) (agentsdk.Compacted, error) {
	stop := startHeartbeat(ctx, a.modelHeartbeat, previousFailures(ctx, 0))
	defer stop()
	mctx, cancel := context.WithTimeout(ctx, a.modelTimeout)
	defer cancel()
	out, err := step.Compact(mctx, a.deps, in)
	if _, ok := agentsdk.AsModelError(err); err != nil && !ok {
		return out, storeError(err)
	}
	return out, err
}

// counted turns a counted failure's verdict into the error Temporal's
// retry policy acts on, recording the count in the heartbeat details for
// the next attempt.
func (a *Activities) counted(ctx context.Context, failures *atomic.Int32, f engine.Failure, typ, exhaustedType string, err error) error {
	if f.Verdict == engine.Final {
		return temporal.NewNonRetryableApplicationError(f.Message, typ, err)
	}
	failures.Store(f.Failures)
	activity.RecordHeartbeat(ctx, f.Failures)
	if f.Verdict == engine.Exhausted {
		return temporal.NewNonRetryableApplicationError(f.Message, exhaustedType, err)
	}
	return temporal.NewApplicationErrorWithOptions(f.Message, typ,
		temporal.ApplicationErrorOptions{Cause: err, NextRetryDelay: f.Delay})
}

// RunTool runs one tool call. See step.RunTool.
func (a *Activities) RunTool(ctx context.Context, in step.ToolInput) (res agentsdk.ToolResult, err error) {
	ctx, unwatch := a.watchLocal(ctx, in.OrgID, in.ExecutionID)
	defer unwatch()
	failures := previousFailures(ctx, in.Failures)
	stop := startHeartbeat(ctx, a.toolHeartbeat, failures)
	defer stop()
	ctx, span := a.obs.toolSpan(ctx, in.ToolCallID)
	d, ended := a.recording()
	defer func() { a.observeTool(ctx, span, in, *ended, res.IsError, err) }()
	res, err = step.RunTool(ctx, d, in)
	if err != nil && cancelRequested(ctx) {
		return res, errCallCancelled
	}
	if err == nil || !agentsdk.IsRetryable(err) || ctx.Err() != nil {
		return res, storeError(err)
	}
	f := engine.ClassifyTool(ctx, err, in.ToolCallID, failures.Load(), a.toolAttempts)
	if f.Verdict == engine.Exhausted {
		// The model reads the failure as the call's result: the activity
		// completes as it would with the tool's own error, so the
		// workflow (and its recorded histories) sees nothing new.
		res, err = step.GiveUpTool(ctx, d, in, f.Failures, err)
		return res, storeError(err)
	}
	return res, a.counted(ctx, failures, f, ErrTypeTool, ErrTypeTool, err)
}

// ExecuteTool runs one tool call of a parallel batch. See step.ExecuteTool.
func (a *Activities) ExecuteTool(ctx context.Context, in step.ToolInput) (res step.ToolOutcome, err error) {
	ctx, unwatch := a.watchLocal(ctx, in.OrgID, in.ExecutionID)
	defer unwatch()
	failures := previousFailures(ctx, in.Failures)
	stop := startHeartbeat(ctx, a.toolHeartbeat, failures)
	defer stop()
	ctx, span := a.obs.toolSpan(ctx, in.ToolCallID)
	d, ended := a.recording()
	defer func() { a.observeTool(ctx, span, in, *ended, res.IsError, err) }()
	res, err = step.ExecuteTool(ctx, d, in)
	if err != nil && cancelRequested(ctx) {
		return res, errCallCancelled
	}
	if err == nil || !agentsdk.IsRetryable(err) || ctx.Err() != nil {
		return res, storeError(err)
	}
	f := engine.ClassifyTool(ctx, err, in.ToolCallID, failures.Load(), a.toolAttempts)
	if f.Verdict == engine.Exhausted {
		res, err = step.GiveUpExecutedTool(ctx, d, in, f.Failures, err)
		return res, storeError(err)
	}
	return res, a.counted(ctx, failures, f, ErrTypeTool, ErrTypeTool, err)
}

// watchLocal watches a call run as a local activity for its execution's
// cancellation (cancelWatch); an activity learns of it from Temporal, at
// its heartbeat.
func (a *Activities) watchLocal(ctx context.Context, orgID, executionID string) (context.Context, func()) {
	if !activity.IsActivity(ctx) || !activity.GetInfo(ctx).IsLocalActivity {
		return ctx, func() {}
	}
	return a.cancels.watch(ctx, orgID, executionID)
}

// errCallCancelled ends a local call stopped by cancelWatch; the
// workflow then waits for its own cancellation (awaitCancel).
var errCallCancelled = temporal.NewNonRetryableApplicationError(errCancelRequested.Error(), ErrTypeCancelRequested, nil)

// recording is the steps' dependencies with a hook that keeps the record
// a tool call ends with.
func (a *Activities) recording() (step.Deps, *agentsdk.ToolCallRecord) {
	ended := &agentsdk.ToolCallRecord{}
	d := a.deps
	d.ToolRecorded = func(rec agentsdk.ToolCallRecord) { *ended = rec }
	return d, ended
}

// observeTool ends a tool call's span and counts it from its record: the
// tool-call record is what the API reports, so the metrics agree with it.
// The record the call ended with is it, unless the call waited for an
// approval, whose times and decision only the stored record has (and a
// call that did not end has none): then it is read. A record the store
// cannot give leaves the span unnamed, not the call failed.
func (a *Activities) observeTool(ctx context.Context, span trace.Span, in step.ToolInput, ended agentsdk.ToolCallRecord, isError bool, err error) {
	rec := ended
	if rec.ToolName == "" || rec.Policy == agentsdk.PolicyAsk {
		var rerr error
		rec, rerr = a.deps.Store.ToolCall(context.WithoutCancel(ctx), in.OrgID, in.ExecutionID, in.AssistantID, in.ToolCallID)
		if rerr != nil {
			rec = agentsdk.ToolCallRecord{}
		}
	}
	a.obs.endTool(ctx, span, rec, isError, err)
}

// previousFailures is the count of model or tool failures earlier attempts
// recorded in their heartbeat details; on the first attempt, first: the
// failures of a first try run as a local activity (0 without one).
func previousFailures(ctx context.Context, first int32) *atomic.Int32 {
	var n atomic.Int32
	n.Store(first)
	var prev int32
	if activity.HasHeartbeatDetails(ctx) && activity.GetHeartbeatDetails(ctx, &prev) == nil && prev > 0 {
		n.Store(prev)
	}
	return &n
}

// startHeartbeat heartbeats every period until stopped, whatever the call
// is doing, so the server notices a dead worker within the heartbeat
// timeout and cancellation reaches the running call. Each heartbeat
// carries the failure count, which the next attempt reads back.
func startHeartbeat(ctx context.Context, period time.Duration, failures *atomic.Int32) func() {
	if period <= 0 {
		period = time.Second
	}
	// The first heartbeat goes out at once and waits for the server: a
	// round trip per call. A count of failures is worth it (the next
	// attempt must read it back); a first attempt's zero is not — its
	// first tick is well inside the heartbeat timeout.
	if n := failures.Load(); n > 0 {
		activity.RecordHeartbeat(ctx, n)
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
				activity.RecordHeartbeat(ctx, failures.Load())
			}
		}
	}()
	return func() { close(done) }
}
