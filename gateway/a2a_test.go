package gateway_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/anthropic"
	"github.com/agentree/agentree/agentsdk/tools/demo"
)

// a2aNodeTests is how many tests interop/node/a2a.test.js has.
const a2aNodeTests = 5

// a2aEnv is a gateway and worker answering with promptModel, and two
// definitions of organization A served over A2A: a one-shot one
// ("echo-once") and a multi-turn one ("echo-chat").
func a2aEnv(t *testing.T) *env {
	t.Helper()
	fake := httptest.NewServer(promptModel{t})
	t.Cleanup(fake.Close)
	p, err := anthropic.New(anthropic.Options{BaseURL: fake.URL, APIKey: "test-key", Models: []string{responsesModel}})
	require.NoError(t, err)
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{p}})
	e.a2aDefinition("echo-once", "one-shot", true)
	e.a2aDefinition("echo-chat", "multi-turn", true)
	return e
}

// a2aDefinition creates a definition of organization A answered by
// promptModel; exposed says whether it is served over A2A.
func (e *env) a2aDefinition(slug, mode string, exposed bool) map[string]any {
	e.t.Helper()
	d := e.ok(e.keyA, http.MethodPost, "/api/orgs/"+e.orgA.Slug+"/agent-definitions", map[string]any{
		"name": "Echo over A2A", "slug": slug, "description": "Says back what it is told.",
		"models": []any{map[string]any{"provider": "anthropic", "modelId": responsesModel}},
		"config": map[string]any{"mode": mode}, "expose": map[string]any{"a2a": exposed},
	})
	require.Equal(e.t, map[string]any{"a2a": exposed, "mcp": false}, d["expose"], "the definition says how it is served")
	return d
}

// rpc posts a JSON-RPC request to an A2A agent of organization A.
func (e *env) rpc(key, slug, method string, params any) response {
	e.t.Helper()
	return e.do(key, http.MethodPost, "/a2a/"+e.orgA.Slug+"/"+slug, map[string]any{
		"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
}

// rpcError is the JSON-RPC error code of r (0 when it has none).
func rpcError(t *testing.T, r response) int {
	t.Helper()
	errObj, ok := r.Body["error"].(map[string]any)
	if !ok {
		return 0
	}
	require.NotEmpty(t, errObj["message"], "%s", r.Raw)
	return int(errObj["code"].(float64))
}

// TestA2AWithOfficialClient runs interop/node/a2a.test.js: the official
// @a2a-js/sdk client (the version package-lock pins) discovers the card,
// sends, streams, gets, resubscribes, goes through an input-required
// round trip and cancels, against a real gateway and worker.
func TestA2AWithOfficialClient(t *testing.T) {
	dir, node := nodeHarness(t)
	e := a2aEnv(t)
	runNodeSuite(t, node, dir, a2aNodeTests, []string{
		"AGENTREE_BASE_URL=" + e.base, "AGENTREE_API_KEY=" + e.keyA, "AGENTREE_ORG=" + e.orgA.Slug,
		"AGENTREE_A2A_ONESHOT=echo-once", "AGENTREE_A2A_CHAT=echo-chat",
	}, "a2a.test.js")
}

// TestA2AAndMCPRespectRoles: the A2A endpoints authenticate and scope as
// the REST API does. No key is a 401; a read key reads the card and
// tasks but cannot send (403); another organization's key sees neither
// the card nor the task (404, as if nothing were there); a definition not
// exposed over A2A is a 404 too. The MCP endpoint likewise: no key is a
// 401; a read key lists the tools but a call is refused as a tool error
// naming the run role; another organization's key neither lists nor
// calls them (404); a definition not exposed over MCP is not a tool.
func TestA2AAndMCPRespectRoles(t *testing.T) {
	e := a2aEnv(t)
	e.a2aDefinition("private", "one-shot", false)
	card := "/a2a/" + e.orgA.Slug + "/echo-once/.well-known/agent-card.json"
	send := map[string]any{"message": map[string]any{"kind": "message", "messageId": uuid.NewString(), "role": "user",
		"parts": []any{map[string]any{"kind": "text", "text": "hi"}}}}

	e.fails("", http.MethodGet, card, nil, http.StatusUnauthorized, "unauthenticated")
	require.Equal(t, http.StatusUnauthorized, e.rpc("", "echo-once", "message/send", send).Status)

	read := e.keyWith("read")
	require.Equal(t, "Echo over A2A", e.ok(read, http.MethodGet, card, nil)["name"])
	r := e.rpc(read, "echo-once", "message/send", send)
	require.Equal(t, http.StatusForbidden, r.Status, "%s", r.Raw)
	require.Equal(t, -32600, rpcError(t, r))
	require.Contains(t, r.Body["error"].(map[string]any)["message"], `"run" role`, "the refusal names the role")

	r = e.rpc(e.keyA, "echo-once", "message/send", send)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
	task := r.Body["result"].(map[string]any)
	require.Equal(t, "completed", task["status"].(map[string]any)["state"], "%s", r.Raw)
	id := task["id"].(string)
	r = e.rpc(read, "echo-once", "tasks/get", map[string]any{"id": id})
	require.Equal(t, id, r.Body["result"].(map[string]any)["id"], "a read key reads a task: %s", r.Raw)
	r = e.rpc(read, "echo-once", "tasks/cancel", map[string]any{"id": id})
	require.Equal(t, http.StatusForbidden, r.Status, "cancel needs run: %s", r.Raw)

	// The same messageId again is the same message: its task, no second.
	r = e.rpc(e.keyA, "echo-once", "message/send", send)
	require.Equal(t, id, r.Body["result"].(map[string]any)["id"], "a resent message gets its first task: %s", r.Raw)

	// Organization B sees nothing of A's agents or tasks.
	e.fails(e.keyB, http.MethodGet, card, nil, http.StatusNotFound, "not_found")
	r = e.rpc(e.keyB, "echo-once", "tasks/get", map[string]any{"id": id})
	require.Equal(t, http.StatusNotFound, r.Status, "%s", r.Raw)
	r = e.do(e.keyB, http.MethodPost, "/a2a/"+e.orgB.Slug+"/echo-once", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": map[string]any{"id": id}})
	require.Equal(t, http.StatusNotFound, r.Status, "B has no such agent: %s", r.Raw)

	// A definition not exposed is not an A2A agent, even to its owner.
	e.fails(e.keyA, http.MethodGet, "/a2a/"+e.orgA.Slug+"/private/.well-known/agent-card.json", nil, http.StatusNotFound, "not_found")
	require.Equal(t, http.StatusNotFound, e.rpc(e.keyA, "private", "message/send", send).Status)
	// A task is a task of its own agent only.
	r = e.rpc(e.keyA, "echo-chat", "tasks/get", map[string]any{"id": id})
	require.Equal(t, -32001, rpcError(t, r), "%s", r.Raw)

	mcpRespectsRoles(t, e)
}

// mcpRespectsRoles is TestA2AAndMCPRespectRoles's MCP half.
func mcpRespectsRoles(t *testing.T, e *env) {
	e.mcpDefinition("mcp-once", "one-shot", true)
	e.mcpDefinition("mcp-private", "one-shot", false)
	endpoint := "/mcp/" + e.orgA.Slug
	initialize := map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "raw", "version": "1"}}}
	e.fails("", http.MethodPost, endpoint, initialize, http.StatusUnauthorized, "unauthenticated")
	_, err := e.mcpConnect("", e.orgA.Slug)
	require.Error(t, err, "no key, no session")

	read, err := e.mcpConnect(e.keyWith("read"), e.orgA.Slug)
	require.NoError(t, err)
	require.Equal(t, []string{"run_mcp-once"}, toolNames(t, read), "a read key lists; the definition not exposed is no tool")
	res, text := callText(t, read, "run_mcp-once", map[string]any{"message": "hi"}, nil)
	require.True(t, res.IsError, text)
	require.Contains(t, text, `"run" role`, "the refusal names the role")
	e.fails(e.keyWith("run"), http.MethodPost, endpoint, initialize, http.StatusForbidden, "permission_denied")

	owner, err := e.mcpConnect(e.keyA, e.orgA.Slug)
	require.NoError(t, err)
	res, text = callText(t, owner, "run_mcp-once", map[string]any{"message": "hi"}, nil)
	require.False(t, res.IsError, text)
	_, err = owner.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_mcp-private", Arguments: map[string]any{"message": "hi"}})
	require.Error(t, err, "a definition not exposed cannot be called")
	_, err = owner.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_echo-once", Arguments: map[string]any{"message": "hi"}})
	require.Error(t, err, "exposed over A2A is not exposed over MCP")

	// Organization B sees nothing of A's tools.
	e.fails(e.keyB, http.MethodPost, endpoint, initialize, http.StatusNotFound, "not_found")
	_, err = e.mcpConnect(e.keyB, e.orgA.Slug)
	require.Error(t, err)
	other, err := e.mcpConnect(e.keyB, e.orgB.Slug)
	require.NoError(t, err)
	require.Empty(t, toolNames(t, other), "B's own endpoint has none of A's tools")
	_, err = other.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_mcp-once", Arguments: map[string]any{"message": "hi"}})
	require.Error(t, err)
}

// TestA2ABadInput: what the JSON-RPC endpoint refuses, each with the
// spec's error code, an HTTP 200 and a message in the caller's terms;
// never a 500.
func TestA2ABadInput(t *testing.T) {
	e := newEnv(t, envOptions{})
	e.a2aDefinition("echo-once", "one-shot", true)
	path := "/a2a/" + e.orgA.Slug + "/echo-once"
	for name, c := range map[string]struct {
		body any
		code int
	}{
		"not JSON":         {`{"jsonrpc": "2.0",`, -32700},
		"a batch":          {`[{"jsonrpc": "2.0", "id": 1, "method": "tasks/get"}]`, -32600},
		"no jsonrpc":       {map[string]any{"id": 1, "method": "tasks/get", "params": map[string]any{"id": "x"}}, -32600},
		"no id":            {map[string]any{"jsonrpc": "2.0", "method": "tasks/get", "params": map[string]any{"id": "x"}}, -32600},
		"unknown method":   {map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tasks/explode"}, -32601},
		"params not obj":   {map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": []any{1}}, -32602},
		"params bad type":  {map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": map[string]any{"id": 5}}, -32602},
		"no task id":       {map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tasks/cancel", "params": map[string]any{}}, -32602},
		"unknown task":     {map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": map[string]any{"id": uuid.NewString()}}, -32001},
		"malformed task":   {map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": map[string]any{"id": "no-such-task"}}, -32001},
		"negative history": {map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": map[string]any{"id": uuid.NewString(), "historyLength": -1}}, -32602},
		"push config":      {map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tasks/pushNotificationConfig/set", "params": map[string]any{}}, -32003},
		"message no parts": {map[string]any{"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": map[string]any{"message": map[string]any{"messageId": "m", "role": "user", "parts": []any{}}}}, -32602},
		"message to unknown task": {map[string]any{"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": map[string]any{"message": map[string]any{
			"messageId": "m", "role": "user", "taskId": uuid.NewString(), "parts": []any{map[string]any{"kind": "text", "text": "hi"}}}}}, -32001},
	} {
		r := e.do(e.keyA, http.MethodPost, path, c.body)
		require.Equal(t, http.StatusOK, r.Status, "%s: %s", name, r.Raw)
		require.Equal(t, c.code, rpcError(t, r), "%s: %s", name, r.Raw)
		require.Equal(t, "2.0", r.Body["jsonrpc"], name)
	}
	// Routes that are not the agent's are the REST API's {code, message}.
	e.fails(e.keyA, http.MethodGet, path, nil, http.StatusNotFound, "not_found")
}

// TestA2AApprovalRoundTrip: a task whose tool call needs approval is
// input-required with the call in its status message; a message with a
// data part {"approved": true} (from a key with the approve role)
// decides it and the task completes.
func TestA2AApprovalRoundTrip(t *testing.T) {
	fake := httptest.NewServer(promptModel{t})
	t.Cleanup(fake.Close)
	p, err := anthropic.New(anthropic.Options{BaseURL: fake.URL, APIKey: "test-key", Models: []string{responsesModel}})
	require.NoError(t, err)
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{p}, tools: demo.Tools(),
		toolPolicy: agentsdk.Policies{demo.WordCountTool: agentsdk.PolicyAsk}})
	e.ok(e.keyA, http.MethodPost, "/api/orgs/"+e.orgA.Slug+"/agent-definitions", map[string]any{
		"name": "Counter", "slug": "counter", "tools": []string{demo.WordCountTool}, "expose": map[string]any{"a2a": true},
		"models": []any{map[string]any{"provider": "anthropic", "modelId": responsesModel}},
	})
	msg := func(id string, parts ...any) map[string]any {
		return map[string]any{"message": map[string]any{"kind": "message", "messageId": id, "role": "user", "parts": parts}}
	}
	r := e.rpc(e.keyA, "counter", "message/send", msg("m-1", map[string]any{"kind": "text", "text": "please count"}))
	task := r.Body["result"].(map[string]any)
	st := task["status"].(map[string]any)
	require.Equal(t, "input-required", st["state"], "%s", r.Raw)
	parts := st["message"].(map[string]any)["parts"].([]any)
	require.Contains(t, parts[0].(map[string]any)["text"], "Approve the call of word_count")
	require.Equal(t, "toolu_2", parts[1].(map[string]any)["data"].(map[string]any)["pendingToolCalls"].([]any)[0].(map[string]any)["toolCallId"])
	withTask := func(m map[string]any) map[string]any {
		m["message"].(map[string]any)["taskId"] = task["id"]
		return m
	}

	// Text does not answer an approval; a run key without approve cannot.
	r = e.rpc(e.keyA, "counter", "message/send", withTask(msg("m-2", map[string]any{"kind": "text", "text": "go on"})))
	require.Equal(t, -32600, rpcError(t, r), "%s", r.Raw)
	r = e.rpc(e.keyWith("run", "read"), "counter", "message/send", withTask(msg("m-3", map[string]any{"kind": "data", "data": map[string]any{"approved": true}})))
	require.Equal(t, http.StatusForbidden, r.Status, "%s", r.Raw)

	r = e.rpc(e.keyA, "counter", "message/send", withTask(msg("m-4", map[string]any{"kind": "data", "data": map[string]any{"approved": true}})))
	done := r.Body["result"].(map[string]any)
	require.Equal(t, "completed", done["status"].(map[string]any)["state"], "%s", r.Raw)
	require.Equal(t, "Three words.", done["artifacts"].([]any)[0].(map[string]any)["parts"].([]any)[0].(map[string]any)["text"])
}
