package agenttest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/internal/engine"
	"github.com/agentree/agentree/internal/step"
)

// maxInfraRetries bounds the retries of an unreachable store in memory,
// where Temporal would retry without limit.
const maxInfraRetries = 100

// memPort is engine.Port over direct calls. Inputs and outputs of store
// operations go through JSON, as they do through Temporal, so a value
// that does not survive encoding fails here too.
type memPort struct {
	x   *Execution
	ops *engine.Ops
	// ctx is the steps' context; cancel ends it (Execution.Cancel).
	ctx       context.Context
	cancelCtx context.CancelFunc
	cancelled atomic.Bool
	// delivered are signals not yet handed to the engine.
	mu        sync.Mutex
	delivered []agentsdk.Signal
	// idle tells Run the engine waits or ended; wake resumes it.
	idle, wake chan struct{}
	ended      bool
	waitReason string
	state      agentsdk.State
}

func newMemPort(x *Execution) *memPort {
	ctx, cancel := context.WithCancel(context.Background())
	return &memPort{x: x, ops: &engine.Ops{Store: x.Store}, ctx: ctx, cancelCtx: cancel,
		idle: make(chan struct{}), wake: make(chan struct{})}
}

func (p *memPort) deliver(s agentsdk.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.delivered = append(p.delivered, s)
}

func (p *memPort) cancel() {
	p.cancelled.Store(true)
	p.cancelCtx()
}

// roundTrip passes v through JSON into a new T.
func roundTrip[T any](v any) (T, error) {
	var out T
	b, err := json.Marshal(v)
	if err != nil {
		return out, err
	}
	return out, json.Unmarshal(b, &out)
}

func (p *memPort) Local(op engine.Op, in any, out any) error {
	// Store operations outlive cancellation, as Temporal's local
	// activities on a disconnected context do.
	ctx := context.Background()
	var res any
	var err error
	switch op {
	case engine.OpBegin:
		res, err = call(ctx, in, p.ops.Begin)
	case engine.OpAppend:
		res, err = call(ctx, in, p.ops.Append)
	case engine.OpConsumeSignal:
		res, err = call(ctx, in, p.ops.ConsumeSignal)
	case engine.OpSignalValue:
		res, err = call(ctx, in, p.ops.SignalValue)
	case engine.OpCheckpoint:
		res, err = call(ctx, in, func(ctx context.Context, in engine.CheckpointInput) (any, error) {
			if in.Wait {
				p.waitReason = in.WaitReason
			}
			return nil, p.ops.Checkpoint(ctx, in)
		})
	case engine.OpFinish:
		res, err = call(ctx, in, p.ops.Finish)
	case engine.OpEntry:
		res, err = call(ctx, in, p.ops.Entry)
	case engine.OpToolResults:
		res, err = call(ctx, in, p.ops.AppendToolResults)
	case engine.OpRequestApproval:
		res, err = call(ctx, in, p.ops.RequestApproval)
	case engine.OpExpireApprovals:
		res, err = call(ctx, in, p.ops.ExpireApprovals)
	case engine.OpDecisions:
		res, err = call(ctx, in, p.ops.Decisions)
	case engine.OpApplyDecision:
		res, err = call(ctx, in, p.ops.ApplyDecision)
	case engine.OpRejectCall:
		res, err = call(ctx, in, p.ops.RejectCall)
	case engine.OpPlanSpawn:
		res, err = call(ctx, in, p.ops.PlanSpawn)
	case engine.OpAnswerSpawn:
		res, err = call(ctx, in, p.ops.AnswerSpawn)
	case engine.OpPlanSleep:
		res, err = call(ctx, in, p.ops.PlanSleep)
	case engine.OpClientResults:
		res, err = call(ctx, in, p.ops.ClientResults)
	case engine.OpPublish:
		res, err = call(ctx, in, func(ctx context.Context, in engine.PublishInput) (any, error) {
			return nil, p.ops.Publish(ctx, in)
		})
	default:
		return fmt.Errorf("agenttest: unknown store operation %q", op)
	}
	if err != nil || out == nil {
		return err
	}
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

// call runs fn with in passed through JSON, retrying an unreachable store.
func call[I, O any](ctx context.Context, in any, fn func(context.Context, I) (O, error)) (any, error) {
	typed, err := roundTrip[I](in)
	if err != nil {
		return nil, err
	}
	for range maxInfraRetries {
		var out O
		out, err = fn(ctx, typed)
		if err == nil || engine.ClassifyStore(err, 0).Verdict != engine.Retry {
			return out, err
		}
	}
	return nil, err
}

// attempts runs a step as Temporal's retry policy would, without waiting:
// a counted failure is tried again until classify says it is exhausted or
// final, an unreachable store up to maxInfraRetries times. A model call
// that exhausted its attempts is marked engine.ErrModelExhausted (the
// engine falls back); a tool call's is an exhaustedTool, given up on.
func attempts[T any](what string, run func() (T, error), classify func(err error, failures int32) engine.Failure) (T, error) {
	var failures int32
	for range maxInfraRetries {
		res, err := run()
		if err == nil {
			return res, nil
		}
		f := classify(err, failures)
		switch f.Verdict {
		case engine.Exhausted:
			if strings.HasPrefix(what, "model") {
				return res, engine.MarkExhausted(err)
			}
			return res, exhaustedTool{Failure: f, err: err}
		case engine.Final:
			return res, err
		}
		failures = f.Failures
	}
	var zero T
	return zero, fmt.Errorf("agenttest: %s: the store stayed unreachable", what)
}

func (p *memPort) CallModel(in step.ModelInput) (agentsdk.ModelResult, error) {
	return attempts("model call "+in.Key,
		func() (agentsdk.ModelResult, error) { return step.CallModel(p.ctx, p.x.deps, in) },
		func(err error, n int32) engine.Failure {
			return engine.ClassifyModel(p.ctx, err, in.Model, n, p.x.opts.ModelAttempts)
		})
}

func (p *memPort) RunTool(in step.ToolInput) (agentsdk.ToolResult, error) {
	res, err := attempts("tool call "+in.ToolCallID,
		func() (agentsdk.ToolResult, error) { return step.RunTool(p.ctx, p.x.deps, in) },
		p.classifyTool(in))
	if f, ok := toolExhausted(err); ok {
		return step.GiveUpTool(p.ctx, p.x.deps, in, f.Failures, f.err)
	}
	return res, err
}

// exhaustedTool is a tool call's last counted failure: the Temporal
// plugin's activity gives up on it with an error result for the model
// (step.GiveUpTool), and so does this runtime.
type exhaustedTool struct {
	engine.Failure
	err error
}

func (e exhaustedTool) Error() string { return e.Message }
func (e exhaustedTool) Unwrap() error { return e.err }

func toolExhausted(err error) (exhaustedTool, bool) {
	var e exhaustedTool
	return e, errors.As(err, &e)
}

func (p *memPort) classifyTool(in step.ToolInput) func(error, int32) engine.Failure {
	return func(err error, n int32) engine.Failure {
		return engine.ClassifyTool(p.ctx, err, in.ToolCallID, n, p.x.opts.ToolAttempts)
	}
}

// ExecuteTools runs the calls at once, each with RunTool's retries.
func (p *memPort) ExecuteTools(ins []step.ToolInput) ([]step.ToolOutcome, error) {
	outs := make([]step.ToolOutcome, len(ins))
	errs := make([]error, len(ins))
	var wg sync.WaitGroup
	for i, in := range ins {
		wg.Go(func() { outs[i], errs[i] = p.executeTool(in) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return outs, err
		}
	}
	return outs, nil
}

func (p *memPort) executeTool(in step.ToolInput) (step.ToolOutcome, error) {
	out, err := attempts("tool call "+in.ToolCallID,
		func() (step.ToolOutcome, error) { return step.ExecuteTool(p.ctx, p.x.deps, in) },
		p.classifyTool(in))
	if f, ok := toolExhausted(err); ok {
		return step.GiveUpExecutedTool(p.ctx, p.x.deps, in, f.Failures, f.err)
	}
	return out, err
}

// Room is unlimited: there is no history in memory.
func (p *memPort) Room() (int, int) { return 1 << 30, 1 << 30 }

// Version is always the newest: nothing was recorded before. An agent
// that declares its changes (agentsdk.Versioned) must declare every change
// it asks for, at the version it asks with: one it left out would cost
// every Temporal run a marker. The segment fails with that error.
func (p *memPort) Version(changeID string, maxSupported int) int {
	if runtime, ok := agentsdk.RuntimeChanges[changeID]; ok && runtime == maxSupported {
		return maxSupported
	}
	if v, ok := p.x.opts.Agent.(agentsdk.Versioned); ok {
		if declared, ok := v.Changes()[changeID]; !ok || declared != maxSupported {
			panic(fmt.Sprintf("agenttest: agent %s asks for change %q at version %d but declares %v in Changes",
				v.Kind(), changeID, maxSupported, v.Changes()))
		}
	}
	return maxSupported
}

// RunChildren: the in-memory runtime runs one execution; sub-agents need
// the Temporal plugin.
func (p *memPort) RunChildren(string, string, []engine.ChildStart, bool) ([]engine.ChildOutcome, error) {
	return nil, fmt.Errorf("%w: sub-agents (spawn_agents) need the Temporal runtime; agenttest runs one execution", agentsdk.ErrInvalidInput)
}

func (p *memPort) RunActivity(name string, input any, output any) error {
	fn, ok := p.x.opts.Activities[name]
	if name == agentsdk.CompactActivity {
		fn, ok = p.compact, true
	}
	if !ok {
		return fmt.Errorf("%w: unknown activity %q", agentsdk.ErrInvalidInput, name)
	}
	in, err := json.Marshal(input)
	if err != nil {
		return err
	}
	out, err := fn(p.ctx, in)
	if err != nil {
		return err
	}
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, output)
}

func (p *memPort) Now() time.Time           { return time.Now() }
func (p *memPort) Logger() agentsdk.Logger  { return slog.Default() }
func (p *memPort) Cancelled() bool          { return p.cancelled.Load() }
func (p *memPort) Detach()                  {}
func (p *memPort) RoomForAnother(bool) bool { return true }

func (p *memPort) Received() []agentsdk.Signal {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.delivered
	p.delivered = nil
	return out
}

// deliverFront puts signals back ahead of any delivered since.
func (p *memPort) deliverFront(ss []agentsdk.Signal) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.delivered = append(ss, p.delivered...)
}

// Await hands control back to Run while nothing is delivered: the
// execution waits until the test signals (or cancels) and runs it again.
func (p *memPort) Await() (agentsdk.Signal, bool) {
	for {
		if p.cancelled.Load() {
			return agentsdk.Signal{}, false
		}
		if got := p.Received(); len(got) > 0 {
			p.deliverFront(got[1:])
			return got[0], true
		}
		p.idle <- struct{}{}
		<-p.wake
	}
}

// AwaitUntil is Await that also ends once the clock reaches at: a test
// runs the execution again (Execution.Run) after that time to wake it.
func (p *memPort) AwaitUntil(at time.Time) (agentsdk.Signal, bool, bool) {
	for {
		if p.cancelled.Load() {
			return agentsdk.Signal{}, false, false
		}
		if got := p.Received(); len(got) > 0 {
			p.deliverFront(got[1:])
			return got[0], false, true
		}
		if !p.Now().Before(at) {
			return agentsdk.Signal{}, true, true
		}
		p.idle <- struct{}{}
		<-p.wake
	}
}

// compact is the built-in activity agentsdk.CompactActivity.
func (p *memPort) compact(ctx context.Context, input json.RawMessage) (any, error) {
	var in agentsdk.CompactInput
	if err := json.Unmarshal(input, &in); err != nil {
		return nil, err
	}
	return step.Compact(ctx, p.x.deps, in)
}
