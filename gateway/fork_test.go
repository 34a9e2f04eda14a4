package gateway_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
)

// echoingModel answers each user message with "answer to <it>", and calls
// echo when asked to.
func echoingModel() *scripted.Provider {
	return scripted.New(func(_ int, req agentsdk.ModelRequest) scripted.Turn {
		last := req.Messages[len(req.Messages)-1]
		if last.Role == agentsdk.RoleUser && last.Text() == "use a tool" {
			return scripted.Turn{ToolCalls: echoCall("call_t", "t")}
		}
		return scripted.Turn{Text: "answer to " + last.Text()}
	})
}

// TestForkSharesThePrefix: a fork from the middle of a 50-turn execution
// shares its conversation up to the entry by reference (it adds only its
// own entries), answers differently, and leaves the original untouched.
func TestForkSharesThePrefix(t *testing.T) {
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{echoingModel()}, tools: []*agentsdk.Tool{echoTool()}})
	ctx := context.Background()
	base := "/api/orgs/" + e.orgA.Slug + "/agent-executions"
	ex := e.ok(e.keyA, http.MethodPost, base, map[string]any{
		"kind": "react-agent", "userPrompt": "message 1", "models": scriptedModel, "tools": []string{"echo"},
		"config": map[string]any{"mode": "multi-turn"},
	})
	id := ex["id"].(string)
	path := base + "/" + id
	seq := 0.0
	waitTurn := func() {
		poll(t, time.Minute, func() bool {
			got := e.ok(e.keyA, http.MethodGet, path, nil)
			return got["status"] == "WAITING" && got["currentCheckpointSeq"].(float64) > seq
		}, "turn never ended")
		seq = e.ok(e.keyA, http.MethodGet, path, nil)["currentCheckpointSeq"].(float64)
	}
	waitTurn()
	for i := 2; i <= 50; i++ {
		e.ok(e.keyA, http.MethodPost, path+"/signal", map[string]any{"signalName": "userMessage", "signalValue": map[string]any{"text": fmt.Sprintf("message %d", i)}})
		waitTurn()
	}
	before := items(t, e.ok(e.keyA, http.MethodGet, path+"/messages?pageSize=500", nil), "messages")
	require.Len(t, before, 100)
	entries := e.all(path+"/entries?pageSize=500", "entries")
	var at map[string]any // the answer to message 25
	for _, en := range entries {
		if en["role"] == "assistant" && en["content"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"] == "answer to message 25" {
			at = en
		}
	}
	require.NotNil(t, at)
	var rowsBefore int
	require.NoError(t, e.es.Pool().QueryRow(ctx, `SELECT count(*) FROM agent_entry`).Scan(&rowsBefore))

	fork := e.ok(e.keyA, http.MethodPost, path+"/fork", map[string]any{"entryId": at["id"], "userPrompt": "a different question"})
	fid := fork["id"].(string)
	require.Equal(t, id, fork["forkedFrom"])
	require.Equal(t, at["id"], fork["forkedFromEntry"])
	e.waitStatus(fid, "WAITING", time.Minute)

	forked := items(t, e.ok(e.keyA, http.MethodGet, base+"/"+fid+"/messages?pageSize=500", nil), "messages")
	require.Len(t, forked, 52, "the first 50 messages, shared, and the fork's own two")
	require.Equal(t, before[:50], forked[:50])
	require.Equal(t, "answer to a different question", forked[51]["content"].([]any)[0].(map[string]any)["text"])
	require.Equal(t, before, items(t, e.ok(e.keyA, http.MethodGet, path+"/messages?pageSize=500", nil), "messages"), "the original is untouched")

	var rowsAfter, own int
	require.NoError(t, e.es.Pool().QueryRow(ctx, `SELECT count(*) FROM agent_entry`).Scan(&rowsAfter))
	require.NoError(t, e.es.Pool().QueryRow(ctx, `SELECT count(*) FROM agent_entry WHERE agent_execution_id = $1`, fid).Scan(&own))
	require.Equal(t, 2, own, "user message and answer: no copies")
	require.Equal(t, rowsBefore+own, rowsAfter)

	forks := items(t, e.ok(e.keyA, http.MethodGet, path+"/forks", nil), "agentExecutions")
	require.Len(t, forks, 1)
	require.Equal(t, fid, forks[0]["id"])

	// Bad input.
	e.fails(e.keyA, http.MethodPost, path+"/fork", map[string]any{"entryId": at["id"]}, http.StatusBadRequest, "invalid_argument")
	e.fails(e.keyA, http.MethodPost, path+"/fork", map[string]any{"userPrompt": "x"}, http.StatusBadRequest, "invalid_argument")
	e.fails(e.keyA, http.MethodPost, path+"/fork", map[string]any{"entryId": "00000000-0000-0000-0000-000000000000", "userPrompt": "x"}, http.StatusNotFound, "not_found")
	e.fails(e.keyA, http.MethodPost, path+"/fork", map[string]any{"entryId": at["id"], "userPrompt": "x", "config": map[string]any{"maxTurns": 1e9}}, http.StatusBadRequest, "invalid_argument")
	e.fails(e.keyB, http.MethodPost, "/api/orgs/"+e.orgB.Slug+"/agent-executions/"+id+"/fork", map[string]any{"entryId": at["id"], "userPrompt": "x"}, http.StatusNotFound, "not_found")
	// An entry of another execution is not on this one's conversation.
	e.fails(e.keyA, http.MethodPost, base+"/"+fid+"/fork", map[string]any{"entryId": entries[len(entries)-1]["id"], "userPrompt": "x"}, http.StatusNotFound, "not_found")
	// At an answer whose tool calls are answered after it: fork at the result.
	e.ok(e.keyA, http.MethodPost, path+"/signal", map[string]any{"signalName": "userMessage", "signalValue": map[string]any{"text": "use a tool"}})
	waitTurn()
	var caller any
	for _, en := range e.all(path+"/entries?pageSize=500", "entries") {
		if c, ok := en["content"].(map[string]any)["content"].([]any); ok && len(c) > 0 && c[0].(map[string]any)["type"] == "tool_call" {
			caller = en["id"]
		}
	}
	require.NotNil(t, caller)
	r := e.fails(e.keyA, http.MethodPost, path+"/fork", map[string]any{"entryId": caller, "userPrompt": "x"}, http.StatusBadRequest, "invalid_argument")
	require.Contains(t, r.Body["message"], "fork at its last tool result")
}
