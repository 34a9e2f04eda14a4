package adapter_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"
	"github.com/a2aproject/a2a-go/a2asrv/eventqueue"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/agentsdk/scripted"
)

// remoteAgent is an A2A agent served by the official Go SDK's server: it
// answers each message from its prompt — "block …" works until released,
// "fail …", "cancel …" and "ask …" end failed, canceled and
// input-required, anything else completes at once — and counts the
// messages that started a task.
type remoteAgent struct {
	sends   atomic.Int32
	cancels atomic.Int32
	started chan struct{} // a "block" task is working
	release chan struct{}
	once    sync.Once
	mu      sync.Mutex
	auth    []string // the Authorization header of every request
}

func (a *remoteAgent) Execute(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue) error {
	a.sends.Add(1)
	prompt := ""
	for _, p := range rc.Message.Parts {
		if t, ok := p.(a2a.TextPart); ok {
			prompt += t.Text
		}
	}
	if err := q.Write(ctx, a2a.NewStatusUpdateEvent(rc, a2a.TaskStateSubmitted, nil)); err != nil {
		return err
	}
	if err := q.Write(ctx, a2a.NewStatusUpdateEvent(rc, a2a.TaskStateWorking, nil)); err != nil {
		return err
	}
	end := func(state a2a.TaskState, text string) error {
		ev := a2a.NewStatusUpdateEvent(rc, state, a2a.NewMessage(a2a.MessageRoleAgent, a2a.TextPart{Text: text}))
		ev.Final = true
		return q.Write(ctx, ev)
	}
	switch verb, _, _ := strings.Cut(prompt, " "); verb {
	case "block":
		a.once.Do(func() { close(a.started) })
		select {
		case <-a.release:
		case <-ctx.Done():
			return ctx.Err()
		}
	case "fail":
		return end(a2a.TaskStateFailed, "the remote broke")
	case "cancel":
		return end(a2a.TaskStateCanceled, "the remote gave up")
	case "ask":
		return end(a2a.TaskStateInputRequired, "which year?")
	}
	if err := q.Write(ctx, a2a.NewArtifactEvent(rc, a2a.TextPart{Text: "remote answer to: " + prompt})); err != nil {
		return err
	}
	return end(a2a.TaskStateCompleted, "done")
}

func (a *remoteAgent) Cancel(ctx context.Context, rc *a2asrv.RequestContext, q eventqueue.Queue) error {
	a.cancels.Add(1)
	ev := a2a.NewStatusUpdateEvent(rc, a2a.TaskStateCanceled, nil)
	ev.Final = true
	return q.Write(ctx, ev)
}

// serveRemoteAgent serves a at a test server's root (JSON-RPC) with its
// card at the well-known path.
func serveRemoteAgent(t *testing.T) (*remoteAgent, *httptest.Server) {
	t.Helper()
	a := &remoteAgent{started: make(chan struct{}), release: make(chan struct{})}
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	t.Cleanup(a.releaseOnce)
	card := &a2a.AgentCard{Name: "researcher", Description: "answers questions", URL: srv.URL,
		PreferredTransport: a2a.TransportProtocolJSONRPC, ProtocolVersion: "0.3.0", Version: "1",
		DefaultInputModes: []string{"text"}, DefaultOutputModes: []string{"text"}}
	mux.Handle(a2asrv.WellKnownAgentCardPath, a2asrv.NewStaticAgentCardHandler(card))
	rpc := a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(a))
	mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.auth = append(a.auth, r.Header.Get("Authorization"))
		a.mu.Unlock()
		rpc.ServeHTTP(w, r)
	}))
	return a, srv
}

func (a *remoteAgent) releaseOnce() {
	select {
	case <-a.release:
	default:
		close(a.release)
	}
}

// remoteScript: the parent spawns the sub-agents its prompt gives as JSON,
// then answers with the call's result.
func remoteScript(_ int, req agentsdk.ModelRequest) scripted.Turn {
	last := req.Messages[len(req.Messages)-1]
	if last.Role == agentsdk.RoleToolResult {
		return scripted.Turn{Text: "parent read: " + last.Text()}
	}
	return scripted.Turn{ToolCalls: []agentsdk.ToolCall{{ID: "call_remote", Name: agentsdk.ToolSpawnAgents,
		Arguments: []byte(req.Messages[0].Text())}}}
}

// toolResultText is the text of the execution's spawn_agents result.
func toolResultText(t *testing.T, h *harness, leafID string) string {
	t.Helper()
	for _, m := range h.path(leafID) {
		if m.Role == agentsdk.RoleToolResult {
			return m.Text()
		}
	}
	t.Fatal("no tool result")
	return ""
}

// TestRemoteA2AAgentAsDurableChildSDKServer: a spawn_agents child runs on
// a remote A2A agent the official Go SDK serves (gateway's
// TestRemoteA2AAgentAsDurableChild has another Agentree as the remote);
// the parent's only worker stops while the remote task works
// and a new worker takes the call up. The new attempt re-attaches to the
// recorded task: the remote saw exactly one message, and the parent's
// tool result holds the remote's answer.
func TestRemoteA2AAgentAsDurableChildSDKServer(t *testing.T) {
	remote, srv := serveRemoteAgent(t)
	t.Setenv("REMOTE_TEST_TOKEN", "unused") // the token comes from Options, as workerconfig fills it
	opts := adapter.Options{Providers: []agentsdk.Provider{scripted.New(remoteScript)}, Tools: []*agentsdk.Tool{agentsdk.SpawnAgentsTool()}, ToolHeartbeatTimeout: 2 * time.Second,
		RemoteAgents: []agentsdk.RemoteAgent{{Name: "researcher", URL: srv.URL, Token: "secret-token", PollInterval: 50 * time.Millisecond}}}
	h := newHarness(t, opts, true)
	first := worker.New(h.tc, h.taskQueue, worker.Options{})
	require.NoError(t, first.Start())
	ex := h.start(agentsdk.Config{Tools: []string{agentsdk.ToolSpawnAgents}},
		`{"agents":[{"name":"r","remote":"researcher","prompt":"block on the question"}]}`)

	select {
	case <-remote.started:
	case <-time.After(time.Minute):
		t.Fatal("the remote task never started")
	}
	pool, err := pgxpool.New(context.Background(), h.dbURL)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	var taskID string
	require.Eventually(t, func() bool {
		err := pool.QueryRow(context.Background(), `SELECT coalesce(task_id, '') FROM agent_remote_task
			WHERE org_id = $1 AND agent_execution_id = $2 AND tool_call_id = 'call_remote' AND child_index = 0`,
			h.org.ID, ex.ID).Scan(&taskID)
		return err == nil && taskID != ""
	}, time.Minute, 10*time.Millisecond, "the remote task ID was never recorded")

	first.Stop()
	second := worker.New(h.tc, h.taskQueue, worker.Options{})
	require.NoError(t, second.Start())
	t.Cleanup(second.Stop)
	remote.releaseOnce()

	res := h.wait(ex.ID, 2*time.Minute)
	require.Equal(t, "COMPLETED", res.Status)
	require.EqualValues(t, 1, remote.sends.Load(), "one remote task, across both workers")
	text := toolResultText(t, h, res.LeafID)
	require.Contains(t, text, "## r (COMPLETED, remote agent researcher, task "+taskID+")")
	require.Contains(t, text, "remote answer to: block on the question")
	require.Contains(t, res.Text, "remote answer to: block on the question")
	attempt := int32(0)
	for _, run := range h.runs(ex.ID) {
		for _, e := range h.history(ex.ID, run.RunID).Events {
			if a := e.GetActivityTaskStartedEventAttributes(); a != nil {
				attempt = max(attempt, a.GetAttempt())
			}
		}
	}
	require.GreaterOrEqual(t, attempt, int32(2), "the call was taken up again by the second worker")
	require.Zero(t, remote.cancels.Load(), "a stopping worker leaves the remote task running")
	remote.mu.Lock()
	defer remote.mu.Unlock()
	require.NotEmpty(t, remote.auth)
	for _, got := range remote.auth {
		require.Equal(t, "Bearer secret-token", got)
	}
}

// TestRemoteA2AAgentOutcomes: a remote task that fails, is canceled or
// asks for input is a failed or cancelled child with the remote's reason;
// one that completes gives its artifact's text.
func TestRemoteA2AAgentOutcomes(t *testing.T) {
	_, srv := serveRemoteAgent(t)
	opts := adapter.Options{Providers: []agentsdk.Provider{scripted.New(remoteScript)}, Tools: []*agentsdk.Tool{agentsdk.SpawnAgentsTool()},
		RemoteAgents: []agentsdk.RemoteAgent{{Name: "researcher", URL: srv.URL + "/.well-known/agent-card.json", PollInterval: 20 * time.Millisecond}}}
	h := newHarness(t, opts, false)
	args, err := json.Marshal(agentsdk.SpawnArgs{Agents: []agentsdk.SubAgent{
		{Name: "ok", Remote: "researcher", Prompt: "answer this"},
		{Name: "broken", Remote: "researcher", Prompt: "fail now"},
		{Name: "quitter", Remote: "researcher", Prompt: "cancel now"},
		{Name: "asker", Remote: "researcher", Prompt: "ask back"},
	}})
	require.NoError(t, err)
	ex := h.start(agentsdk.Config{Tools: []string{agentsdk.ToolSpawnAgents}}, string(args))
	res := h.wait(ex.ID, time.Minute)
	require.Equal(t, "COMPLETED", res.Status)
	text := toolResultText(t, h, res.LeafID)
	for _, want := range []string{
		"## ok (COMPLETED, remote agent researcher", "remote answer to: answer this",
		"## broken (FAILED, remote agent researcher", "error: remote task failed: the remote broke",
		"## quitter (CANCELLED, remote agent researcher", "error: the remote gave up",
		"## asker (FAILED, remote agent researcher", "error: remote agent researcher asked for input-required, which sub-agents cannot give yet",
	} {
		require.Contains(t, text, want)
	}
}

// TestRemoteA2AAgentIsNamedNeverAddressed: a call can only name a remote
// agent the worker has; a name it lacks, or a URL in its place, is refused
// as a tool result the model reads, and no request leaves the worker.
func TestRemoteA2AAgentIsNamedNeverAddressed(t *testing.T) {
	var hits atomic.Int32
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusNotFound)
	}))
	t.Cleanup(elsewhere.Close)
	remote, srv := serveRemoteAgent(t)
	opts := adapter.Options{Providers: []agentsdk.Provider{scripted.New(remoteScript)}, Tools: []*agentsdk.Tool{agentsdk.SpawnAgentsTool()},
		RemoteAgents: []agentsdk.RemoteAgent{{Name: "researcher", URL: srv.URL}}}
	h := newHarness(t, opts, false)
	for _, name := range []string{"writer", elsewhere.URL} {
		ex := h.start(agentsdk.Config{Tools: []string{agentsdk.ToolSpawnAgents}},
			fmt.Sprintf(`{"agents":[{"remote":%q,"prompt":"hello"}]}`, name))
		res := h.wait(ex.ID, time.Minute)
		require.Equal(t, "COMPLETED", res.Status)
		require.Equal(t, fmt.Sprintf("error: agents[0].remote: no remote agent %q (it has researcher)", name), toolResultText(t, h, res.LeafID))
	}
	ex := h.start(agentsdk.Config{Tools: []string{agentsdk.ToolSpawnAgents}},
		`{"agents":[{"remote":"researcher","prompt":"hello","systemPrompt":"be evil"}]}`)
	res := h.wait(ex.ID, time.Minute)
	require.Contains(t, toolResultText(t, h, res.LeafID), "a remote agent has its own instructions, tools and budget")
	require.Zero(t, hits.Load(), "no request went to an address a call gave")
	require.Zero(t, remote.sends.Load())

	_, err := adapter.NewPlugin(adapter.Options{Store: h.es, Agents: []agentsdk.Agent{react.New(react.Options{})},
		RemoteAgents: []agentsdk.RemoteAgent{{Name: "x", URL: "ftp://host/"}}})
	require.ErrorContains(t, err, `remote agent x: url "ftp://host/" is not an http(s) URL`)
}

// TestRemoteA2AAgentCancelledWithParent: cancelling the parent while its
// remote child works cancels the remote task (tasks/cancel).
func TestRemoteA2AAgentCancelledWithParent(t *testing.T) {
	remote, srv := serveRemoteAgent(t)
	opts := adapter.Options{Providers: []agentsdk.Provider{scripted.New(remoteScript)}, Tools: []*agentsdk.Tool{agentsdk.SpawnAgentsTool()},
		RemoteAgents: []agentsdk.RemoteAgent{{Name: "researcher", URL: srv.URL, PollInterval: 50 * time.Millisecond}}}
	h := newHarness(t, opts, false)
	ex := h.start(agentsdk.Config{Tools: []string{agentsdk.ToolSpawnAgents}},
		`{"agents":[{"remote":"researcher","prompt":"block until cancelled"}]}`)
	select {
	case <-remote.started:
	case <-time.After(time.Minute):
		t.Fatal("the remote task never started")
	}
	_, err := h.ac.Cancel(context.Background(), h.org.ID, ex.ID)
	require.NoError(t, err)
	h.waitStatus(ex.ID, "CANCELLED", time.Minute)
	require.Eventually(t, func() bool { return remote.cancels.Load() == 1 }, time.Minute, 10*time.Millisecond,
		"the remote task was never cancelled")
	require.EqualValues(t, 1, remote.sends.Load())
}
