package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/anthropic"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/temporaltest"
)

// A test re-runs this test binary as a worker process it can kill.
const (
	envWorkerProcess = "AGENTREE_GATEWAY_TEST_WORKER"
	envWorkerDB      = "AGENTREE_GATEWAY_TEST_DB"
	envWorkerQueue   = "AGENTREE_GATEWAY_TEST_QUEUE"
	// envWorkerAnthropic, when set, gives the worker process the official
	// Anthropic client pointed at that URL (a fake server of the test's)
	// instead of the scripted model.
	envWorkerAnthropic = "AGENTREE_GATEWAY_TEST_ANTHROPIC"
	// envWorkerRemoteURL and envWorkerRemoteKey, when set, make the worker
	// process a lead that spawns the specialist remote agent at that A2A
	// URL with that API key (spawn_agents, the spawnThenEcho model).
	envWorkerRemoteURL = "AGENTREE_GATEWAY_TEST_REMOTE_URL"
	envWorkerRemoteKey = "AGENTREE_GATEWAY_TEST_REMOTE_KEY"
)

func TestMain(m *testing.M) {
	if os.Getenv(envWorkerProcess) == "1" {
		if err := runWorkerProcess(); err != nil {
			fmt.Fprintln(os.Stderr, "worker process:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// shoutTool is the tool only the worker process runs.
func shoutTool() *agentsdk.Tool {
	return agentsdk.NewTool("shout", "Shouts its text.",
		func(_ context.Context, _ agentsdk.ToolInvocation, a echoArgs) (string, error) {
			return a.Text + "!", nil
		})
}

// runWorkerProcess is a worker with the shout tool that records its
// capabilities often, on a short lease, until it is killed; with a remote
// agent in its env it is also the lead of a remote A2A child.
func runWorkerProcess() error {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv(envWorkerDB))
	if err != nil {
		return err
	}
	var provider agentsdk.Provider = scripted.New(scripted.Turns())
	if url := os.Getenv(envWorkerAnthropic); url != "" {
		if provider, err = anthropic.New(anthropic.Options{BaseURL: url, APIKey: "test-key"}); err != nil {
			return err
		}
	}
	opts := adapter.Options{
		Store: entrystore.New(pool), Agents: []agentsdk.Agent{react.New(react.Options{})},
		Providers: []agentsdk.Provider{provider}, Tools: []*agentsdk.Tool{shoutTool()},
		CapabilityInterval: 100 * time.Millisecond, CapabilityLease: time.Second,
	}
	if url := os.Getenv(envWorkerRemoteURL); url != "" {
		opts.Providers = []agentsdk.Provider{scripted.New(spawnThenEcho)}
		opts.Tools = append(opts.Tools, agentsdk.SpawnAgentsTool())
		opts.RemoteAgents = []agentsdk.RemoteAgent{specialistAgent(url, os.Getenv(envWorkerRemoteKey))}
		// The killed worker's call moves to the next worker this soon.
		opts.ToolHeartbeatTimeout = remoteHeartbeat
	}
	plugin, err := adapter.NewPlugin(opts)
	if err != nil {
		return err
	}
	tc, err := client.Dial(client.Options{HostPort: os.Getenv("TEMPORAL_ADDRESS"), Plugins: []client.Plugin{plugin}, Logger: temporaltest.Logger{}})
	if err != nil {
		return err
	}
	defer tc.Close()
	return worker.New(tc, os.Getenv(envWorkerQueue), worker.Options{}).Run(worker.InterruptCh())
}

// startWorkerOn runs a worker with the plugin on queue in this process
// and returns it (stopped at cleanup if the test has not).
func (e *env) startWorkerOn(queue string, tools ...*agentsdk.Tool) worker.Worker {
	e.t.Helper()
	plugin, err := adapter.NewPlugin(adapter.Options{
		Store: entrystore.New(newPool(e.t, e.dbURL)), Agents: []agentsdk.Agent{react.New(react.Options{})},
		Providers: []agentsdk.Provider{scripted.New(scripted.Turns())}, Tools: tools,
	})
	require.NoError(e.t, err)
	wc, err := client.Dial(client.Options{HostPort: temporaltest.Address(e.t), Plugins: []client.Plugin{plugin}, Logger: temporaltest.Logger{}})
	require.NoError(e.t, err)
	e.t.Cleanup(wc.Close)
	w := worker.New(wc, queue, worker.Options{})
	require.NoError(e.t, w.Start())
	stopped := false
	e.t.Cleanup(func() {
		if !stopped {
			w.Stop()
		}
	})
	return stopOnce{Worker: w, stopped: &stopped}
}

type stopOnce struct {
	worker.Worker
	stopped *bool
}

func (s stopOnce) Stop() {
	if !*s.stopped {
		*s.stopped = true
		s.Worker.Stop()
	}
}

// execSelf runs this test binary as a worker process with env added; it
// is killed at cleanup if the test has not.
func execSelf(t *testing.T, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd
}

// capabilities is GET /capabilities, decoded.
type capabilities struct {
	Workers []struct {
		Identity, TaskQueue, Version, LastSeenAt string
		Kinds                                    []string
		Tools                                    []struct{ Name string }
		Models                                   []struct {
			Name, Provider string
			Models         []string
		}
	}
	Kinds []string
	Tools []struct {
		Name, Description string
		Parameters        map[string]any
		TaskQueues        []string
	}
	Models []struct {
		Name, Provider     string
		Models, TaskQueues []string
	}
}

func (e *env) capabilities() capabilities {
	e.t.Helper()
	r := e.do(e.keyA, http.MethodGet, "/api/orgs/"+e.orgA.Slug+"/capabilities", nil)
	require.Equal(e.t, http.StatusOK, r.Status, "%s", r.Raw)
	var c capabilities
	require.NoError(e.t, json.Unmarshal(r.Raw, &c))
	return c
}

// toolQueues maps each tool of the union to its task queues.
func (c capabilities) toolQueues() map[string][]string {
	out := map[string][]string{}
	for _, t := range c.Tools {
		out[t.Name] = t.TaskQueues
	}
	return out
}

// TestCapabilitiesReflectLiveWorkers starts two workers with different
// tools on different queues, one of them a process; the capabilities list
// both with their queues. The process is killed, so it never deregisters:
// its tools go once its lease runs out. A worker stopped cleanly is gone at
// once.
func TestCapabilitiesReflectLiveWorkers(t *testing.T) {
	e := newEnv(t, envOptions{})
	qa, qb, qc := "caps-a-"+uuid.NewString()[:8], "caps-b-"+uuid.NewString()[:8], "caps-c-"+uuid.NewString()[:8]
	e.startWorkerOn(qa, echoTool())

	cmd := execSelf(t, envWorkerProcess+"=1", envWorkerDB+"="+e.dbURL, envWorkerQueue+"="+qb,
		"TEMPORAL_ADDRESS="+temporaltest.Address(t))
	var c capabilities
	poll(t, time.Minute, func() bool {
		c = e.capabilities()
		return len(c.Workers) == 2
	}, "the worker process never recorded its capabilities")
	require.Equal(t, map[string][]string{"echo": {qa}, "shout": {qb}}, c.toolQueues())
	require.Equal(t, []string{react.Kind}, c.Kinds)
	for _, w := range c.Workers {
		require.Contains(t, []string{qa, qb}, w.TaskQueue)
		require.NotEmpty(t, w.Identity)
		require.NotEmpty(t, w.LastSeenAt)
		require.Equal(t, []string{react.Kind}, w.Kinds)
		require.Len(t, w.Tools, 1)
		require.Equal(t, map[bool]string{true: "echo", false: "shout"}[w.TaskQueue == qa], w.Tools[0].Name)
	}
	for _, tl := range c.Tools {
		require.Equal(t, "object", tl.Parameters["type"], "tool %s has its schema", tl.Name)
	}
	require.Len(t, c.Models, 1)
	require.Equal(t, scripted.Name, c.Models[0].Provider)
	require.ElementsMatch(t, []string{qa, qb}, c.Models[0].TaskQueues)

	// Killed, the process cannot deregister; its lease (1 s) runs out.
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_, _ = cmd.Process.Wait()
	poll(t, time.Minute, func() bool {
		c = e.capabilities()
		_, shout := c.toolQueues()["shout"]
		return !shout
	}, "the killed worker's tools never went away")
	require.Equal(t, map[string][]string{"echo": {qa}}, c.toolQueues())
	require.Len(t, c.Workers, 1)
	require.Equal(t, qa, c.Workers[0].TaskQueue)

	// Stopped cleanly, a worker takes its row with it.
	wc := e.startWorkerOn(qc, echoTool())
	rows, err := e.es.LiveCapabilities(context.Background())
	require.NoError(t, err)
	require.True(t, slices.ContainsFunc(rows, func(r entrystore.WorkerCapability) bool { return r.TaskQueue == qc }),
		"a started worker has recorded itself")
	wc.Stop()
	rows, err = e.es.LiveCapabilities(context.Background())
	require.NoError(t, err)
	require.False(t, slices.ContainsFunc(rows, func(r entrystore.WorkerCapability) bool { return r.TaskQueue == qc }),
		"a cleanly stopped worker is deregistered at once")
}

// TestCreateRejectsWhatNoWorkerServes: a create naming a tool, model,
// endpoint or kind no live worker serves is a 400 listing what they do
// serve; on a task queue no worker polls it is a 503 saying so.
func TestCreateRejectsWhatNoWorkerServes(t *testing.T) {
	model := scripted.New(scripted.Turns(scripted.Turn{Text: "done"}))
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{model}, tools: []*agentsdk.Tool{echoTool()}})
	path := "/api/orgs/" + e.orgA.Slug + "/agent-executions"
	good := map[string]any{"provider": scripted.Name, "modelId": "m"}
	cases := []struct {
		name string
		body map[string]any
		want []string // in the message
	}{
		{"unknown tool", map[string]any{"models": []any{good}, "tools": []string{"nope"}},
			[]string{`unknown tool "nope"`, "offer echo"}},
		{"unknown model provider", map[string]any{"models": []any{map[string]any{"provider": "anthropic", "modelId": "claude"}}},
			[]string{`provider "anthropic" model "claude"`, `endpoint "scripted" (provider "scripted", models *)`}},
		{"unknown endpoint", map[string]any{"models": []any{map[string]any{"provider": scripted.Name, "modelId": "m", "endpoint": "elsewhere"}}},
			[]string{`on endpoint "elsewhere"`, `endpoint "scripted"`}},
		{"unknown kind", map[string]any{"models": []any{good}, "kind": "nope-agent"},
			[]string{`unknown agent kind "nope-agent"`, "run react-agent"}},
		{"unknown tool in config", map[string]any{"models": []any{good}, "config": map[string]any{"tools": []string{"echo", "rm"}}},
			[]string{`unknown tool "rm"`, "offer echo"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.body["userPrompt"] = "hi"
			r := e.fails(e.keyA, http.MethodPost, path, tc.body, http.StatusBadRequest, "invalid_argument")
			for _, w := range tc.want {
				require.Contains(t, r.Body["message"], w)
			}
		})
	}
	// What the workers do serve is accepted, endpoint named or not.
	for _, m := range []map[string]any{good, {"provider": scripted.Name, "modelId": "m", "endpoint": scripted.Name}} {
		ex := e.ok(e.keyA, http.MethodPost, path, map[string]any{"userPrompt": "hi", "models": []any{m}, "tools": []string{"echo"}})
		e.waitStatus(ex["id"].(string), "COMPLETED", time.Minute)
	}

	// A gateway whose task queue no worker polls refuses with the reason.
	lonely := newEnv(t, envOptions{})
	r := lonely.fails(lonely.keyA, http.MethodPost, "/api/orgs/"+lonely.orgA.Slug+"/agent-executions",
		map[string]any{"userPrompt": "hi", "models": []any{good}}, http.StatusServiceUnavailable, "unavailable")
	require.Contains(t, r.Body["message"], "no live worker serves task queue")
	require.Contains(t, r.Body["message"], "agentree worker --task-queue")
	n, _, err := lonely.es.ListExecutions(context.Background(), lonely.orgA.ID, entrystore.ExecutionFilter{}, entrystore.Page{})
	require.NoError(t, err)
	require.Empty(t, n, "no execution is created for a queue no worker serves")
}
