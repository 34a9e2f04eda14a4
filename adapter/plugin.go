package adapter

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/step"
	"github.com/agentree/agentree/entrystore"
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
	// Tasks are custom activities agents run with Context.RunTask, by name.
	Tasks map[string]any

	// ModelAttempts is how many times one model is tried before falling
	// back to the next; default 4.
	ModelAttempts int32
	// ModelTimeout bounds one model call; default 10 minutes.
	ModelTimeout time.Duration
	// ToolTimeout bounds one tool call; default 10 minutes.
	ToolTimeout time.Duration
	// ToolHeartbeatTimeout is how soon a tool call on a dead worker is
	// retried elsewhere; default 20 seconds.
	ToolHeartbeatTimeout time.Duration
	// ToolAttempts is how many times a tool call is tried; default 3.
	ToolAttempts int32
	// RunEvents and RunBytes are a run's history budget: after a
	// checkpoint, a run whose history has reached either continues as new;
	// otherwise the next segment runs in the same run. Defaults 40 events
	// and 32 KiB, which keep every run under 100 events and 64 KiB for
	// turns of up to ~15 tool calls; 1 continues as new at every checkpoint.
	RunEvents int
	RunBytes  int
	// PayloadThreshold is the payload size past which Temporal payloads
	// go to the Postgres content store instead of history; default 16 KiB
	// (well under Temporal's 2 MB blob limit). -1 disables it.
	PayloadThreshold int

	ops       *storeOps
	acts      *Activities
	tools     agentsdk.Tools
	endpoints *agentsdk.Endpoints
}

// NewPlugin returns the Agentree Temporal plugin. Give it to
// client.Options.Plugins: workers made from that client run the agents.
func NewPlugin(opts Options) (*temporal.SimplePlugin, error) {
	o, err := opts.validate()
	if err != nil {
		return nil, err
	}
	return temporal.NewSimplePlugin(temporal.SimplePluginOptions{
		Name: PluginName,
		ConfigureClient: func(_ context.Context, co client.PluginConfigureClientOptions) error {
			if o.PayloadThreshold > 0 {
				co.ClientOptions.ExternalStorage = converter.ExternalStorage{
					Drivers:              []converter.StorageDriver{NewStorageDriver(o.Store)},
					PayloadSizeThreshold: o.PayloadThreshold,
				}
			}
			return nil
		},
		RunContextBefore: func(_ context.Context, ro temporal.SimplePluginRunContextBeforeOptions) error {
			o.register(ro.Registry, !ro.WorkflowReplayer)
			return nil
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
	tools, err := agentsdk.NewTools(o.Tools...)
	if err != nil {
		return nil, fmt.Errorf("adapter: %w", err)
	}
	endpoints, err := agentsdk.NewEndpoints(o.Providers...)
	if err != nil {
		return nil, fmt.Errorf("adapter: %w", err)
	}
	if o.ModelAttempts == 0 {
		o.ModelAttempts = 4
	}
	if o.ModelTimeout == 0 {
		o.ModelTimeout = 10 * time.Minute
	}
	if o.ToolTimeout == 0 {
		o.ToolTimeout = 10 * time.Minute
	}
	if o.ToolHeartbeatTimeout == 0 {
		o.ToolHeartbeatTimeout = 20 * time.Second
	}
	if o.ToolAttempts == 0 {
		o.ToolAttempts = 3
	}
	if o.RunEvents == 0 {
		o.RunEvents = 40
	}
	if o.RunBytes == 0 {
		o.RunBytes = 32 << 10
	}
	if o.PayloadThreshold == 0 {
		o.PayloadThreshold = 16 << 10
	}
	o.tools, o.endpoints = tools, endpoints
	o.ops = &storeOps{es: o.Store}
	o.acts = &Activities{
		deps:      step.Deps{Store: pgStore{es: o.Store}, Endpoints: endpoints, Tools: tools},
		store:     o.Store,
		heartbeat: o.ToolHeartbeatTimeout / 4,
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
	if !activities {
		return
	}
	r.RegisterActivityWithOptions(o.acts.CallModel, activity.RegisterOptions{Name: CallModelActivity})
	r.RegisterActivityWithOptions(o.acts.RunTool, activity.RegisterOptions{Name: RunToolActivity})
	r.RegisterActivityWithOptions(o.acts.PrepareExecution, activity.RegisterOptions{Name: PrepareExecutionActivity})
	for name, fn := range o.Tasks {
		r.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name})
	}
}

func (o *Options) modelActivityOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: o.ModelTimeout,
		HeartbeatTimeout:    2 * time.Minute,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second,
			MaximumAttempts:        o.ModelAttempts,
			NonRetryableErrorTypes: []string{ErrTypeInvalidInput},
		},
	}
}

func (o *Options) toolActivityOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: o.ToolTimeout,
		HeartbeatTimeout:    o.ToolHeartbeatTimeout,
		WaitForCancellation: true,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second,
			MaximumAttempts:        o.ToolAttempts,
			NonRetryableErrorTypes: []string{ErrTypeInvalidInput},
		},
	}
}

func (o *Options) taskActivityOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{StartToCloseTimeout: o.ToolTimeout, HeartbeatTimeout: o.ToolHeartbeatTimeout}
}
