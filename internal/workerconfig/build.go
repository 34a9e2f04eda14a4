package workerconfig

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/agentsdk/tools/builtin"
	"github.com/agentree/agentree/agentsdk/tools/demo"
	"github.com/agentree/agentree/agentsdk/tools/mcp"
	"github.com/agentree/agentree/agentsdk/tools/workspace"
	"github.com/agentree/agentree/entrystore"
)

// toolSets are the built-in tool sets, by the name a configuration
// enables them with.
var toolSets = map[string]func(Config) ([]*agentsdk.Tool, error){
	demo.ToolSet:    func(Config) ([]*agentsdk.Tool, error) { return demo.Tools(), nil },
	builtin.ToolSet: builtinTools,
	// subagents: spawn_agents, answered by the agent's workflow.
	"subagents": func(Config) ([]*agentsdk.Tool, error) { return []*agentsdk.Tool{agentsdk.SpawnAgentsTool()}, nil },
	// timers: sleep, answered by the agent's workflow with a durable timer.
	"timers": func(c Config) ([]*agentsdk.Tool, error) { return []*agentsdk.Tool{agentsdk.SleepTool(c.MaxSleep)}, nil },
}

func toolSetNames() []string { return slices.Sorted(maps.Keys(toolSets)) }

// Worker is what a configuration builds: what the adapter's plugin runs.
// Close it when the worker stops.
type Worker struct {
	Agents    []agentsdk.Agent
	Providers []agentsdk.Provider
	Tools     []*agentsdk.Tool
	// ToolPolicy is the worker's tool policy (Config.ToolPolicy).
	ToolPolicy agentsdk.Policies
	// SafeCommands are the bash commands that skip the approval wait
	// (Config.SafeCommands).
	SafeCommands []string
	// Orgs are Config.Orgs as the plugin takes them (its OrgTools), but
	// by organization slug: the caller keys them by ID.
	Orgs map[string]agentsdk.OrgTools
	// ContextWindows is Config.ContextWindows.
	ContextWindows agentsdk.ContextWindows
	// RemoteAgents are Config.RemoteAgents with their tokens.
	RemoteAgents []agentsdk.RemoteAgent
	// MaxSleep is Config.MaxSleep.
	MaxSleep time.Duration
	// WorkerStore is Config.WorkerStore.
	WorkerStore WorkerStore
	// ActivityModelCalls and ActivityToolCalls are
	// Config.LocalActivities.ModelCalls and ToolCalls set to false; the
	// tools Config.LocalActivities.LongRunningTools names have LongRunning
	// set.
	ActivityModelCalls, ActivityToolCalls bool
	// PruneEvery and Retention are Config.Retention as the plugin takes
	// them.
	PruneEvery time.Duration
	Retention  entrystore.RetentionPolicy
	// ExecutionEnded, when set (the builtin tool set is), is what the
	// plugin calls when an execution completes, fails or is cancelled:
	// it removes the execution's workspace.
	ExecutionEnded func(ctx context.Context, orgID, executionID string)
	// SnapshotRoot, when set (the builtin tool set is, with
	// workspace.snapshots enabled), is the workspaces' root the plugin
	// snapshots at every checkpoint, within SnapshotLimits.
	SnapshotRoot   string
	SnapshotLimits workspace.SnapshotLimits

	mcp       *mcp.Clients
	workspace *workspaceJanitor
}

// Close ends the MCP servers' sessions and processes, and the workspace
// sweeps.
func (w Worker) Close() error {
	if w.workspace != nil {
		w.workspace.close()
	}
	if w.mcp == nil {
		return nil
	}
	return w.mcp.Close()
}

// Build makes the configuration's agents, providers and tools. Each
// endpoint's key is read here, once, from its variable; an endpoint whose
// API needs a key that is not set is an error naming the variable, so a
// misconfigured worker stops at start rather than failing executions.
// So does an MCP server that cannot be started, reached or listed within
// its timeout: Build connects to them all and lists their tools.
func (c Config) Build() (Worker, error) {
	return c.BuildFor(nil)
}

// BuildFor is Build for a worker whose MCP servers' organizations are
// named by slug: orgID gives a slug's organization ID (nil: the slug is
// taken as the ID, as in tests without a store).
func (c Config) BuildFor(orgID func(slug string) (string, error)) (Worker, error) {
	if orgID == nil {
		orgID = func(slug string) (string, error) { return slug, nil }
	}
	w := Worker{ToolPolicy: c.ToolPolicy, SafeCommands: c.SafeCommands, ContextWindows: c.ContextWindows, WorkerStore: c.WorkerStore, MaxSleep: c.MaxSleep,
		ActivityModelCalls: isFalse(c.LocalActivities.ModelCalls), ActivityToolCalls: isFalse(c.LocalActivities.ToolCalls)}
	if r := c.Retention; r.Every != nil {
		w.PruneEvery = *r.Every
		w.Retention = entrystore.RetentionPolicy{KeepDays: *r.KeepDays, KeepFailedDays: *r.KeepFailedDays}
	}
	for _, a := range c.Agents {
		w.Agents = append(w.Agents, react.New(react.Options{Kind: a.Kind}))
	}
	var err error
	if w.RemoteAgents, err = remoteAgents(c.RemoteAgents); err != nil {
		return Worker{}, err
	}
	for i, e := range c.Endpoints {
		p, err := e.provider()
		if err != nil {
			return Worker{}, fmt.Errorf("worker config: endpoints[%d] (%s): %w", i, e.Name, err)
		}
		w.Providers = append(w.Providers, p)
	}
	setTools := map[string][]string{}
	for _, s := range c.ToolSets {
		tools, err := toolSets[s](c)
		if err != nil {
			return Worker{}, fmt.Errorf("worker config: toolSets: %s: %w", s, err)
		}
		w.Tools = append(w.Tools, tools...)
		for _, t := range tools {
			setTools[s] = append(setTools[s], t.Name)
		}
	}
	if len(c.MCP) > 0 {
		servers, err := mcpServers(c.MCP, orgID)
		if err != nil {
			return Worker{}, fmt.Errorf("worker config: %w", err)
		}
		// Each server's timeout bounds its connection; the worker has no
		// context of its own yet.
		w.mcp, err = mcp.Connect(context.Background(), mcp.Options{Servers: servers})
		if err != nil {
			return Worker{}, fmt.Errorf("worker config: %w", err)
		}
		w.Tools = append(w.Tools, w.mcp.Tools()...)
	}
	if err := markLongRunning(w.Tools, c.LocalActivities.LongRunningTools); err != nil {
		_ = w.Close()
		return Worker{}, err
	}
	if w.Orgs, err = orgTools(c.Orgs, setTools, w.Tools); err != nil {
		_ = w.Close()
		return Worker{}, err
	}
	limitPerOrg(w.Tools, c.ToolCallsPerOrg)
	if slices.Contains(c.ToolSets, builtin.ToolSet) {
		w.workspace = startJanitor(c)
		w.ExecutionEnded = w.workspace.ended
		if !isFalse(c.Workspace.Snapshots.Enabled) {
			w.SnapshotRoot, w.SnapshotLimits = c.Workspace.Root, c.Workspace.Snapshots.SnapshotLimits()
		}
	}
	return w, nil
}

// isFalse reports whether b is set and false.
func isFalse(b *bool) bool { return b != nil && !*b }

// markLongRunning sets LongRunning on the tools names names, each of which
// must be one of tools.
func markLongRunning(tools []*agentsdk.Tool, names []string) error {
	for i, n := range names {
		j := slices.IndexFunc(tools, func(t *agentsdk.Tool) bool { return t.Name == n })
		if j < 0 {
			known := make([]string, len(tools))
			for k, t := range tools {
				known[k] = t.Name
			}
			return fmt.Errorf("worker config: localActivities.longRunningTools[%d]: the worker has no tool %q (it has: %s)", i, n, strings.Join(known, ", "))
		}
		tools[j].LongRunning = true
	}
	return nil
}

// provider builds e's provider.
func (e Endpoint) provider() (agentsdk.Provider, error) {
	key := ""
	if e.APIKeyEnv != "" {
		key = os.Getenv(e.APIKeyEnv)
	}
	prices := map[string]agentsdk.Price{}
	var unpriced []string
	for id, p := range e.Prices {
		if p.Unpriced {
			unpriced = append(unpriced, id)
			continue
		}
		prices[id] = agentsdk.Price{Input: p.Input, Output: p.Output, CacheRead: p.CacheRead, CacheWrite: p.CacheWrite}
	}
	if key == "" && e.BaseURL == "" && e.Provider != ProviderScripted {
		return nil, fmt.Errorf("$%s is empty: set it, or remove the endpoint", e.APIKeyEnv)
	}
	kind, ok := agentsdk.ProviderKindOf(e.Provider)
	if !ok { // ProviderScripted; validated in Parse. It costs nothing.
		return described{Provider: demo.Model(), info: agentsdk.EndpointInfo{
			Name: e.Name, Provider: ProviderScripted, Models: slices.Clone(e.Models), Priced: []string{agentsdk.AnyModel}}}, nil
	}
	p, err := kind.New(agentsdk.EndpointOptions{Endpoint: e.Name, Models: e.Models, BaseURL: e.BaseURL,
		APIKey: key, APIKeyEnv: e.APIKeyEnv, Prices: prices})
	if err != nil {
		return nil, err
	}
	// The endpoint serves only what it can price, or what the operator
	// marked unpriced: a model listed with neither stops the worker.
	info := p.Endpoint()
	info.Priced = append(p.PricedModels(), unpriced...)
	if e.Price == Unpriced {
		info.Priced = []string{agentsdk.AnyModel}
	}
	for _, m := range e.Models {
		if m != agentsdk.AnyModel && !info.HasPrice(m) {
			return nil, fmt.Errorf("models: %q has no price: give it one under prices ({%s: {input: …, output: …}}, USD per million tokens) or mark it unpriced ({%s: unpriced})", m, m, m)
		}
	}
	return described{Provider: p, info: info}, nil
}

// described is a provider serving a named endpoint as the configuration
// describes it: the scripted demo model, which does not describe itself,
// and the others with the models they may serve as far as prices go.
type described struct {
	agentsdk.Provider
	info agentsdk.EndpointInfo
}

func (d described) Endpoint() agentsdk.EndpointInfo { return d.info }
