package gateway_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/gateway"
)

// explainingModel echoes once per user message, then answers; asked to
// explain (the explain call's system prompt), it counts the call, keeps
// the replay it read and explains after a short delay (so the gateway
// can be stopped while the call runs).
func explainingModel(explains *atomic.Int32, replays *requests) *scripted.Provider {
	return scripted.New(func(_ int, req agentsdk.ModelRequest) scripted.Turn {
		if strings.HasPrefix(req.System, "You explain") {
			n := explains.Add(1)
			replays.add(req)
			return scripted.Turn{Text: "The agent echoed as asked (explanation " + string(rune('0'+n)) + ").",
				Delay: 300 * time.Millisecond, Usage: agentsdk.Usage{Input: 900, Output: 40}}
		}
		last := req.Messages[len(req.Messages)-1]
		if last.Role == agentsdk.RoleUser {
			return scripted.Turn{Text: "Echoing.", ToolCalls: echoCall("call_"+strings.Fields(last.Text())[0], last.Text())}
		}
		return scripted.Turn{Text: "Done: " + last.Text()}
	})
}

// TestExplainRunIsStoredOnce: explaining an execution makes one model
// call on a worker, whose text and usage are stored; asking again for the
// same leaf returns the stored explanation without a call; a new turn
// (a new leaf) gets a new one, made even when the gateway that asked stops
// at once. Bad requests are refused clearly.
func TestExplainRunIsStoredOnce(t *testing.T) {
	var explains atomic.Int32
	var replays requests
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{explainingModel(&explains, &replays)}, tools: []*agentsdk.Tool{echoTool()},
		gateway: func(o *gateway.Options) { o.ExplainModel = scripted.Model("scripted-explain") }})
	base := "/api/orgs/" + e.orgA.Slug + "/agent-executions"
	ex := e.ok(e.keyA, http.MethodPost, base, map[string]any{
		"kind": "react-agent", "userPrompt": "first: echo this", "models": scriptedModel,
		"tools": []string{"echo"}, "config": map[string]any{"mode": "multi-turn"},
	})
	id := ex["id"].(string)
	path := base + "/" + id
	e.fails(e.keyA, http.MethodGet, path+"/explanation", nil, http.StatusNotFound, "not_found")
	e.waitStatus(id, "WAITING", time.Minute)
	leafOf := func() any { return e.ok(e.keyA, http.MethodGet, path+"/messages", nil)["leafEntryId"] }
	leaf1 := leafOf()
	usageBefore := int64Field(t, e.ok(e.keyA, http.MethodGet, path+"/usage", nil)["total"].(map[string]any), "calls")

	spendBefore, err := e.es.SpendOn(context.Background(), e.orgA.ID, time.Now())
	require.NoError(t, err)
	x := e.ok(e.keyA, http.MethodPost, path+"/explain", map[string]any{})
	require.Equal(t, leaf1, x["leafEntryId"])
	require.Equal(t, true, x["current"])
	require.Contains(t, []any{"pending", "completed"}, x["status"])
	var done map[string]any
	poll(t, time.Minute, func() bool {
		done = e.ok(e.keyA, http.MethodGet, path+"/explanation", nil)
		require.NotEqual(t, "failed", done["status"], "%v", done["errorMessage"])
		return done["status"] == "completed"
	}, "the explanation was never made")
	require.Equal(t, x["id"], done["id"])
	require.Equal(t, "The agent echoed as asked (explanation 1).", done["text"])
	require.Equal(t, map[string]any{"provider": "scripted", "modelId": "scripted-explain", "endpoint": ""}, done["model"])
	require.EqualValues(t, 1, explains.Load())
	require.EqualValues(t, 2, done["decisionPoints"], "the echo and the stop")
	require.Equal(t, false, done["truncated"])
	require.Positive(t, int64Field(t, done, "replayTokens"))
	require.EqualValues(t, 900, done["usage"].(map[string]any)["inputTokens"])

	// The replay the model read: the task, the decisions and their
	// outcomes, the final answer.
	replay := replays.turn(0).Messages[0].Text()
	require.Contains(t, replay, "first: echo this")
	require.Contains(t, replay, `tool_call echo {"text":"first: echo this"} → completed: echo: first: echo this`)
	require.Contains(t, replay, "stop (end_turn)")
	require.Contains(t, replay, "## Final answer\nDone: echo: first: echo this")

	// Not paid for twice: the same leaf answers from the store.
	again := e.ok(e.keyA, http.MethodPost, path+"/explain", map[string]any{})
	require.Equal(t, done["id"], again["id"])
	require.Equal(t, "completed", again["status"])
	require.Equal(t, done["text"], again["text"])
	require.EqualValues(t, 1, explains.Load(), "a second request calls no model")
	// The call counts in the execution's usage.
	usage := e.ok(e.keyA, http.MethodGet, path+"/usage", nil)
	require.Equal(t, usageBefore+1, int64Field(t, usage["total"].(map[string]any), "calls"))
	keys := map[any]bool{}
	for _, l := range items(t, usage, "lines") {
		keys[l["key"]] = true
	}
	require.True(t, keys["scripted/scripted-explain"], "usage by model: %v", keys)
	// And in the organization's daily spend, which its quota bounds.
	spend, err := e.es.SpendOn(context.Background(), e.orgA.ID, time.Now())
	require.NoError(t, err)
	require.Equal(t, spendBefore.Tokens+940, spend.Tokens)

	// Bad input.
	e.fails(e.keyA, http.MethodPost, base+"/00000000-0000-0000-0000-000000000000/explain", map[string]any{}, http.StatusNotFound, "not_found")
	e.fails(e.keyB, http.MethodPost, "/api/orgs/"+e.orgB.Slug+"/agent-executions/"+id+"/explain", map[string]any{}, http.StatusNotFound, "not_found")
	e.fails(e.keyB, http.MethodGet, "/api/orgs/"+e.orgB.Slug+"/agent-executions/"+id+"/explanation", nil, http.StatusNotFound, "not_found")
	e.fails(e.keyA, http.MethodGet, path+"/explanation?leafEntryId=00000000-0000-0000-0000-000000000000", nil, http.StatusNotFound, "not_found")

	// A new turn is a new leaf: a new explanation, made by the worker
	// though the gateway that asked for it stops at once.
	e.ok(e.keyA, http.MethodPost, path+"/signal", map[string]any{"signalName": "userMessage", "signalValue": map[string]any{"text": "second: echo that"}})
	poll(t, time.Minute, func() bool {
		return len(items(t, e.ok(e.keyA, http.MethodGet, path+"/messages", nil), "messages")) == 8
	}, "the second turn never ended")
	e.waitStatus(id, "WAITING", time.Minute)
	leaf2 := leafOf()
	require.NotEqual(t, leaf1, leaf2)
	x2 := e.ok(e.keyA, http.MethodPost, path+"/explain", map[string]any{})
	require.NotEqual(t, x["id"], x2["id"])
	require.Equal(t, leaf2, x2["leafEntryId"])
	old := e.ok(e.keyA, http.MethodGet, path+"/explanation?leafEntryId="+leaf1.(string), nil)
	require.Equal(t, x["id"], old["id"])
	require.Equal(t, false, old["current"])
	e.stopGateway()
	var stored entrystore.Explanation
	poll(t, time.Minute, func() bool {
		var err error
		stored, err = e.es.GetExplanation(context.Background(), e.orgA.ID, x2["id"].(string))
		require.NoError(t, err)
		return stored.Status != entrystore.ExplanationPending
	}, "the second explanation was never made")
	require.Equal(t, entrystore.ExplanationCompleted, stored.Status, stored.Error)
	require.Equal(t, "The agent echoed as asked (explanation 2).", stored.Text)
	require.EqualValues(t, 2, explains.Load())
	require.Contains(t, replays.turn(1).Messages[0].Text(), "second: echo that")
}

// TestExplainNeedsAModel: a gateway with no explain model refuses to
// explain with a 400 that says so, and calls no model.
func TestExplainNeedsAModel(t *testing.T) {
	var explains atomic.Int32
	var replays requests
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{explainingModel(&explains, &replays)}, tools: []*agentsdk.Tool{echoTool()}})
	base := "/api/orgs/" + e.orgA.Slug + "/agent-executions"
	ex := e.ok(e.keyA, http.MethodPost, base, map[string]any{
		"kind": "react-agent", "userPrompt": "first: echo this", "models": scriptedModel, "tools": []string{"echo"},
	})
	id := ex["id"].(string)
	e.waitStatus(id, "COMPLETED", time.Minute)
	r := e.fails(e.keyA, http.MethodPost, base+"/"+id+"/explain", map[string]any{}, http.StatusBadRequest, "invalid_argument")
	require.Contains(t, r.Body["message"], "no explain model")
	e.fails(e.keyA, http.MethodPost, base+"/00000000-0000-0000-0000-000000000000/explain", map[string]any{}, http.StatusNotFound, "not_found")
	require.Zero(t, explains.Load())
}

// TestExplainRespectsTheDailyBudget: once the organization's daily token
// quota is spent, an explanation fails saying so, and no model is called.
func TestExplainRespectsTheDailyBudget(t *testing.T) {
	var explains atomic.Int32
	var replays requests
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{explainingModel(&explains, &replays)}, tools: []*agentsdk.Tool{echoTool()},
		gateway: func(o *gateway.Options) { o.ExplainModel = scripted.Model("scripted-explain") }})
	base := "/api/orgs/" + e.orgA.Slug + "/agent-executions"
	ex := e.ok(e.keyA, http.MethodPost, base, map[string]any{
		"kind": "react-agent", "userPrompt": "first: echo this", "models": scriptedModel, "tools": []string{"echo"},
	})
	id := ex["id"].(string)
	e.waitStatus(id, "COMPLETED", time.Minute)
	_, err := e.es.SetQuota(context.Background(), entrystore.Quota{OrgID: e.orgA.ID, TokensPerDay: 1})
	require.NoError(t, err)
	e.ok(e.keyA, http.MethodPost, base+"/"+id+"/explain", map[string]any{})
	var x map[string]any
	poll(t, time.Minute, func() bool {
		x = e.ok(e.keyA, http.MethodGet, base+"/"+id+"/explanation", nil)
		return x["status"] != "pending"
	}, "the explanation never ended")
	require.Equal(t, "failed", x["status"])
	require.Contains(t, x["errorMessage"], "tokensPerDay quota is spent")
	require.Zero(t, explains.Load())
}
