package gateway_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/anthropic"
	"github.com/agentree/agentree/gateway"
)

// mcpDefinition creates a definition of organization A answered by
// promptModel; exposed says whether it is served over MCP.
func (e *env) mcpDefinition(slug, mode string, exposed bool) {
	e.t.Helper()
	d := e.ok(e.keyA, http.MethodPost, "/api/orgs/"+e.orgA.Slug+"/agent-definitions", map[string]any{
		"name": "Echo over MCP", "slug": slug, "description": "Says back what it is told.",
		"models": []any{map[string]any{"provider": "anthropic", "modelId": responsesModel}},
		"config": map[string]any{"mode": mode}, "expose": map[string]any{"mcp": exposed},
	})
	require.Equal(e.t, map[string]any{"a2a": false, "mcp": exposed}, d["expose"])
}

// bearer adds an API key to every request, as an MCP client configured
// with a bearer token does.
type bearer struct{ key string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return http.DefaultTransport.RoundTrip(r)
}

// mcpClient is a go-sdk client session on organization org's endpoint
// with key, and the progress notifications it has received.
type mcpClient struct {
	*mcp.ClientSession
	mu       sync.Mutex
	progress []*mcp.ProgressNotificationParams
}

func (c *mcpClient) notes() []*mcp.ProgressNotificationParams {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*mcp.ProgressNotificationParams(nil), c.progress...)
}

func (e *env) mcpConnect(key, org string) (*mcpClient, error) {
	c := &mcpClient{}
	client := mcp.NewClient(&mcp.Implementation{Name: "agentree-test", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.progress = append(c.progress, req.Params)
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: e.base + "/mcp/" + org,
		HTTPClient: &http.Client{Transport: bearer{key}}, MaxRetries: -1, DisableStandaloneSSE: true}, nil)
	if err != nil {
		return nil, err
	}
	e.t.Cleanup(func() { _ = cs.Close() })
	c.ClientSession = cs
	return c, nil
}

// toolNames lists the tools of c's endpoint.
func toolNames(t *testing.T, c *mcpClient) []string {
	t.Helper()
	res, err := c.ListTools(context.Background(), nil)
	require.NoError(t, err)
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	sort.Strings(names)
	return names
}

// callText calls a tool and returns its result and its text.
func callText(t *testing.T, c *mcpClient, name string, args map[string]any, progress any) (*mcp.CallToolResult, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p := &mcp.CallToolParams{Name: name, Arguments: args}
	if progress != nil {
		p.SetProgressToken(progress)
	}
	res, err := c.CallTool(ctx, p)
	require.NoError(t, err)
	var text []string
	for _, content := range res.Content {
		if tc, ok := content.(*mcp.TextContent); ok {
			text = append(text, tc.Text)
		}
	}
	return res, strings.Join(text, "\n")
}

// structured is a tool result's structured content as a map.
func structured(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	m, ok := res.StructuredContent.(map[string]any)
	require.True(t, ok, "structured content: %#v", res.StructuredContent)
	return m
}

// TestMCPServerWithGoSDKClient: the official Go SDK's client lists an
// organization's exposed definitions as tools, calls one (progress
// notifications while it runs, the answer as the result) and continues a
// multi-turn execution with its executionId.
func TestMCPServerWithGoSDKClient(t *testing.T) {
	e := a2aEnv(t)
	e.mcpDefinition("mcp-once", "one-shot", true)
	e.mcpDefinition("mcp-chat", "multi-turn", true)
	e.mcpDefinition("mcp-private", "one-shot", false)
	c, err := e.mcpConnect(e.keyA, e.orgA.Slug)
	require.NoError(t, err)
	require.Equal(t, []string{"run_mcp-chat", "run_mcp-once"}, toolNames(t, c), "only the definitions exposed over MCP")
	tools, err := c.ListTools(context.Background(), nil)
	require.NoError(t, err)
	require.Contains(t, tools.Tools[0].Description, "Says back what it is told.")
	require.Equal(t, []any{"message"}, tools.Tools[0].InputSchema.(map[string]any)["required"])

	res, text := callText(t, c, "run_mcp-once", map[string]any{"message": "hello"}, "p-1")
	require.False(t, res.IsError, text)
	require.Equal(t, "You said: hello (turn 1)", text)
	out := structured(t, res)
	require.Equal(t, "COMPLETED", out["status"])
	require.Equal(t, "end_turn", out["stopReason"])
	var said strings.Builder
	for _, p := range c.notes() {
		require.Equal(t, "p-1", p.ProgressToken)
		said.WriteString(p.Message)
	}
	require.Equal(t, "You said: hello (turn 1)", said.String(), "the answer's text came as progress while it ran")

	// A multi-turn execution waits after each answer; the next call with
	// its executionId continues it.
	res, text = callText(t, c, "run_mcp-chat", map[string]any{"message": "one"}, nil)
	require.False(t, res.IsError, text)
	require.Equal(t, "You said: one (turn 1)", text)
	out = structured(t, res)
	require.Equal(t, "WAITING", out["status"], "a waiting execution is a result, not an error")
	id := out["executionId"].(string)
	res, text = callText(t, c, "run_mcp-chat", map[string]any{"message": "two", "executionId": id}, nil)
	require.False(t, res.IsError, text)
	require.Equal(t, "You said: two (turn 2)", text)
	require.Equal(t, id, structured(t, res)["executionId"], "the same execution")

	// Another tool's execution is not this tool's to continue.
	res, text = callText(t, c, "run_mcp-once", map[string]any{"message": "x", "executionId": id}, nil)
	require.True(t, res.IsError)
	require.Contains(t, text, "not found")
}

// TestMCPBadInput: arguments the schema refuses, an unknown execution
// and a body that is not JSON-RPC are tool errors or 4xx, never a 500.
func TestMCPBadInput(t *testing.T) {
	e := a2aEnv(t)
	e.mcpDefinition("mcp-once", "one-shot", true)
	c, err := e.mcpConnect(e.keyA, e.orgA.Slug)
	require.NoError(t, err)
	for name, args := range map[string]map[string]any{
		"no message":        {},
		"empty message":     {"message": "  "},
		"message not text":  {"message": 5},
		"unknown execution": {"message": "hi", "executionId": "no-such-execution"},
		"id not text":       {"message": "hi", "executionId": 7},
	} {
		res, text := callText(t, c, "run_mcp-once", args, nil)
		require.True(t, res.IsError, "%s: %s", name, text)
		require.NotEmpty(t, text, name)
		require.NotContains(t, text, "127.0.0.1", "%s: no internal address", name)
	}
	_, err = c.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_nothing", Arguments: map[string]any{"message": "hi"}})
	require.Error(t, err, "an unknown tool is a JSON-RPC error")

	// The SDK answers a body that is not JSON-RPC itself, in plain text.
	req, err := http.NewRequest(http.MethodPost, e.base+"/mcp/"+e.orgA.Slug, strings.NewReader(`{"jsonrpc": "2.0",`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+e.keyA)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s", body)
	req, err = http.NewRequest(http.MethodGet, e.base+"/mcp/"+e.orgA.Slug, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+e.keyA)
	req.Header.Set("Accept", "text/event-stream")
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, "stateless: no server-initiated stream")

	// A request a reverse proxy on the gateway's host forwards keeps its
	// public Host: it is served (the API key, not the address, guards).
	req, err = http.NewRequest(http.MethodPost, e.base+"/mcp/"+e.orgA.Slug, strings.NewReader(
		`{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}`))
	require.NoError(t, err)
	req.Host = "agents.example.com"
	req.Header.Set("Authorization", "Bearer "+e.keyA)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, _ = io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	require.Contains(t, string(body), "run_mcp-once")
	r := e.do(e.keyA, http.MethodPost, "/mcp/"+e.orgA.Slug+"/extra", map[string]any{})
	require.Equal(t, http.StatusNotFound, r.Status, "%s", r.Raw)
}

// heldModel is promptModel held until release is closed: a run longer
// than the MCP call timeout.
type heldModel struct {
	promptModel
	release chan struct{}
}

func (m heldModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	select {
	case <-m.release:
	case <-r.Context().Done():
		return
	}
	m.promptModel.ServeHTTP(w, r)
}

// TestMCPLongRunReturnsTheExecution: a call whose execution outlasts the
// MCP call timeout returns, not as an error, the execution ID to follow
// over REST, and the execution runs on to its answer.
func TestMCPLongRunReturnsTheExecution(t *testing.T) {
	held := heldModel{promptModel{t}, make(chan struct{})}
	fake := httptest.NewServer(held)
	t.Cleanup(fake.Close)
	p, err := anthropic.New(anthropic.Options{BaseURL: fake.URL, APIKey: "test-key", Models: []string{responsesModel}})
	require.NoError(t, err)
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{p},
		gateway: func(o *gateway.Options) { o.MCPCallTimeout = time.Second }})
	e.mcpDefinition("mcp-once", "one-shot", true)
	c, err := e.mcpConnect(e.keyA, e.orgA.Slug)
	require.NoError(t, err)
	res, text := callText(t, c, "run_mcp-once", map[string]any{"message": "slowly"}, nil)
	require.False(t, res.IsError, text)
	out := structured(t, res)
	id := out["executionId"].(string)
	require.Contains(t, []any{"PENDING", "RUNNING"}, out["status"])
	require.Contains(t, text, "still working")
	require.Contains(t, text, "/agent-executions/"+id)
	close(held.release)
	done := e.waitStatus(id, "COMPLETED", time.Minute)
	require.Equal(t, "COMPLETED", done["status"])
}
