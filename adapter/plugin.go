package adapter

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	aclient "github.com/agentree/agentree/adapter/client"
	"github.com/agentree/agentree/adapter/workerstore"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/engine"
	"github.com/agentree/agentree/internal/step"
)

// PluginName is the plugin's name: its import path.
const PluginName = "github.com/agentree/agentree/adapter"

// Options configure the plugin. Store and at least one Agent are required;
// every other zero value is the default given in its comment.
type Options struct {
	// Store is the Postgres side store.
	Store *entrystore.Store
	// Agents to run; each is registered as a workflow of its kind.
	Agents []agentsdk.Agent
	// Providers answer model calls, each at its endpoint (see
	// agentsdk.Endpoints): a ModelRef picks one by provider and endpoint
	// name, never by URL or key.
	Providers []agentsdk.Provider
	// Tools models may call, by name.
	Tools []*agentsdk.Tool
	// ToolPolicy is the worker's tool policy: per tool name or glob, auto,
	// ask or forbid, over each tool's own default; a ceiling an
	// execution's config.toolPolicy can only tighten (agentsdk.PolicyFor).
	ToolPolicy agentsdk.Policies
	// OrgTools configures organizations apart, by organization ID: the
	// tools each may use (others are forbidden to it: not advertised in
	// its capabilities, refused at create, never run) and its policy over
	// ToolPolicy. An organization not in it gets every tool under
	// ToolPolicy. Both are ceilings an execution's config.toolPolicy can
	// only tighten (agentsdk.PolicyFor).
	OrgTools map[string]agentsdk.OrgTools
	// SafeCommands are bash commands that run without a person's approval
	// when bash's policy is ask (agentsdk.SafeCommand says how they
	// match: one simple command, no operators or expansions).
	SafeCommands []string
	// ContextWindows extends the built-in table of models' context
	// windows, which compaction measures contexts against (for models
	// the table does not know, or knows wrongly).
	ContextWindows agentsdk.ContextWindows
	// Activities are the agents' own activities, run with
	// Context.RunActivity, by name.
	Activities map[string]any
	// RemoteAgents are the remote A2A agents spawn_agents may name
	// (agents[].remote) to do a task as a durable sub-agent: the call
	// is an activity that records the remote task, so a retry re-attaches
	// to it. Only these: a call never gives a URL. Omitted: none.
	RemoteAgents []agentsdk.RemoteAgent
	// MaxSleep is the longest sleep (agentsdk.SleepTool) a model may ask
	// for; a longer one is answered with an error. Default
	// agentsdk.DefaultMaxSleep.
	MaxSleep time.Duration

	// WorkerStore, when set, is this worker's store for executions in
	// persistenceMode local, and WorkerName its name (required with it):
	// such an execution's conversation lives in the store of the first
	// worker that runs it, whose workflow then runs on that worker's own
	// task queue, WorkerQueue(taskQueue, WorkerName) — run a second worker
	// on it (the CLI's worker does). Keep the name across restarts: a
	// worker that comes back with it takes its executions up again.
	WorkerStore *workerstore.Store
	WorkerName  string
	// HolderGrace is how long a worker-held execution's worker may be gone
	// before the reconciler fails the execution; default 5 minutes.
	HolderGrace time.Duration

	// ModelAttempts is how many times one model is tried on retryable model
	// errors before falling back to the next; default 4. Only the model's
	// own failures count: an unreachable store or a dead worker is retried
	// without limit (see OutageLimit) and never triggers fallback.
	ModelAttempts int32
	// ModelTimeout bounds one model call; default 10 minutes. A call past
	// it is a model failure, counted against ModelAttempts.
	ModelTimeout time.Duration
	// ModelHeartbeatTimeout is how soon a model call on a dead worker is
	// retried elsewhere; default 5 seconds. Model calls heartbeat on a
	// timer while they run (every quarter of this), streaming or not.
	ModelHeartbeatTimeout time.Duration
	// ModelIdleTimeout is how long a model call's stream may send nothing
	// (before its first event or between two) before the call is given up
	// and made again, as a retryable model failure; default 2 minutes,
	// negative: no bound. Heartbeats run on a timer, so without it a
	// server that stops mid-stream without closing holds an activity's
	// attempt until ModelTimeout (the first, local attempt ends at
	// LocalCallLimit anyway).
	ModelIdleTimeout time.Duration
	// ActivityModelCalls runs every model call as an activity. By
	// default (false) a model call's first attempt is a local activity, in
	// the workflow task that asks for it: no task-queue round trip before
	// or after it, and an answer with tool calls goes on to them in the
	// same task — with tool calls local too (the default, see
	// ActivityToolCalls), a whole model → tools → model turn runs in one
	// workflow task (README "Model
	// calls" has the measured figures). What the default keeps of the
	// activity's guarantees: a cancel request stops a running call within
	// about a second (the worker watches the store for it, see
	// cancelWatch); a worker lost mid-call is noticed when the workflow
	// task times out (5 s) and the call is taken up again; a call that
	// outlasts LocalCallLimit and every retry run as activities, with
	// heartbeats. What it costs: a call that outlasts LocalCallLimit is
	// made again from its start as an activity, and while a local call
	// runs the workflow task heartbeats every 4 s, three history events
	// each (within the run's budget).
	ActivityModelCalls bool
	// ActivityToolCalls runs every tool call as an activity from its
	// first attempt. By default (false) a tool call's first attempt is a
	// local activity, as a model call's is, unless its tool is
	// agentsdk.Tool.LongRunning: what the default keeps and costs is as
	// for model calls (above), LocalCallLimit bounding the local attempt.
	ActivityToolCalls bool
	// LocalCallLimit bounds a model or tool call's first attempt as a
	// local activity; past it the call is made again as an activity, which
	// heartbeats, so long calls cost neither the run's history budget nor
	// a lost worker's time to notice. Default 20 seconds.
	LocalCallLimit time.Duration
	// ToolTimeout bounds one tool call; default 10 minutes.
	ToolTimeout time.Duration
	// ToolHeartbeatTimeout is how soon a tool call on a dead worker is
	// retried elsewhere; default 5 seconds. Tool calls heartbeat on a timer
	// (every quarter of this) while the tool runs.
	ToolHeartbeatTimeout time.Duration
	// ToolAttempts is how many times a tool call is tried on the tool's
	// Retryable errors; default 3. Store and worker failures do not count.
	// The last failure becomes an error result the model reads.
	ToolAttempts int32
	// OutageLimit bounds how long one model call, tool call or store write
	// of the workflow may keep retrying through infrastructure failures
	// (Postgres unreachable, workers dying) before the execution fails; 0,
	// the default, retries until the infrastructure is back, with backoff
	// capped at 5 seconds so work resumes within seconds of it. Give it in
	// hours if at all: an outage is not the agent's failure.
	OutageLimit time.Duration
	// ReconcileInterval is how often the worker's reconciler finishes work
	// a crashed gateway left half done (see Reconciler); default 5
	// seconds, -1 turns it off. Workers sharing a database elect one
	// reconciler at a time with a Postgres advisory lock.
	ReconcileInterval time.Duration
	// ReconcileGrace is how old half-done work must be before the
	// reconciler touches it, so it never races a live gateway's request;
	// default 15 seconds.
	ReconcileGrace time.Duration
	// PruneEvery, when positive, is how often the prune schedule
	// (agentree-prune-<queue>, a Temporal Schedule each worker ensures at
	// start) removes ended executions past their organization's
	// retention; zero or negative: no schedule (`agentree worker` sets its
	// configuration's retention.every, default 24 hours).
	PruneEvery time.Duration
	// Retention is the policy of organizations that set none; zero is
	// entrystore.DefaultRetention (30 days, 90 for failed executions).
	Retention entrystore.RetentionPolicy
	// ExecutionEnded, when set, is called once an execution has
	// completed, failed or been cancelled, on the worker that recorded it
	// (and again if that step is retried): where tools free what they
	// kept for it, such as its workspace. It must be quick and must not
	// fail the step.
	ExecutionEnded func(ctx context.Context, orgID, executionID string)
	// Workspaces, when its Root is set (the builtin tool set's root),
	// keeps executions' workspaces on their conversation trees: a
	// snapshot at every checkpoint, restored for forks, resumes and
	// segments that begin on a worker without it. Zero: off.
	Workspaces WorkspaceSnapshots
	// RunEvents and RunBytes are a run's history budget: a run whose
	// history has reached either continues as new when its execution
	// begins to wait for input (as it does when a turn as large as its
	// largest would not fit under the hard limits), and the next run
	// waits. Within a turn a run goes on while its history leaves a
	// segment room under the hard limits (100 events, 64 KiB), so turns
	// of any length stay under them. Defaults 60 events and 32 KiB: a run
	// holds two or three turns of a couple of tool calls. 1 continues as
	// new at every checkpoint.
	RunEvents int
	RunBytes  int
	// ContextCacheBytes is the size of the worker's cache of executions'
	// configurations and contexts (step.Cache), which lets a model call
	// read only the entries new since the execution's last call on this
	// worker; default step.DefaultCacheBytes (64 MiB), -1 turns it off.
	ContextCacheBytes int64
	// PayloadThreshold is the payload size past which Temporal payloads
	// go to the Postgres content store instead of history; default 16 KiB
	// (well under Temporal's 2 MB blob limit). -1 disables it.
	PayloadThreshold int
	// MaxPayloadSize is the largest payload the storage driver stores or
	// returns, in bytes; a larger one fails with ErrPayloadTooLarge.
	// Default DefaultMaxPayloadSize (64 MiB).
	MaxPayloadSize int64

	// CapabilityInterval is how often a worker re-records what it serves
	// (kinds, tools, model endpoints) in worker_capability, where gateways
	// validate requests against it; default DefaultCapabilityInterval
	// (10 s).
	CapabilityInterval time.Duration
	// CapabilityLease is how long a record counts without being refreshed,
	// so a worker that died unannounced drops out; default
	// DefaultCapabilityLease (30 s). It must exceed CapabilityInterval.
	CapabilityLease time.Duration
	// Version is the worker version recorded with its capabilities;
	// default the main module's version from the build info.
	Version string

	// TracerProvider and MeterProvider record a span per model call
	// (OpenTelemetry GenAI conventions) and per tool call, and the model
	// and tool metrics; nil ones are OpenTelemetry's globals (no-ops
	// unless set). Temporal's own spans and metrics come from the client:
	// give it the SDK's tracing interceptor and metrics handler
	// (go.temporal.io/sdk/contrib/opentelemetry).
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider

	locals    localOps
	remotes   map[string]agentsdk.RemoteAgent
	acts      *Activities
	tools     agentsdk.Tools
	endpoints *agentsdk.Endpoints
	caps      *capabilities
}

// NewPlugin returns the Agentree Temporal plugin. Give it to
// client.Options.Plugins: workers made from that client run the agents.
func NewPlugin(opts Options) (*temporal.SimplePlugin, error) {
	o, err := opts.validate()
	if err != nil {
		return nil, err
	}
	rec := &reconcilers{running: map[string]func(){}}
	return temporal.NewSimplePlugin(temporal.SimplePluginOptions{
		Name: PluginName,
		ConfigureClient: func(_ context.Context, co client.PluginConfigureClientOptions) error {
			if o.PayloadThreshold > 0 {
				addStorageDriver(&co.ClientOptions.ExternalStorage,
					NewStorageDriver(o.Store).WithMaxPayloadSize(o.MaxPayloadSize), o.PayloadThreshold)
			}
			o.caps.configureClient(co.ClientOptions)
			rec.setClientOptions(*co.ClientOptions)
			return nil
		},
		ConfigureWorker: func(_ context.Context, wo worker.PluginConfigureWorkerOptions) error {
			wo.WorkerOptions.Interceptors = append(wo.WorkerOptions.Interceptors, &fenceInterceptor{})
			o.caps.configureWorker(wo)
			rec.setQueue(wo.WorkerInstanceKey, wo.TaskQueue)
			return nil
		},
		RunContextBefore: func(ctx context.Context, ro temporal.SimplePluginRunContextBeforeOptions) error {
			o.register(ro.Registry, !ro.WorkflowReplayer)
			if err := o.caps.start(ctx, ro); err != nil {
				return err
			}
			if !ro.WorkflowReplayer && (o.ReconcileInterval > 0 || o.PruneEvery > 0) {
				return rec.start(ro.InstanceKey, o)
			}
			return nil
		},
		RunContextAfter: func(_ context.Context, ro temporal.SimplePluginRunContextAfterOptions) {
			o.caps.stop(ro)
			rec.stop(ro.InstanceKey)
		},
	})
}

func (o Options) validate() (*Options, error) {
	if o.Store == nil {
		return nil, errors.New("adapter: Options.Store is required")
	}
	if len(o.Agents) == 0 {
		return nil, errors.New("adapter: Options.Agents needs at least one agent")
	}
	kinds := map[string]bool{}
	for _, a := range o.Agents {
		if a.Kind() == "" || kinds[a.Kind()] {
			return nil, fmt.Errorf("adapter: agent kind %q is empty or given twice", a.Kind())
		}
		kinds[a.Kind()] = true
	}
	remotes, err := checkRemoteAgents(o.RemoteAgents)
	if err != nil {
		return nil, err
	}
	tools, err := agentsdk.NewTools(describeRemotes(o.Tools, remotes)...)
	if err != nil {
		return nil, fmt.Errorf("adapter: %w", err)
	}
	obs := newObserver(o.TracerProvider, o.MeterProvider)
	endpoints, err := agentsdk.NewEndpoints(obs.providers(o.Providers)...)
	if err != nil {
		return nil, fmt.Errorf("adapter: %w", err)
	}
	if o.ModelAttempts <= 0 {
		o.ModelAttempts = 4
	}
	if o.ModelTimeout <= 0 {
		o.ModelTimeout = 10 * time.Minute
	}
	if o.ModelHeartbeatTimeout <= 0 {
		o.ModelHeartbeatTimeout = 5 * time.Second
	}
	if o.ModelIdleTimeout == 0 {
		o.ModelIdleTimeout = 2 * time.Minute
	}
	if o.ToolTimeout <= 0 {
		o.ToolTimeout = 10 * time.Minute
	}
	if o.ToolHeartbeatTimeout <= 0 {
		o.ToolHeartbeatTimeout = 5 * time.Second
	}
	if o.ToolAttempts <= 0 {
		o.ToolAttempts = 3
	}
	if o.LocalCallLimit <= 0 {
		o.LocalCallLimit = 20 * time.Second
	}
	if o.MaxSleep < 0 {
		return nil, errors.New("adapter: Options.MaxSleep is negative")
	}
	if o.OutageLimit < 0 {
		return nil, errors.New("adapter: Options.OutageLimit is negative")
	}
	if problems := o.ToolPolicy.Problems("ToolPolicy"); len(problems) > 0 {
		return nil, errors.New("adapter: Options." + strings.Join(problems, "; "))
	}
	if problems := agentsdk.SafeCommandProblems("SafeCommands", o.SafeCommands); len(problems) > 0 {
		return nil, errors.New("adapter: Options." + strings.Join(problems, "; "))
	}
	if err := checkOrgTools(o.OrgTools, tools); err != nil {
		return nil, err
	}
	if o.ReconcileInterval == 0 {
		o.ReconcileInterval = 5 * time.Second
	}
	if o.ReconcileGrace <= 0 {
		o.ReconcileGrace = 15 * time.Second
	}
	if o.RunEvents == 0 {
		o.RunEvents = 60
	}
	if o.RunBytes == 0 {
		o.RunBytes = 32 << 10
	}
	if o.PayloadThreshold == 0 {
		o.PayloadThreshold = 16 << 10
	}
	if o.MaxPayloadSize == 0 {
		o.MaxPayloadSize = DefaultMaxPayloadSize
	}
	if o.CapabilityInterval == 0 {
		o.CapabilityInterval = DefaultCapabilityInterval
	}
	if o.CapabilityLease == 0 {
		o.CapabilityLease = max(DefaultCapabilityLease, 3*o.CapabilityInterval)
	}
	if o.MaxPayloadSize < 0 || o.CapabilityInterval < 0 || o.CapabilityLease <= o.CapabilityInterval {
		return nil, errors.New("adapter: MaxPayloadSize and CapabilityInterval must not be negative, and CapabilityLease must exceed CapabilityInterval")
	}
	if o.Version == "" {
		o.Version = moduleVersion()
	}
	o.tools, o.endpoints = tools, endpoints
	var store engine.Store = pgStore{es: o.Store}
	if o.WorkerStore != nil {
		if o.WorkerName == "" {
			return nil, errors.New("adapter: WorkerStore needs WorkerName, the worker's name")
		}
		store = newHeldAware(pgStore{es: o.Store}, o.WorkerStore)
	}
	if o.HolderGrace == 0 {
		o.HolderGrace = 5 * time.Minute
	}
	o.remotes = remotes
	o.locals = localOps{ops: &engine.Ops{Store: store, RemoteAgents: slices.Sorted(maps.Keys(remotes)), MaxSleep: o.MaxSleep}, ended: o.ExecutionEnded}
	if snaps := newSnapshots(o.Store, o.Workspaces); snaps != nil {
		o.locals.ops.Workspaces = snaps
	}
	var cache *step.Cache
	if o.ContextCacheBytes >= 0 {
		cache = step.NewCache(o.ContextCacheBytes)
		o.locals.ops.Appended = cache.Appended
	}
	o.caps = newCapabilities(&o)
	o.acts = &Activities{
		deps: step.Deps{Store: store, Endpoints: endpoints, Tools: tools, Policy: o.operator(), Windows: o.ContextWindows,
			Compacting: obs.compacting, Cache: cache, Gate: callGate(o.Store, time.Now, o.WorkerStore == nil), StandingApproval: standingApproval(o.Store),
			ActivityTools: o.ActivityToolCalls, ModelIdleTimeout: max(o.ModelIdleTimeout, 0), Interrupted: interrupted},
		store:         o.Store,
		modelAttempts: o.ModelAttempts, toolAttempts: o.ToolAttempts,
		modelTimeout:   o.ModelTimeout,
		modelHeartbeat: o.ModelHeartbeatTimeout / 4, toolHeartbeat: o.ToolHeartbeatTimeout / 4,
		retention: o.Retention,
		obs:       obs,
		cancels:   newCancelWatch(o.Store),
		remotes:   remotes,
	}
	return &o, nil
}

// Register registers the agents' workflows and the activities on r
// directly, for a worker or test environment that is not built from a
// client with the plugin. Options are as for NewPlugin; the external
// storage driver is the plugin's alone.
func Register(r Registry, opts Options) error {
	o, err := opts.validate()
	if err != nil {
		return err
	}
	o.register(r, true)
	return nil
}

// Registry is the part of a worker's registry the plugin uses.
type Registry interface {
	RegisterWorkflowWithOptions(any, workflow.RegisterOptions)
	RegisterActivityWithOptions(any, activity.RegisterOptions)
}

func (o *Options) register(r Registry, activities bool) {
	for _, a := range o.Agents {
		sr := &segmentRunner{agent: a, opts: o}
		r.RegisterWorkflowWithOptions(sr.run, workflow.RegisterOptions{Name: a.Kind()})
	}
	r.RegisterWorkflowWithOptions(PruneWorkflow, workflow.RegisterOptions{Name: PruneWorkflowName})
	r.RegisterWorkflowWithOptions(o.heldReader, workflow.RegisterOptions{Name: HeldReaderWorkflow})
	r.RegisterWorkflowWithOptions(o.explainWorkflow, workflow.RegisterOptions{Name: aclient.ExplainWorkflow})
	r.RegisterWorkflowWithOptions(o.branchSummary, workflow.RegisterOptions{Name: BranchSummaryWorkflow})
	r.RegisterWorkflowWithOptions(followUp, workflow.RegisterOptions{Name: aclient.FollowUpWorkflow})
	if !activities {
		return
	}
	r.RegisterActivityWithOptions(o.acts.CallModel, activity.RegisterOptions{Name: CallModelActivity})
	r.RegisterActivityWithOptions(o.acts.RunTool, activity.RegisterOptions{Name: RunToolActivity})
	r.RegisterActivityWithOptions(o.acts.ExecuteTool, activity.RegisterOptions{Name: ExecuteToolActivity})
	r.RegisterActivityWithOptions(o.acts.PrepareExecution, activity.RegisterOptions{Name: PrepareExecutionActivity})
	r.RegisterActivityWithOptions(o.acts.Prune, activity.RegisterOptions{Name: PruneActivityName})
	r.RegisterActivityWithOptions(o.acts.Compact, activity.RegisterOptions{Name: agentsdk.CompactActivity})
	r.RegisterActivityWithOptions(o.acts.RunRemoteAgent, activity.RegisterOptions{Name: RemoteAgentActivity})
	r.RegisterActivityWithOptions(o.acts.Explain, activity.RegisterOptions{Name: ExplainActivity})
	r.RegisterActivityWithOptions(o.acts.SummariseBranch, activity.RegisterOptions{Name: SummariseBranchActivity})
	r.RegisterActivityWithOptions(o.deliverFollowUp, activity.RegisterOptions{Name: aclient.DeliverFollowUpActivity})
	for name, fn := range o.Activities {
		r.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name})
	}
}

// infraRetry is the retry policy of every model and tool call and every
// store write: no attempt limit, backoff capped at 5 seconds. Model and
// tool failures set their own delay and limit (see Activities).
func infraRetry() *temporal.RetryPolicy {
	return &temporal.RetryPolicy{
		InitialInterval: 200 * time.Millisecond, BackoffCoefficient: 2, MaximumInterval: 5 * time.Second,
		NonRetryableErrorTypes: []string{ErrTypeInvalidInput, ErrTypeStoreRejected, ErrTypeModelExhausted},
	}
}

func (o *Options) modelActivityOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		// The activity enforces ModelTimeout itself, as a model failure;
		// this only catches a worker that stopped and heartbeats on.
		StartToCloseTimeout:    o.ModelTimeout + time.Minute,
		ScheduleToCloseTimeout: o.OutageLimit,
		HeartbeatTimeout:       o.ModelHeartbeatTimeout,
		RetryPolicy:            infraRetry(),
	}
}

func (o *Options) toolActivityOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout:    o.ToolTimeout,
		ScheduleToCloseTimeout: o.OutageLimit,
		HeartbeatTimeout:       o.ToolHeartbeatTimeout,
		WaitForCancellation:    true,
		RetryPolicy:            infraRetry(),
	}
}

func (o *Options) taskActivityOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{StartToCloseTimeout: o.ToolTimeout, HeartbeatTimeout: o.ToolHeartbeatTimeout}
}
