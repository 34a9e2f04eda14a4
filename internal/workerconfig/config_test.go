package workerconfig_test

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/tools/builtin"
	"github.com/agentree/agentree/agentsdk/tools/demo"
	"github.com/agentree/agentree/agentsdk/tools/workspace"
	"github.com/agentree/agentree/internal/workerconfig"
)

// noKeys clears the provider keys the defaults look at.
func noKeys(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "")
	t.Setenv("OPENAI_API_KEY", "")
}

func ptr[T any](v T) *T { return &v }

func TestDefaultsRunTheDemo(t *testing.T) {
	noKeys(t)
	c := workerconfig.Default()
	require.Equal(t, workerconfig.Config{
		TaskQueue: "agentree",
		Endpoints: []workerconfig.Endpoint{{Name: "demo", Provider: "scripted", Models: []string{"*"}}},
		ToolSets:  []string{"demo"},
		Agents:    []workerconfig.Agent{{Kind: "react-agent", Builtin: "react"}},
		Workspace: workerconfig.Workspace{Root: workspace.DefaultRoot(), Quota: 4 << 30, ReadLimit: 64 << 20, KeepFor: 30 * 24 * time.Hour,
			Bash: workerconfig.Bash{
				Timeout: 2 * time.Minute, MaxTimeout: 10 * time.Minute, OutputLimit: 16 << 20, SpillLimit: 256 << 20,
				Env: []string{"PATH", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TZ"}, Deny: builtin.DefaultDeny,
				Isolation: "bwrap", UID: 65534, GID: 65534,
				Limits: workerconfig.Limits{Memory: 4 << 30, Processes: 256, CPU: 10 * time.Minute, FileSize: 1 << 30},
			},
			Snapshots: workerconfig.Snapshots{Enabled: ptr(true), MaxFiles: 10000, MaxBytes: 16 << 20, Ignore: []string{".git/objects", "node_modules"}},
		},
		ToolCallsPerOrg: 16,
		Retention:       workerconfig.Retention{Every: ptr(24 * time.Hour), KeepDays: ptr(30), KeepFailedDays: ptr(90)},
		WorkerStore:     workerconfig.WorkerStore{Grace: 5 * time.Minute},
		Observability:   workerconfig.Observability{LogFormat: "text"},
		LocalActivities: workerconfig.LocalActivities{ModelCalls: ptr(true), ToolCalls: ptr(true)},
	}, c)

	w, err := c.Build()
	require.NoError(t, err)
	eps, err := agentsdk.NewEndpoints(w.Providers...)
	require.NoError(t, err)
	require.Equal(t, []agentsdk.EndpointInfo{{Name: "demo", Provider: "scripted", Models: []string{"*"}, Priced: []string{"*"}}}, eps.Infos())
	_, err = eps.Resolve(agentsdk.ModelRef{Provider: "scripted", ModelID: "scripted-1"})
	require.NoError(t, err)
	var tools []string
	for _, tl := range w.Tools {
		tools = append(tools, tl.Name)
	}
	require.Equal(t, []string{"search_notes", "fetch_note", "word_count"}, tools)
	require.Len(t, w.Agents, 1)
	require.Equal(t, "react-agent", w.Agents[0].Kind())
}

func TestDefaultsAddProvidersWhoseKeysAreSet(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant")
	t.Setenv("OPENAI_API_KEY", "sk-oai")
	c := workerconfig.Default()
	require.Equal(t, []workerconfig.Endpoint{
		{Name: "demo", Provider: "scripted", Models: []string{"*"}},
		{Name: "anthropic", Provider: "anthropic", APIKeyEnv: "ANTHROPIC_API_KEY", Models: []string{"*"}},
		{Name: "openai", Provider: "openai", APIKeyEnv: "OPENAI_API_KEY", Models: []string{"*"}},
	}, c.Endpoints)
	w, err := c.Build()
	require.NoError(t, err)
	require.Len(t, w.Providers, 3)
}

// The checked-in example is valid and says what the defaults say.
func TestExampleIsTheDefault(t *testing.T) {
	noKeys(t)
	_, here, _, _ := runtime.Caller(0)
	c, err := workerconfig.Load(filepath.Join(filepath.Dir(here), "..", "..", "agentree.example.yaml"))
	require.NoError(t, err)
	require.Equal(t, workerconfig.Default(), c)
}

func TestEmptyFileIsTheDefault(t *testing.T) {
	noKeys(t)
	c, err := workerconfig.Parse(nil)
	require.NoError(t, err)
	require.Equal(t, workerconfig.Default(), c)
}

func TestParseFillsEndpointDefaults(t *testing.T) {
	noKeys(t)
	c, err := workerconfig.Parse([]byte(`
taskQueue: q1
endpoints:
  - provider: anthropic
    models: ["*"]
  - name: local-vllm
    provider: openai
    baseUrl: http://127.0.0.1:8000/v1
    models: [qwen3]
    prices:
      qwen3: {input: 1, output: 2}
toolSets: []
`))
	require.NoError(t, err)
	require.Equal(t, "q1", c.TaskQueue)
	require.Equal(t, []workerconfig.Endpoint{
		{Name: "anthropic", Provider: "anthropic", APIKeyEnv: "ANTHROPIC_API_KEY", Models: []string{"*"}},
		{Name: "local-vllm", Provider: "openai", BaseURL: "http://127.0.0.1:8000/v1", Models: []string{"qwen3"},
			Prices: map[string]workerconfig.Price{"qwen3": {Input: 1, Output: 2}}},
	}, c.Endpoints)
	require.Empty(t, c.ToolSets, "an explicit empty list serves no tools")
}

func TestBadFilesNameTheField(t *testing.T) {
	noKeys(t)
	for name, c := range map[string]struct{ yaml, want string }{
		"unknown top-level field": {"taskqueue: x\n", `line 1: unknown field "taskqueue" in the top level`},
		"unknown endpoint field":  {"endpoints:\n  - provider: openai\n    apiKey: sk-x\n", `line 3: unknown field "apiKey" in an endpoint`},
		"unknown provider":        {"endpoints:\n  - provider: gemini\n", `endpoints[0].provider: "gemini" is not one of anthropic, openai, scripted`},
		"no provider":             {"endpoints:\n  - name: x\n", `endpoints[0].provider: "" is not one of`},
		"duplicate endpoint":      {"endpoints:\n  - provider: scripted\n  - provider: scripted\n", `endpoints[1].name: "scripted" is used by an earlier endpoint`},
		"no endpoints":            {"endpoints: []\n", "endpoints: a worker needs at least one endpoint"},
		"bad base URL":            {"endpoints:\n  - provider: openai\n    baseUrl: localhost:8000\n", `endpoints[0].baseUrl: "localhost:8000" is not an http(s) URL`},
		"scripted with a URL":     {"endpoints:\n  - provider: scripted\n    baseUrl: http://x\n", "endpoints[0]: a scripted endpoint calls no server"},
		"no models":               {"endpoints:\n  - provider: scripted\n    models: []\n", `endpoints[0].models: required: the model IDs the endpoint serves, or ["*"]`},
		"models left out":         {"endpoints:\n  - provider: openai\n", `endpoints[0].models: required`},
		"bad price word":          {"endpoints:\n  - {provider: openai, models: [m], prices: {m: free}}\n", `line 2: "free" is not a price: give {input: …, output: …} in USD per million tokens, or unpriced`},
		"bad endpoint price":      {"endpoints:\n  - {provider: openai, models: [m], price: free}\n", `endpoints[0].price: "free": the only value is unpriced`},
		"negative price":          {"endpoints:\n  - provider: openai\n    prices:\n      m: {input: -1}\n", "endpoints[0].prices.m: a price must not be negative"},
		"unknown tool set":        {"toolSets: [demo, shell]\n", `toolSets[1]: unknown tool set "shell" (known: builtin, demo, subagents, timers)`},
		"agent without kind":      {"agents:\n  - builtin: react\n", "agents[0].kind: required"},
		"unknown builtin":         {"agents:\n  - kind: a\n    builtin: planner\n", `agents[0].builtin: "planner" is not a built-in agent`},
		"duplicate kind":          {"agents:\n  - kind: a\n  - kind: a\n", `agents[1].kind: "a" is used by an earlier agent`},
		"not a list":              {"toolSets: demo\n", "line 1: `demo` is not a list"},
		"agents not a list":       {"agents: 3\n", "line 1: `3` is not a list"},
		"price not a number":      {"endpoints:\n  - provider: openai\n    prices: {m: {input: cheap}}\n", "line 3: `cheap` is not a number"},
		"negative retention":      {"retention: {keepDays: -1}\n", "retention: keepDays and keepFailedDays must not be negative"},
		"unknown tool policy":     {"toolPolicy: {bash: maybe}\n", `toolPolicy["bash"] must be auto, ask or forbid; got "maybe"`},
		"bad tool policy glob":    {"toolPolicy: {\"[x\": ask}\n", `toolPolicy["[x"] is not a valid glob`},
	} {
		_, err := workerconfig.Parse([]byte(c.yaml))
		require.ErrorContains(t, err, c.want, name)
		require.NotContains(t, err.Error(), "workerconfig.", name)
	}
}

func TestLoadNamesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agentree.yaml")
	require.NoError(t, os.WriteFile(path, []byte("toolSets: [nope]\n"), 0o600))
	_, err := workerconfig.Load(path)
	require.ErrorContains(t, err, "worker config "+path+`: toolSets[0]: unknown tool set "nope"`)
	_, err = workerconfig.Load(filepath.Join(t.TempDir(), "missing.yaml"))
	require.ErrorContains(t, err, "missing.yaml")
}

func TestPathPrefersTheFlag(t *testing.T) {
	t.Setenv(workerconfig.EnvVar, "/etc/agentree.yaml")
	require.Equal(t, "/x.yaml", workerconfig.Path("/x.yaml"))
	require.Equal(t, "/etc/agentree.yaml", workerconfig.Path(""))
	t.Setenv(workerconfig.EnvVar, "")
	require.Equal(t, "", workerconfig.Path(""))
}

// An endpoint whose API needs a key it does not have stops the worker at
// start, naming the variable; a compatible server needs none.
func TestBuildNeedsTheKeysOfOfficialAPIs(t *testing.T) {
	noKeys(t)
	for name, c := range map[string]struct{ yaml, want string }{
		"anthropic": {"endpoints:\n  - provider: anthropic\n    models: ['*']\n", "endpoints[0] (anthropic): $ANTHROPIC_API_KEY is empty"},
		"openai":    {"endpoints:\n  - name: oai\n    provider: openai\n    apiKeyEnv: TEAM_OPENAI_KEY\n    models: ['*']\n", "endpoints[0] (oai): $TEAM_OPENAI_KEY is empty"},
	} {
		cfg, err := workerconfig.Parse([]byte(c.yaml))
		require.NoError(t, err, name)
		_, err = cfg.Build()
		require.ErrorContains(t, err, c.want, name)
	}
	cfg, err := workerconfig.Parse([]byte("endpoints:\n  - provider: openai\n    baseUrl: http://127.0.0.1:1/v1\n    models: [qwen3]\n    price: unpriced\n"))
	require.NoError(t, err)
	w, err := cfg.Build()
	require.NoError(t, err)
	require.Equal(t, agentsdk.EndpointInfo{Name: "openai", Provider: "openai", Models: []string{"qwen3"}, Priced: []string{"*"}}, agentsdk.Describe(w.Providers[0]))
}

// An endpoint serves a model only with a price, from the built-in table
// or the configuration, or marked unpriced: a listed model with neither
// stops the worker, and under "*" such a model is refused when asked for,
// saying why.
func TestEndpointsServeOnlyPricedModels(t *testing.T) {
	noKeys(t)
	cfg, err := workerconfig.Parse([]byte("endpoints:\n  - {provider: openai, baseUrl: 'http://127.0.0.1:1/v1', models: [qwen3]}\n"))
	require.NoError(t, err)
	_, err = cfg.Build()
	require.EqualError(t, err, `worker config: endpoints[0] (openai): models: "qwen3" has no price: give it one under prices ({qwen3: {input: …, output: …}}, USD per million tokens) or mark it unpriced ({qwen3: unpriced})`)

	cfg, err = workerconfig.Parse([]byte(`
endpoints:
  - name: team
    provider: anthropic
    baseUrl: http://127.0.0.1:1
    models: ["*"]
    prices:
      claude-house-1: {input: 1, output: 2}
      claude-lab-1: unpriced
`))
	require.NoError(t, err)
	w, err := cfg.Build()
	require.NoError(t, err)
	eps, err := agentsdk.NewEndpoints(w.Providers...)
	require.NoError(t, err)
	for _, m := range []string{"claude-sonnet-4-5", "claude-sonnet-4-5-20250929", "claude-house-1", "claude-lab-1"} {
		_, err := eps.Resolve(agentsdk.ModelRef{Provider: "anthropic", ModelID: m})
		require.NoError(t, err, m)
	}
	_, err = eps.Resolve(agentsdk.ModelRef{Provider: "anthropic", ModelID: "claude-mystery-9"})
	require.ErrorIs(t, err, agentsdk.ErrUnpriced)
	require.ErrorIs(t, err, agentsdk.ErrInvalidInput)
	require.ErrorContains(t, err, `model "claude-mystery-9" on endpoint "team" has no price`)
}

func TestWorkerStoreConfig(t *testing.T) {
	c, err := workerconfig.Parse([]byte("localStore: {dir: /tmp/x, name: laptop-1, grace: 30s}\n"))
	require.NoError(t, err)
	require.Equal(t, workerconfig.WorkerStore{Dir: "/tmp/x", Name: "laptop-1", Grace: 30 * time.Second}, c.WorkerStore)
	c, err = workerconfig.Parse([]byte("localStore: {dir: /tmp/x}\n"))
	require.NoError(t, err)
	require.NotEmpty(t, c.WorkerStore.Name, "the host name by default")
	_, err = workerconfig.Parse([]byte("localStore: {dir: /tmp/x, name: 'a b/c'}\n"))
	require.ErrorContains(t, err, `localStore.name "a b/c" must be letters, digits, dots, dashes or underscores`)
	_, err = workerconfig.Parse([]byte("localStore: {dir: /tmp/x, grace: -1s}\n"))
	require.ErrorContains(t, err, "localStore.grace must not be negative")
}

func TestObservability(t *testing.T) {
	noKeys(t)
	c, err := workerconfig.Parse([]byte("observability:\n  metricsAddr: 127.0.0.1:9464\n  logFormat: json\n"))
	require.NoError(t, err)
	require.Equal(t, workerconfig.Observability{MetricsAddr: "127.0.0.1:9464", LogFormat: "json"}, c.Observability)
	_, err = workerconfig.Parse([]byte("observability:\n  logFormat: xml\n"))
	require.ErrorContains(t, err, "observability.logFormat")
}

// localActivities chooses local model and tool calls and marks the
// tools it names long-running; a name the worker has no tool of, or an
// unknown field, is an error naming it.
func TestLocalActivities(t *testing.T) {
	noKeys(t)
	c, err := workerconfig.Parse([]byte("localActivities:\n  modelCalls: true\n  longRunningTools: [" + demo.WordCountTool + "]\n"))
	require.NoError(t, err)
	w, err := c.Build()
	require.NoError(t, err)
	t.Cleanup(func() { _ = w.Close() })
	require.False(t, w.ActivityModelCalls)
	require.False(t, w.ActivityToolCalls)
	require.NotEmpty(t, w.Tools)
	for _, tool := range w.Tools {
		require.Equal(t, tool.Name == demo.WordCountTool, tool.LongRunning, tool.Name)
	}

	// Local model and tool calls are the default; false runs them as
	// activities.
	for yaml, want := range map[string][2]bool{
		"": {false, false},
		"localActivities:\n  modelCalls: false\n": {true, false},
		"localActivities:\n  toolCalls: false\n":  {false, true},
	} {
		c, err = workerconfig.Parse([]byte(yaml))
		require.NoError(t, err)
		w, err = c.Build()
		require.NoError(t, err)
		require.Equal(t, want, [2]bool{w.ActivityModelCalls, w.ActivityToolCalls}, yaml)
	}

	c, err = workerconfig.Parse([]byte("localActivities:\n  longRunningTools: [nope]\n"))
	require.NoError(t, err)
	_, err = c.Build()
	require.ErrorContains(t, err, `localActivities.longRunningTools[0]: the worker has no tool "nope" (it has: `)

	// The list of local tools is gone: every tool is local unless marked.
	_, err = workerconfig.Parse([]byte("localActivities:\n  tools: [x]\n"))
	require.ErrorContains(t, err, `unknown field "tools" in localActivities`)

	_, err = workerconfig.Parse([]byte("localActivities:\n  model: true\n"))
	require.ErrorContains(t, err, `unknown field "model" in localActivities`)
}
