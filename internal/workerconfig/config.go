package workerconfig

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/agentsdk/tools/demo"
)

// EnvVar names the environment variable that gives the configuration
// file's path when no --config flag does.
const EnvVar = "AGENTREE_CONFIG"

// DefaultTaskQueue is the task queue of a configuration that names none:
// the gateway's default too.
const DefaultTaskQueue = "agentree"

// ProviderScripted is the demo's scripted model, a provider kind besides
// the registered ones (agentsdk.ProviderKinds, listed in providers.go):
// no network, no key.
const ProviderScripted = "scripted"

// BuiltinReact is the built-in ReAct agent, the only Agent.Builtin today.
const BuiltinReact = "react"

// Config is a worker's configuration. The zero value of each field means
// its default, given in its comment.
type Config struct {
	// TaskQueue is the Temporal task queue the worker polls; default
	// "agentree".
	TaskQueue string `yaml:"taskQueue"`
	// Namespace is the Temporal namespace; default: what Temporal's own
	// environment configuration says (TEMPORAL_NAMESPACE, or the profile
	// in TEMPORAL_CONFIG_FILE), else "default".
	Namespace string `yaml:"namespace"`
	// Endpoints are the model endpoints the worker calls, in order: the
	// first of a provider is that provider's default. Omitted: the demo
	// endpoint, plus "anthropic" and "openai" when ANTHROPIC_API_KEY or
	// OPENAI_API_KEY is set.
	Endpoints []Endpoint `yaml:"endpoints"`
	// ToolSets are the built-in tool sets the worker serves; omitted:
	// ["demo"]. An empty list serves none.
	ToolSets []string `yaml:"toolSets"`
	// MCP are the MCP servers whose tools the worker offers, as
	// <server>__<tool>; omitted: none.
	MCP []MCPServer `yaml:"mcp"`
	// Agents are the agents the worker runs; omitted: the built-in react
	// agent as "react-agent".
	Agents []Agent `yaml:"agents"`
	// RemoteAgents are the remote A2A agents spawn_agents may give tasks
	// to, by name; omitted: none.
	RemoteAgents []RemoteAgent `yaml:"remoteAgents"`
	// MaxSleep is the longest sleep the timers tool set's sleep tool
	// allows; omitted: 24h. A model that asks for more gets an error.
	MaxSleep time.Duration `yaml:"maxSleep"`
	// Workspace is where the builtin tool set's file tools and bash work.
	Workspace Workspace `yaml:"workspace"`
	// ToolCallsPerOrg caps the tool calls of one organization running at
	// once on this worker, so one tenant cannot take every activity slot:
	// a call past the cap waits (heartbeating) for one of its org's calls
	// to end. Default DefaultToolCallsPerOrg; -1: no cap.
	ToolCallsPerOrg int `yaml:"toolCallsPerOrg"`
	// ToolPolicy sets, per tool name or glob, whether a call runs (auto),
	// waits for a person's approval (ask) or is never run (forbid): a
	// ceiling an execution's config.toolPolicy can only tighten; omitted:
	// each tool's own default (the builtin set's bash, write_file and
	// edit_file ask).
	ToolPolicy agentsdk.Policies `yaml:"toolPolicy"`
	// SafeCommands are bash commands that run without a person's approval
	// when bash's policy is ask, e.g. ["ls *", "git status", "cat *"]: a
	// call matches only when its script is ONE simple command (no ;, &&,
	// |, redirects, $ or backticks, globs or VAR=value) whose words match
	// a pattern's ("*" in a word: any text; a last word "*": any further
	// arguments). Omitted: none.
	SafeCommands []string `yaml:"safeCommands"`
	// Orgs configure organizations apart, by slug: the tool sets and tools
	// each may use and its policy over toolPolicy (Org); omitted: every
	// organization gets every tool under toolPolicy.
	Orgs map[string]Org `yaml:"orgs"`
	// ContextWindows are models' context windows in tokens by model ID
	// prefix (or "provider/prefix"), over the built-in table: what
	// compaction measures a context against. Omitted: the built-in table
	// (128,000 for a model it does not know).
	ContextWindows agentsdk.ContextWindows `yaml:"contextWindows"`
	// Retention is how long ended executions are kept and how often the
	// worker's prune schedule removes the rest.
	Retention Retention `yaml:"retention"`
	// WorkerStore, with a dir, gives the worker a store for executions in
	// persistenceMode local; omitted: the worker takes none (a worker-held
	// execution that reaches it first fails, saying so).
	WorkerStore WorkerStore `yaml:"localStore"`
	// Observability configures metrics and logs; traces and metrics are
	// exported by the standard OTEL_* environment variables
	// (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_SERVICE_NAME, …) whatever it says.
	Observability Observability `yaml:"observability"`
	// LocalActivities chooses which calls' first attempts run as Temporal
	// local activities; omitted: model calls and tool calls do, but for
	// the tools marked long-running (by their authors, as bash and MCP
	// tools are, or in LongRunningTools).
	LocalActivities LocalActivities `yaml:"localActivities"`
}

// LocalActivities chooses which calls run as local activities, in the
// workflow task that asks for them (README "Model calls").
type LocalActivities struct {
	// ModelCalls runs model calls' first attempts as local activities;
	// default true, false runs every model call as an activity
	// (adapter.Options.ActivityModelCalls).
	ModelCalls *bool `yaml:"modelCalls"`
	// ToolCalls runs tool calls' first attempts as local activities;
	// default true, false runs every tool call as an activity
	// (adapter.Options.ActivityToolCalls).
	ToolCalls *bool `yaml:"toolCalls"`
	// LongRunningTools are the names of the tools whose calls run as
	// activities from their first attempt (agentsdk.Tool.LongRunning),
	// besides those their authors mark: tools that may run past the
	// local-call limit (20 s) or must not be cut and made again. A name no
	// tool of the worker has stops it at start.
	LongRunningTools []string `yaml:"longRunningTools"`
}

// workerName is what a worker's name may hold: it names a task queue.
var workerName = regexp.MustCompile(`^[A-Za-z0-9._-]{1,100}$`)

// WorkerStore configures the worker store (issue 16).
type WorkerStore struct {
	// Dir is where the store's SQLite file lives.
	Dir string `yaml:"dir"`
	// Name is the worker's name, which its worker-held executions are bound
	// to: keep it across restarts; default the host name.
	Name string `yaml:"name"`
	// Grace is how long the worker may be gone before its worker-held
	// executions fail; default 5m.
	Grace time.Duration `yaml:"grace"`
}

// Observability configures the worker's metrics endpoint and logs.
type Observability struct {
	// MetricsAddr, when set, serves Prometheus metrics at
	// http://<MetricsAddr>/metrics; omitted: no endpoint.
	MetricsAddr string `yaml:"metricsAddr"`
	// LogFormat is "text" (the default) or "json".
	LogFormat string `yaml:"logFormat"`
}

// Retention configures pruning (issue 16).
type Retention struct {
	// Every is the prune schedule's interval; default 24h; 0s: no schedule.
	Every *time.Duration `yaml:"every"`
	// KeepDays and KeepFailedDays are the policy of organizations without
	// their own (PUT …/retention): days kept after an execution ends;
	// defaults 30 and 90.
	KeepDays       *int `yaml:"keepDays"`
	KeepFailedDays *int `yaml:"keepFailedDays"`
}

// Endpoint is one named model endpoint.
type Endpoint struct {
	// Name is what a request's model.endpoint names; default: Provider.
	// Unique in the file.
	Name string `yaml:"name"`
	// Provider is the provider kind: anthropic, openai (also any
	// OpenAI-compatible server) or scripted (the demo's model). Required.
	Provider string `yaml:"provider"`
	// BaseURL is the API's address; default the provider's own API.
	BaseURL string `yaml:"baseUrl"`
	// APIKeyEnv names the environment variable holding the key, read once
	// at start; default, without a BaseURL, ANTHROPIC_API_KEY for
	// anthropic and OPENAI_API_KEY for openai; none with one (so another
	// server never receives the provider's key unless told to).
	// Anthropic's and OpenAI's own APIs need a key: a worker whose
	// variable is empty does not start.
	APIKeyEnv string `yaml:"apiKeyEnv"`
	// Models are the model IDs the endpoint serves; required: ["*"]
	// serves any the endpoint can price, so write it only on purpose.
	Models []string `yaml:"models"`
	// Prices override the provider's built-in price table, by model ID,
	// in USD per million tokens; "unpriced" lets a model run without a
	// price (usage then says "unpriced", never $0). A model with neither
	// a price nor the mark is not served.
	Prices map[string]Price `yaml:"prices"`
	// Price "unpriced" marks every model of the endpoint unpriced (a
	// local server that costs nothing per token); default "" (each model
	// needs a price).
	Price string `yaml:"price"`
}

// Unpriced is the Price (or a Prices value) of a model that runs without
// a price.
const Unpriced = "unpriced"

// Price is a model's price in USD per million tokens, or Unpriced.
type Price struct {
	Input      float64 `yaml:"input"`
	Output     float64 `yaml:"output"`
	CacheRead  float64 `yaml:"cacheRead"`
	CacheWrite float64 `yaml:"cacheWrite"`
	// Unpriced is the scalar "unpriced" in place of a price.
	Unpriced bool `yaml:"-"`
}

// UnmarshalYAML takes "unpriced" as well as a price.
func (p *Price) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		if n.Value != Unpriced {
			return fmt.Errorf("line %d: %q is not a price: give {input: …, output: …} in USD per million tokens, or unpriced", n.Line, n.Value)
		}
		*p = Price{Unpriced: true}
		return nil
	}
	type plain Price // without this method
	return n.Decode((*plain)(p))
}

// Agent is one agent the worker runs.
type Agent struct {
	// Kind is the kind requests name and the Temporal workflow type;
	// required, unique.
	Kind string `yaml:"kind"`
	// Builtin is the implementation; default and only value: "react".
	Builtin string `yaml:"builtin"`
}

// Path is the configuration file to load: flag when given, else
// $AGENTREE_CONFIG; "" means none (Default).
func Path(flag string) string {
	return cmp.Or(flag, os.Getenv(EnvVar))
}

// Load reads and validates the file at path; "" is Default.
func Load(path string) (Config, error) {
	if path == "" {
		return Default(), nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("worker config: %w", err)
	}
	c, err := Parse(b)
	if err != nil {
		return Config{}, fmt.Errorf("worker config %s: %w", path, err)
	}
	return c, nil
}

// Default is the configuration with no file: every field's default.
func Default() Config {
	c, _ := Config{}.withDefaults()
	return c
}

// Parse decodes a YAML configuration strictly, fills in the defaults and
// validates it. Errors name the field, as the file spells it.
func Parse(data []byte) (Config, error) {
	var c Config
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) {
		return Config{}, yamlError(err)
	}
	return c.withDefaults()
}

// unknownField matches yaml's error for a key the structs lack, whose
// wording names Go types.
var unknownField = regexp.MustCompile(`field (\S+) not found in type workerconfig\.(\w+)`)

var sections = map[string]string{"Config": "the top level", "Endpoint": "an endpoint", "Price": "a price", "plain": "a price", "Agent": "an agent",
	"Workspace": "workspace", "Bash": "workspace.bash", "Limits": "workspace.bash.limits", "MCPServer": "an MCP server", "RemoteAgent": "a remote agent", "LocalActivities": "localActivities", "Org": "an org"}

// wrongType matches yaml's error for a value of the wrong shape, whose
// wording names the Go type it was decoded into.
var wrongType = regexp.MustCompile(`cannot unmarshal (\S+)(?: (.*))? into (\S+)`)

// yamlKinds name the kinds of YAML node yaml's errors give as tags.
var yamlKinds = map[string]string{"!!seq": "a list", "!!map": "a mapping", "!!str": "a string"}

// yamlError rewords a decoding error in the file's terms.
func yamlError(err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	msg = strings.TrimPrefix(msg, "unmarshal errors:\n  ")
	msg = strings.ReplaceAll(msg, "\n  ", "; ")
	msg = unknownField.ReplaceAllStringFunc(msg, func(m string) string {
		g := unknownField.FindStringSubmatch(m)
		return fmt.Sprintf("unknown field %q in %s", g[1], sections[g[2]])
	})
	msg = wrongType.ReplaceAllStringFunc(msg, func(m string) string {
		g := wrongType.FindStringSubmatch(m)
		want := "a mapping"
		switch into := g[3]; {
		case strings.HasPrefix(into, "[]"):
			want = "a list"
		case into == "string":
			want = "a string"
		case into == "float64" || into == "int":
			want = "a number"
		case into == "bool":
			want = "true or false"
		case into == "time.Duration":
			want = "a duration such as 90s or 2m"
		}
		got := g[2]
		if got == "" {
			got = cmp.Or(yamlKinds[g[1]], "the value")
		}
		return fmt.Sprintf("%s is not %s", got, want)
	})
	return errors.New(msg)
}

// withDefaults fills in every default and validates the result.
func (c Config) withDefaults() (Config, error) {
	c.TaskQueue = cmp.Or(c.TaskQueue, DefaultTaskQueue)
	if c.Endpoints == nil {
		c.Endpoints = defaultEndpoints()
	}
	if c.ToolSets == nil {
		c.ToolSets = []string{demo.ToolSet}
	}
	if c.Agents == nil {
		c.Agents = []Agent{{Kind: react.Kind}}
	}
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if len(c.Endpoints) == 0 {
		bad("endpoints: a worker needs at least one endpoint")
	}
	if c.MaxSleep < 0 {
		bad("maxSleep: must not be negative")
	}
	names := map[string]bool{}
	for i := range c.Endpoints {
		e := &c.Endpoints[i]
		field := fmt.Sprintf("endpoints[%d]", i)
		if !isProvider(e.Provider) {
			bad("%s.provider: %q is not one of %s", field, e.Provider, strings.Join(providerNames(), ", "))
			continue
		}
		e.Name = cmp.Or(e.Name, e.Provider)
		if strings.ContainsAny(e.Name, "/ ") {
			bad("%s.name: %q holds '/' or a space", field, e.Name)
		}
		if names[e.Name] {
			bad("%s.name: %q is used by an earlier endpoint", field, e.Name)
		}
		names[e.Name] = true
		if len(e.Models) == 0 {
			bad("%s.models: required: the model IDs the endpoint serves, or [\"*\"] for any it can price (tenants then pick the model the operator pays for)", field)
		}
		if e.Price != "" && e.Price != Unpriced {
			bad("%s.price: %q: the only value is unpriced (prices are per model, under prices)", field, e.Price)
		}
		for id, p := range e.Prices {
			if p.Input < 0 || p.Output < 0 || p.CacheRead < 0 || p.CacheWrite < 0 {
				bad("%s.prices.%s: a price must not be negative", field, id)
			}
		}
		if e.Provider == ProviderScripted {
			if e.BaseURL != "" || e.APIKeyEnv != "" || len(e.Prices) > 0 || e.Price != "" {
				bad("%s: a scripted endpoint calls no server and costs nothing: baseUrl, apiKeyEnv, price and prices do not apply", field)
			}
		} else if k, _ := agentsdk.ProviderKindOf(e.Provider); e.BaseURL == "" {
			// Only the provider's own API gets its key unasked: another
			// server receives the key the endpoint names, or none.
			e.APIKeyEnv = cmp.Or(e.APIKeyEnv, k.KeyEnv)
		}
		if e.BaseURL != "" && !httpURL.MatchString(e.BaseURL) {
			bad("%s.baseUrl: %q is not an http(s) URL", field, e.BaseURL)
		}
	}
	c.Retention = c.Retention.withDefaults(bad)
	c.Workspace = c.Workspace.withDefaults(*c.Retention.KeepDays, bad)
	if c.ToolCallsPerOrg == 0 {
		c.ToolCallsPerOrg = DefaultToolCallsPerOrg
	} else if c.ToolCallsPerOrg < -1 {
		bad("toolCallsPerOrg: %d is neither a number of calls nor -1 (no cap)", c.ToolCallsPerOrg)
	}
	for i, s := range c.ToolSets {
		if _, ok := toolSets[s]; !ok {
			bad("toolSets[%d]: unknown tool set %q (known: %s)", i, s, strings.Join(toolSetNames(), ", "))
		}
	}
	if len(c.Agents) == 0 {
		bad("agents: a worker runs at least one agent")
	}
	kinds := map[string]bool{}
	for i := range c.Agents {
		a := &c.Agents[i]
		a.Builtin = cmp.Or(a.Builtin, BuiltinReact)
		if a.Kind == "" {
			bad("agents[%d].kind: required", i)
		} else if kinds[a.Kind] {
			bad("agents[%d].kind: %q is used by an earlier agent", i, a.Kind)
		}
		kinds[a.Kind] = true
		if a.Builtin != BuiltinReact {
			bad("agents[%d].builtin: %q is not a built-in agent (known: %s)", i, a.Builtin, BuiltinReact)
		}
	}
	c.MCP = withMCPDefaults(c.MCP, bad)
	c.RemoteAgents = withRemoteDefaults(c.RemoteAgents, bad)
	problems = append(problems, c.ToolPolicy.Problems("toolPolicy")...)
	problems = append(problems, agentsdk.SafeCommandProblems("safeCommands", c.SafeCommands)...)
	checkOrgs(c.Orgs, c.ToolSets, bad)
	problems = append(problems, c.ContextWindows.Problems("contextWindows")...)
	if len(c.LocalActivities.LongRunningTools) == 0 {
		c.LocalActivities.LongRunningTools = nil
	}
	for _, b := range []**bool{&c.LocalActivities.ModelCalls, &c.LocalActivities.ToolCalls} {
		if *b == nil {
			local := true
			*b = &local
		}
	}
	if c.WorkerStore.Dir != "" && c.WorkerStore.Name == "" {
		c.WorkerStore.Name, _ = os.Hostname()
	}
	if c.WorkerStore.Grace < 0 {
		bad("localStore.grace must not be negative")
	} else if c.WorkerStore.Grace == 0 {
		c.WorkerStore.Grace = 5 * time.Minute
	}
	if n := c.WorkerStore.Name; n != "" && !workerName.MatchString(n) {
		bad("localStore.name %q must be letters, digits, dots, dashes or underscores", n)
	}
	switch c.Observability.LogFormat {
	case "":
		c.Observability.LogFormat = "text"
	case "text", "json":
	default:
		bad("observability.logFormat: %q is not a log format (known: text, json)", c.Observability.LogFormat)
	}
	if len(c.SafeCommands) == 0 {
		c.SafeCommands = nil
	}
	if len(c.ToolPolicy) == 0 {
		c.ToolPolicy = nil
	}
	if len(c.ContextWindows) == 0 {
		c.ContextWindows = nil
	}
	if len(problems) > 0 {
		return Config{}, errors.New(strings.Join(problems, "; "))
	}
	return c, nil
}

// httpURL is an absolute http(s) URL with a host.
var httpURL = regexp.MustCompile(`^https?://[^/\s]+(/\S*)?$`)

// defaultEndpoints are the endpoints of a configuration that names none:
// the demo's, and each real provider whose key is in the environment.
func defaultEndpoints() []Endpoint {
	// Any model each can price: the built-in tables decide.
	anyModel := []string{agentsdk.AnyModel}
	eps := []Endpoint{{Name: "demo", Provider: ProviderScripted, Models: anyModel}}
	for _, k := range agentsdk.ProviderKinds() {
		if os.Getenv(k.KeyEnv) != "" {
			eps = append(eps, Endpoint{Provider: k.Name, Models: anyModel})
		}
	}
	return eps
}

func (r Retention) withDefaults(bad func(string, ...any)) Retention {
	every, keep, failed := 24*time.Hour, 30, 90
	if r.Every == nil {
		r.Every = &every
	}
	if r.KeepDays == nil {
		r.KeepDays = &keep
	}
	if r.KeepFailedDays == nil {
		r.KeepFailedDays = &failed
	}
	if *r.Every < 0 {
		bad("retention.every: must not be negative (0s: no schedule)")
	}
	if *r.KeepDays < 0 || *r.KeepFailedDays < 0 {
		bad("retention: keepDays and keepFailedDays must not be negative")
	}
	return r
}
