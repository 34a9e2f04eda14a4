package adapter

import (
	"errors"
	"time"

	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/internal/domain"
	"github.com/agentree/agentree/internal/engine"
	"github.com/agentree/agentree/internal/step"
)

// The types that cross the runtime boundary live in the engine, so
// clients need not import this package.
type (
	SegmentInput = engine.SegmentInput
	Result       = engine.Result
)

// SignalName is the one Temporal signal Agentree sends.
const SignalName = engine.SignalName

// segmentRunner runs one agent kind's segments: the engine, bound to
// Temporal.
type segmentRunner struct {
	agent agentsdk.Agent
	opts  *Options
}

// run is the workflow function registered under the agent's kind.
func (r *segmentRunner) run(ctx workflow.Context, in SegmentInput) (Result, error) {
	p := &temporalPort{ctx: ctx, opts: r.opts, sigCh: workflow.GetSignalChannel(ctx, SignalName), orgID: in.OrgID}
	// The run's history budget is recorded once per run, so a worker
	// restarted with another budget still replays this run as it ran.
	enc := workflow.SideEffect(ctx, func(workflow.Context) any {
		return runBudget{Events: r.opts.RunEvents, Bytes: r.opts.RunBytes, LocalModels: !r.opts.ActivityModelCalls, Markers: true,
			AtWaits: true, Changes: r.changes()}
	})
	if err := enc.Get(&p.budget); err != nil {
		return Result{}, err
	}
	if in.Local {
		queue, err := r.toWorkerQueue(ctx, p.budget.Changes, &in)
		if err != nil {
			return Result{}, err
		}
		if queue != "" {
			return Result{}, workflow.NewContinueAsNewError(workflow.WithWorkflowTaskQueue(ctx, queue), r.agent.Kind(), in)
		}
	}
	res, next, err := engine.Run(p, r.agent, in)
	switch {
	case err != nil:
		if errors.Is(err, agentsdk.ErrInvalidInput) {
			return Result{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeInvalidInput, err)
		}
		return Result{}, err
	case next != nil:
		return Result{}, workflow.NewContinueAsNewError(ctx, r.agent.Kind(), *next)
	case res.Status == string(domain.StatusFailed):
		return res, temporal.NewNonRetryableApplicationError(res.Error, "AgentFailed", nil, res)
	case res.Status == string(domain.StatusCancelled) && ctx.Err() != nil:
		return res, temporal.NewCanceledError()
	}
	return res, nil
}

// temporalPort is engine.Port inside a segment workflow: store operations
// are local activities, steps are activities, signals come on SignalName.
type temporalPort struct {
	ctx    workflow.Context
	opts   *Options
	sigCh  workflow.ReceiveChannel
	budget runBudget
	orgID  string
	// searchVersion is searchAttributesChange's version in this run, once
	// searchVersionKnown.
	searchVersion      workflow.Version
	searchVersionKnown bool
	// pending are the markers of the workflow task in progress.
	pending pendingMarkers
	// running is a RUNNING status not shown yet (upsertStatus).
	running runningStatus
	// turns: the history at the last wait this run checked for, and the
	// most a turn has added since the run began (RoomForAnother).
	turns turnSizes
}

// turnSizes are what a run's turns (from one wait for input to the next,
// the wait included) added to its history.
type turnSizes struct {
	lastEvents, lastBytes int // the history at the last wait
	maxEvents, maxBytes   int // the most a turn added
}

// add notes a turn that ended with the history at events and bytes.
func (t *turnSizes) add(events, bytes int) {
	t.maxEvents = max(t.maxEvents, events-t.lastEvents)
	t.maxBytes = max(t.maxBytes, bytes-t.lastBytes)
	t.lastEvents, t.lastBytes = events, bytes
}

func (p *temporalPort) Local(op engine.Op, in any, out any) error {
	f := workflow.ExecuteLocalActivity(workflow.WithLocalActivityOptions(p.ctx, p.opts.localOptions()), p.opts.locals.fn(op), in)
	err := p.getLocal(f, out)
	p.noteMarker(out)
	if err != nil {
		return err
	}
	if status, ok := statusAfter(in, out); ok {
		p.countStatus(in, status)
		return p.upsertStatus(status)
	}
	return nil
}

func (p *temporalPort) CallModel(in step.ModelInput) (agentsdk.ModelResult, error) {
	if p.budget.LocalModels {
		if res, done, err := p.callModelLocal(&in); done {
			return res, modelCallError(err)
		}
	}
	var res agentsdk.ModelResult
	p.showRunning()
	actx := workflow.WithActivityOptions(p.ctx, p.opts.modelActivityOptions())
	err := workflow.ExecuteActivity(actx, CallModelActivity, in).Get(p.ctx, &res)
	return res, modelCallError(err)
}

func (p *temporalPort) RunTool(in step.ToolInput) (agentsdk.ToolResult, error) {
	var res agentsdk.ToolResult
	f := p.startTool(RunToolActivity, in)
	return res, p.toolResult(f, RunToolActivity, in, &res)
}

func (p *temporalPort) ExecuteTools(ins []step.ToolInput) ([]step.ToolOutcome, error) {
	futures := make([]workflow.Future, len(ins))
	for i, in := range ins {
		futures[i] = p.startTool(ExecuteToolActivity, in)
	}
	outs := make([]step.ToolOutcome, len(ins))
	var first error
	for i, f := range futures {
		if err := p.toolResult(f, ExecuteToolActivity, ins[i], &outs[i]); err != nil && first == nil {
			first = err
		}
	}
	return outs, first
}

// The hard limits of one run's history (DESIGN.md "Budget"); RunEvents and
// RunBytes, which end a run between segments, sit well under them.
const (
	maxRunEvents = 100
	maxRunBytes  = 64 << 10
)

func (p *temporalPort) Room() (int, int) {
	events, bytes := p.historyNow()
	return maxRunEvents - events, maxRunBytes - bytes
}

func (p *temporalPort) Version(changeID string, maxSupported int) int {
	return int(version(p.ctx, p.budget.Changes, changeID, maxSupported))
}

func (p *temporalPort) RunActivity(name string, input any, output any) error {
	p.showRunning()
	actx := workflow.WithActivityOptions(p.ctx, p.opts.taskActivityOptions())
	return workflow.ExecuteActivity(actx, name, input).Get(p.ctx, output)
}

func (p *temporalPort) Now() time.Time { return workflow.Now(p.ctx) }

// Logger is the workflow's logger — its lines carry the workflow (the
// execution) and run IDs, and the trace and span IDs when the client has
// the tracing interceptor — with the execution's organization.
func (p *temporalPort) Logger() agentsdk.Logger {
	return log.With(workflow.GetLogger(p.ctx), "ExecutionID", workflow.GetInfo(p.ctx).WorkflowExecution.ID, "OrgID", p.orgID)
}
func (p *temporalPort) Cancelled() bool { return p.ctx.Err() != nil }

func (p *temporalPort) Detach() {
	p.ctx, _ = workflow.NewDisconnectedContext(p.ctx)
}

func (p *temporalPort) Received() []agentsdk.Signal {
	var out []agentsdk.Signal
	for {
		var s agentsdk.Signal
		if !p.sigCh.ReceiveAsync(&s) {
			return out
		}
		out = append(out, s)
	}
}

func (p *temporalPort) Await() (agentsdk.Signal, bool) {
	var s agentsdk.Signal
	got := false
	p.showRunning()
	sel := workflow.NewSelector(p.ctx)
	sel.AddReceive(p.sigCh, func(c workflow.ReceiveChannel, _ bool) {
		c.Receive(p.ctx, &s)
		got = true
	})
	sel.AddReceive(p.ctx.Done(), func(workflow.ReceiveChannel, bool) {})
	sel.Select(p.ctx)
	if p.ctx.Err() != nil {
		return s, false
	}
	return s, got
}

// RoomForAnother reports whether this run's history leaves room for
// another segment; if not, the run continues as new. Continuing as new at
// every checkpoint would keep runs smallest, but a run costs the server
// more than any other step of a turn, its first workflow task waits on
// the task queue's shared (not sticky) poll — which a worker starves
// while its sticky queue has a backlog — and servers delay the first task
// of a run that follows one younger than
// history.workflowIdReuseMinimalInterval (1 s by default). So a run holds
// as many segments as it can, and ends where nobody waits on the next:
// at a wait for input once past its budget, or when a turn as large as
// its largest would not fit under the hard limits (the next run starts
// while the user reads), and within a turn only when the hard limits
// leave no room for a segment.
func (p *temporalPort) RoomForAnother(idle bool) bool {
	if p.budget.Events <= 1 {
		return false
	}
	events, bytes := p.historyNow()
	under := events < p.budget.Events && bytes < p.budget.Bytes
	switch {
	case !p.budget.AtWaits:
		// Recorded before runs ended at waits: after the wait, by budget.
		return idle || under
	case idle:
		// Under the budget, and room under the hard limits for a turn
		// as large as the largest this run has had: a run that would
		// fill up within the next turn ends here, where nobody waits.
		p.turns.add(events, bytes)
		return under &&
			events+p.turns.maxEvents <= maxRunEvents-segmentEvents &&
			bytes+p.turns.maxBytes <= maxRunBytes-segmentBytes
	}
	return maxRunEvents-events >= segmentEvents && maxRunBytes-bytes >= segmentBytes
}

// What a segment may add to a run's history besides its tools, which it
// fits to the room it finds (at least one): a model call's activity and
// the workflow task after it, its markers, one tool call, and the
// reserve of the end of a segment.
const (
	segmentEvents = 24
	segmentBytes  = 16 << 10
)

// runBudget is a run's history budget (Options.RunEvents, RunBytes) and
// how the run's code runs, recorded once per run: runs recorded before a
// field existed replay with its zero value, as they ran.
type runBudget struct {
	Events, Bytes int
	// LocalModels runs model calls' first attempts as local activities
	// (unless Options.ActivityModelCalls).
	LocalModels bool `json:",omitempty"`
	// Markers counts the markers of the workflow task in progress in the
	// history the budget is measured against.
	Markers bool `json:",omitempty"`
	// AtWaits ends the run at a wait for input once past the budget, and
	// within a turn only at the hard limits (RoomForAnother).
	AtWaits bool `json:",omitempty"`
	// Changes are the versions of the workflow's changes this run runs
	// (see version): recorded here, they cost no history events.
	Changes map[string]int `json:",omitempty"`
}

// storeWriteTimeout bounds one attempt of a store write.
const storeWriteTimeout = 30 * time.Second

// forever stands for "no limit" where Temporal needs a duration.
const forever = 10 * 365 * 24 * time.Hour

// localOptions are the options of the workflow's store writes. A local
// activity's schedule-to-close timeout defaults to its start-to-close
// timeout, which would end the retries of a store write after 30 seconds
// of outage; it is OutageLimit instead (no limit by default). Retries back
// off to at most 5 seconds, under the workflow task timeout, so the SDK
// retries them in the worker while heartbeating the workflow task rather
// than through server timers.
func (o *Options) localOptions() workflow.LocalActivityOptions {
	limit := o.OutageLimit
	if limit <= 0 {
		limit = forever
	}
	return workflow.LocalActivityOptions{
		StartToCloseTimeout:    storeWriteTimeout,
		ScheduleToCloseTimeout: limit,
		RetryPolicy:            infraRetry(),
	}
}

// localToolOptions are a tool call's first attempt as a local activity
// (agentsdk.Tool.LocalActivity): one attempt; the activity's retries take
// over from a failed one.
func (o *Options) localToolOptions() workflow.LocalActivityOptions {
	return workflow.LocalActivityOptions{
		StartToCloseTimeout: min(o.ToolTimeout, o.LocalCallLimit),
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
	}
}

// localModelOptions are a model call's first attempt as a local activity:
// one attempt; the activity's retries take over from a failed one.
func (o *Options) localModelOptions() workflow.LocalActivityOptions {
	return workflow.LocalActivityOptions{
		StartToCloseTimeout: min(o.ModelTimeout, o.LocalCallLimit),
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
	}
}
