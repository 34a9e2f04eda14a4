package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
)

// decisionTools are an echo, a tool that always fails and a guarded
// echo the tests' policy makes ask for approval.
func decisionTools() []*agentsdk.Tool {
	fail := agentsdk.NewTool("lookup", "Looks up an order.",
		func(_ context.Context, _ agentsdk.ToolInvocation, a echoArgs) (string, error) {
			return "", errors.New("order " + a.Text + " not found")
		})
	guarded := agentsdk.NewTool("refund", "Refunds an order.",
		func(_ context.Context, _ agentsdk.ToolInvocation, a echoArgs) (string, error) {
			return "refunded " + a.Text, nil
		})
	return []*agentsdk.Tool{echoTool(), fail, guarded}
}

// decisionScript calls echo (thinking first), lookup (which fails) and
// refund (which waits for approval), then stops. Each call reads 100 +
// its turn tokens, as the provider counts them. Asked to explain, it
// says what happened.
func decisionScript(reqs *requests) *scripted.Provider {
	call := func(id, name, text string) []agentsdk.ToolCall {
		return []agentsdk.ToolCall{{ID: id, Name: name, Arguments: []byte(`{"text":"` + text + `"}`)}}
	}
	turns := []scripted.Turn{
		{Thinking: "The user wants order 4711 checked; echo first.", Text: "Echoing.", ToolCalls: call("call_echo", "echo", "hello")},
		{Text: "Now I look the order up.", ToolCalls: call("call_lookup", "lookup", "4711")},
		{Text: "I will refund it.", ToolCalls: call("call_refund", "refund", "4711")},
		{Text: "Refunded order 4711."},
	}
	return scripted.New(func(turn int, req agentsdk.ModelRequest) scripted.Turn {
		if strings.HasPrefix(req.System, "You explain") {
			return scripted.Turn{Text: "The agent refunded order 4711 after a failed lookup."}
		}
		reqs.add(req)
		t := turns[min(turn, len(turns)-1)]
		t.Usage = agentsdk.Usage{Input: int64(100 + turn), Output: 7}
		return t
	})
}

// TestDecisionPointsCarryContextAndOutcome: a run with two tool calls
// (one failing), one approval and a stop lists five decision points in
// order; each one's context reference resolves, through context-at-entry,
// to the request the model was sent, with the provider's token count;
// outcomes, the approval's decider and the filters are right.
func TestDecisionPointsCarryContextAndOutcome(t *testing.T) {
	var reqs requests
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{decisionScript(&reqs)}, tools: decisionTools()})
	base := "/api/orgs/" + e.orgA.Slug + "/agent-executions"
	ex := e.ok(e.keyA, http.MethodPost, base, map[string]any{
		"kind": "react-agent", "userPrompt": "Refund order 4711.", "models": scriptedModel,
		"tools": []string{"echo", "lookup", "refund"}, "config": map[string]any{"toolPolicy": map[string]string{"refund": "ask"}},
	})
	id := ex["id"].(string)
	path := base + "/" + id
	poll(t, time.Minute, func() bool {
		for _, c := range e.all(path+"/tool-calls?pageSize=500", "toolCalls") {
			if c["toolCallId"] == "call_refund" && c["status"] == "awaiting_approval" {
				return true
			}
		}
		return false
	}, "the refund never waited for approval")
	// A pending approval is a decision point already.
	pending := e.all(path+"/decision-points?kind=approval", "decisionPoints")
	require.Len(t, pending, 1)
	require.Equal(t, "pending", pending[0]["outcome"].(map[string]any)["status"])
	e.ok(e.keyA, http.MethodPost, path+"/tool-calls/call_refund/approval", map[string]any{"decision": "approve", "reason": "customer asked"})
	e.waitStatus(id, "COMPLETED", time.Minute)

	dps := e.all(path+"/decision-points?pageSize=500", "decisionPoints")
	var kinds, tools []string
	for _, d := range dps {
		kinds = append(kinds, d["kind"].(string))
		tool, _ := d["toolName"].(string)
		tools = append(tools, tool)
	}
	require.Equal(t, []string{"tool_call", "tool_call", "tool_call", "approval", "stop"}, kinds)
	require.Equal(t, []string{"echo", "lookup", "refund", "refund", ""}, tools)

	// The context of each decision is the request its model call sent.
	turnOf := []int{0, 1, 2, 2, 3}
	for i, d := range dps {
		c := d["context"].(map[string]any)
		got := e.ok(e.keyA, http.MethodGet, path+"/entries/"+c["entryId"].(string)+"/context?pageSize=500", nil)
		sent := reqs.turn(turnOf[i])
		require.Equal(t, true, got["sent"], "decision %d", i)
		want, err := json.Marshal(sent.Messages)
		require.NoError(t, err)
		gotMsgs, err := json.Marshal(got["messages"])
		require.NoError(t, err)
		require.JSONEq(t, string(want), string(gotMsgs), "decision %d: the messages the model received", i)
		require.EqualValues(t, 100+turnOf[i], c["tokens"], "decision %d: the provider's count", i)
		require.NotEqual(t, true, c["estimated"])
		require.Equal(t, map[string]any{"provider": "scripted", "modelId": "scripted-1", "endpoint": ""}, d["model"])
	}

	// Reasoning: the thinking when there is some, else the text.
	require.Equal(t, "The user wants order 4711 checked; echo first.", dps[0]["reasoning"])
	require.Equal(t, "thinking", dps[0]["reasoningSource"])
	require.Equal(t, "Now I look the order up.", dps[1]["reasoning"])
	require.Equal(t, "text", dps[1]["reasoningSource"])

	// Outcomes.
	outcome := func(i int) map[string]any { return dps[i]["outcome"].(map[string]any) }
	require.JSONEq(t, `{"text":"hello"}`, mustJSON(t, dps[0]["arguments"]))
	require.Equal(t, "completed", outcome(0)["status"])
	require.Equal(t, "echo: hello", outcome(0)["excerpt"])
	require.NotEmpty(t, outcome(0)["resultEntryId"])
	require.Equal(t, "error", outcome(1)["status"])
	require.Contains(t, outcome(1)["excerpt"], "order 4711 not found")
	require.Equal(t, "completed", outcome(2)["status"])
	require.Equal(t, "refunded 4711", outcome(2)["excerpt"])
	require.Equal(t, "approved", outcome(3)["status"])
	approval := outcome(3)["approval"].(map[string]any)
	require.Equal(t, "approve", approval["decision"])
	require.Equal(t, e.keyID(e.keyA), approval["decidedBy"])
	require.Equal(t, "customer asked", approval["reason"])
	require.Equal(t, "tool_use", dps[0]["stopReason"])
	require.Equal(t, "end_turn", dps[4]["stopReason"])
	require.Nil(t, dps[4]["outcome"], "a stop has no outcome")
	require.Equal(t, "Refunded order 4711.", dps[4]["reasoning"])

	// Filters, and pages of one: the same points.
	require.Len(t, e.all(path+"/decision-points?kind=stop", "decisionPoints"), 1)
	lookups := e.all(path+"/decision-points?toolName=lookup", "decisionPoints")
	require.Len(t, lookups, 1)
	require.Equal(t, "call_lookup", lookups[0]["toolCallId"])
	require.Len(t, e.all(path+"/decision-points?toolName=refund&kind=tool_call", "decisionPoints"), 1)
	require.Equal(t, dps, e.all(path+"/decision-points?pageSize=1", "decisionPoints"))
	require.Equal(t, dps[2:4], e.all(path+"/decision-points?pageSize=1&toolName=refund", "decisionPoints"))

	// Bad input.
	e.fails(e.keyA, http.MethodGet, path+"/decision-points?kind=guess", nil, http.StatusBadRequest, "invalid_argument")
	e.fails(e.keyA, http.MethodGet, path+"/decision-points?cursor=nonsense", nil, http.StatusBadRequest, "invalid_argument")
	e.fails(e.keyA, http.MethodGet, base+"/00000000-0000-0000-0000-000000000000/decision-points", nil, http.StatusNotFound, "not_found")
	e.fails(e.keyB, http.MethodGet, "/api/orgs/"+e.orgB.Slug+"/agent-executions/"+id+"/decision-points", nil, http.StatusNotFound, "not_found")
}

// mustJSON is v as JSON text.
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}
