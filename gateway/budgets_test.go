package gateway_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/anthropic"
	"github.com/agentree/agentree/agentsdk/providertest"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/agentsdk/tools/demo"
	"github.com/agentree/agentree/gateway"
)

// budgetCeiling is the operator's ceiling the budget tests' gateways run
// under.
var budgetCeiling = gateway.BudgetCeiling{MaxTokens: 5000, MaxCostUsd: 10}

// TestBudgetDowngradesThenPauses: against a fake Anthropic server that
// reports 70 tokens a call, an execution with budget {maxTokens 200,
// downgradeAt 0.5, downgradeModel haiku} makes two calls to the model it
// asked for; the third, past half the cap, goes to the cheaper model (the
// provider's request names it, the call's record says downgraded: budget,
// the execution's budget state says downgraded); the fourth is refused
// before it reaches the server and the execution ends PAUSED with reason
// budget. A resume must raise the cap past what was spent and stay under
// the operator's ceiling; raised, it continues the same conversation, at
// the asked-for model again, to the end.
func TestBudgetDowngradesThenPauses(t *testing.T) {
	const model, cheap = "claude-sonnet-4-5", "claude-haiku-4-5"
	usage := providertest.AnthropicUsage{Input: 40}
	// Each search asks something else: the same call three times in a
	// row would stop the agent as a loop.
	search := func(m, id string) providertest.Reply {
		return reply(providertest.NewAnthropicStream(m, usage).Text("Searching.").
			ToolUse(id, demo.SearchNotesTool, `{"query": "history `+id+`"}`).End("tool_use", 30))
	}
	srv := providertest.NewServer(t, search(model, "toolu_1"), search(model, "toolu_2"), search(cheap, "toolu_3"),
		reply(providertest.NewAnthropicStream(model, usage).Text("Done.").End("end_turn", 30)))
	p, err := anthropic.New(anthropic.Options{BaseURL: srv.URL, APIKey: "test-key"})
	require.NoError(t, err)
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{p}, tools: demo.Tools(),
		gateway: func(o *gateway.Options) { o.BudgetCeiling = budgetCeiling }})
	base := "/api/orgs/" + e.orgA.Slug + "/agent-executions"
	ex := e.ok(e.keyA, http.MethodPost, base, map[string]any{
		"kind": "react-agent", "userPrompt": "Find the notes on history.",
		"models": []any{map[string]any{"provider": "anthropic", "modelId": model}},
		"tools":  []string{demo.SearchNotesTool},
		"config": map[string]any{"budget": map[string]any{"maxTokens": 200, "downgradeAt": 0.5,
			"downgradeModel": map[string]any{"provider": "anthropic", "modelId": cheap}}},
	})
	budget := ex["config"].(map[string]any)["budget"].(map[string]any)
	require.EqualValues(t, 200, budget["maxTokens"], "a number in the API, not a quoted 64-bit integer")
	require.EqualValues(t, budgetCeiling.MaxCostUsd, budget["maxCostUsd"], "no cost cap asked for: the operator's ceiling is the cap")
	id := ex["id"].(string)
	path := base + "/" + id

	paused := e.waitStatus(id, "PAUSED", time.Minute)
	require.Equal(t, "budget", paused["stopReason"])
	require.Contains(t, paused["error"], "budget.maxTokens")
	reqs := srv.Requests()
	require.Len(t, reqs, 3, "the call past the cap never reached the model")
	require.Equal(t, model, unquote(t, reqs[0].Field(t, "model")))
	require.Equal(t, model, unquote(t, reqs[1].Field(t, "model")), "35% spent: under downgradeAt")
	require.Equal(t, cheap, unquote(t, reqs[2].Field(t, "model")), "70% spent: the cheaper model")

	// The stream says so as the call starts.
	st := e.openStream(t, e.keyA, path+"/stream/consolidated", "")
	evs := st.until(t, "agent.paused", 30*time.Second)
	st.close()
	var said []any
	for _, ev := range evs {
		var body map[string]any
		if ev.Event != "data" || json.Unmarshal([]byte(ev.Data), &body) != nil {
			continue
		}
		if d, _ := body["data"].(map[string]any); d != nil && d["type"] == "model_downgraded" {
			said = append(said, d["downgrade"])
		}
	}
	require.Equal(t, []any{map[string]any{"model": "anthropic/" + cheap, "from": "anthropic/" + model, "reason": "budget"}}, said,
		"one model_downgraded data event, for the third call")

	var downgraded []any
	for _, en := range e.all(path+"/entries?pageSize=500", "entries") {
		if en["type"] == string(agentsdk.EntryLLMCall) {
			downgraded = append(downgraded, en["metadata"].(map[string]any)["downgraded"])
		}
	}
	require.Equal(t, []any{nil, nil, "budget"}, downgraded, "each call's record says whether a budget downgraded it")

	got := e.ok(e.keyA, http.MethodGet, path, nil)
	state := got["budget"].(map[string]any)
	require.EqualValues(t, 200, state["maxTokens"])
	require.EqualValues(t, 210, state["spentTokens"], "three calls of 70 tokens")
	require.Equal(t, true, state["downgraded"])
	require.Equal(t, cheap, state["downgradeModel"].(map[string]any)["modelId"])
	usage2 := e.ok(e.keyA, http.MethodGet, path+"/usage", nil)
	require.Equal(t, state, usage2["budget"], "the usage report shows the same state")

	// A resume that would pause again, or go past the ceiling, is refused.
	r := e.fails(e.keyA, http.MethodPost, path+"/resume", map[string]any{"budget": map[string]any{"maxTokens": 150}},
		http.StatusBadRequest, "invalid_argument")
	require.Contains(t, r.Body["message"], "spent already")
	r = e.fails(e.keyA, http.MethodPost, path+"/resume", map[string]any{"budget": map[string]any{"maxTokens": 100000}},
		http.StatusBadRequest, "invalid_argument")
	require.Contains(t, r.Body["message"], "ceiling")

	res := e.ok(e.keyA, http.MethodPost, path+"/resume", map[string]any{"budget": map[string]any{"maxTokens": 1000}})
	rid := res["id"].(string)
	rb := res["config"].(map[string]any)["budget"].(map[string]any)
	require.EqualValues(t, 1000, rb["maxTokens"])
	require.EqualValues(t, 0.5, rb["downgradeAt"], "fields the resume leaves out are kept")
	done := e.waitStatus(rid, "COMPLETED", time.Minute)
	require.Equal(t, "Done.", done["summary"])
	require.Equal(t, model, unquote(t, srv.Last().Field(t, "model")), "21% of the raised cap: the asked-for model again")
	rstate := e.ok(e.keyA, http.MethodGet, base+"/"+rid, nil)["budget"].(map[string]any)
	require.EqualValues(t, 280, rstate["spentTokens"], "the resumed execution carries the paused one's spend")
	require.Equal(t, false, rstate["downgraded"])
}

// TestChildrenRollUpIntoTheParentBudget: a parent with budget maxTokens
// 150 spends 100 tokens spawning a child; the child's first call (100
// left… 50 left of the parent's cap) goes ahead, its second is refused by
// the parent's cap: the child ends PAUSED with reason budget naming the
// parent's budget, the parent reads that as the child's outcome, and the
// parent's own next call is refused too (its children spent it): PAUSED,
// reason budget, its budget state counting the child's spend.
func TestChildrenRollUpIntoTheParentBudget(t *testing.T) {
	turns := spawnTurns([]string{"alpha"}, "echo")
	model := scripted.New(func(i int, req agentsdk.ModelRequest) scripted.Turn {
		turn := turns(i, req)
		turn.Usage = agentsdk.Usage{Input: 60, Output: 40}
		return turn
	})
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{model}, tools: []*agentsdk.Tool{echoTool(), agentsdk.SpawnAgentsTool()}})
	base := "/api/orgs/" + e.orgA.Slug + "/agent-executions"
	ex := e.ok(e.keyA, http.MethodPost, base, map[string]any{
		"kind": "react-agent", "userPrompt": "Research", "models": scriptedModel, "tools": []string{"echo", agentsdk.ToolSpawnAgents},
		"config": map[string]any{"budget": map[string]any{"maxTokens": 150}},
	})
	id := ex["id"].(string)
	path := base + "/" + id
	paused := e.waitStatus(id, "PAUSED", 2*time.Minute)
	require.Equal(t, "budget", paused["stopReason"])
	require.Contains(t, paused["error"], "budget.maxTokens is spent: 200 tokens used, of 150")

	children := items(t, e.ok(e.keyA, http.MethodGet, path+"/children", nil), "agentExecutions")
	require.Len(t, children, 1)
	child := children[0]
	require.Equal(t, "PAUSED", child["status"])
	require.Equal(t, "budget", child["stopReason"])
	require.Contains(t, child["error"], "the parent execution "+id+"'s budget.maxTokens is spent")

	rec := e.toolCall(path, "call_spawn")
	require.Contains(t, rec["output"].(map[string]any)["text"], "It paused before answering: the parent execution",
		"the parent sees the child's pause as its outcome")

	state := e.ok(e.keyA, http.MethodGet, path, nil)["budget"].(map[string]any)
	require.EqualValues(t, 200, state["spentTokens"], "the parent's call and its child's")
	cstate := e.ok(e.keyA, http.MethodGet, base+"/"+child["id"].(string), nil)["budget"].(map[string]any)
	require.EqualValues(t, 100, cstate["spentTokens"], "the child's own call")
	limits := cstate["limits"].([]any)
	require.Len(t, limits, 2, "the child's own line and its parent's")
	parent := limits[1].(map[string]any)
	require.Equal(t, "parent", parent["scope"])
	require.Equal(t, id, parent["ownerId"])
	require.Equal(t, true, parent["reached"])
	require.Equal(t, 2, model.Calls(), "the parent's first call and the child's first only: refused calls reach no model")
}

// TestBudgetRefusesBadInput: negative caps, downgradeAt outside (0, 1], a
// downgradeModel without its ID or that no worker serves, and caps above
// the operator's ceiling are 400s naming the field, on a create and a
// definition alike.
func TestBudgetRefusesBadInput(t *testing.T) {
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{stepper(0)}, tools: []*agentsdk.Tool{echoTool()},
		gateway: func(o *gateway.Options) { o.BudgetCeiling = budgetCeiling }})
	org := "/api/orgs/" + e.orgA.Slug
	create := func(budget map[string]any) map[string]any {
		return map[string]any{"kind": "react-agent", "userPrompt": "Hello.", "models": scriptedModel,
			"config": map[string]any{"budget": budget}}
	}
	for _, c := range []struct {
		budget map[string]any
		says   string
	}{
		{map[string]any{"maxTokens": -1}, "budget.maxTokens must be 0 (no limit) or more"},
		{map[string]any{"maxCostUsd": -0.5}, "budget.maxCostUsd must be a number of USD"},
		{map[string]any{"totalMaxTokens": -3}, "budget.totalMaxTokens must be 0"},
		{map[string]any{"downgradeAt": 1.5}, "budget.downgradeAt must be a share of the cap"},
		{map[string]any{"downgradeAt": -0.2}, "budget.downgradeAt must be a share of the cap"},
		{map[string]any{"downgradeModel": map[string]any{"provider": "anthropic"}}, "budget.downgradeModel needs provider and modelId"},
		{map[string]any{"maxTokens": 5001}, "over the operator's ceiling of 5000"},
		{map[string]any{"downgradeModel": map[string]any{"provider": "nowhere", "modelId": "cheap"}}, `budget.downgradeModel provider "nowhere" model "cheap": no live worker`},
		{map[string]any{"maxCostUsd": 10.5}, "over the operator's ceiling of 10 USD"},
	} {
		r := e.fails(e.keyA, http.MethodPost, org+"/agent-executions", create(c.budget), http.StatusBadRequest, "invalid_argument")
		require.Contains(t, r.Body["message"], c.says, "%v", c.budget)
	}
	r := e.fails(e.keyA, http.MethodPost, org+"/agent-definitions", map[string]any{"name": "Big", "slug": "big", "models": scriptedModel,
		"config": map[string]any{"budget": map[string]any{"maxTokens": 9000}}}, http.StatusBadRequest, "invalid_argument")
	require.Contains(t, r.Body["message"], "ceiling")
	require.Zero(t, e.count(`SELECT count(*) FROM agent_execution WHERE org_id = $1`, e.orgA.ID), "nothing was created")

	// Within the ceiling it passes, and an execution asking for no cap
	// gets the ceiling's.
	ex := e.ok(e.keyA, http.MethodPost, org+"/agent-executions", create(map[string]any{"downgradeAt": 1}))
	b := ex["config"].(map[string]any)["budget"].(map[string]any)
	require.EqualValues(t, budgetCeiling.MaxTokens, b["maxTokens"])
	require.EqualValues(t, budgetCeiling.MaxCostUsd, b["maxCostUsd"])
}

// unquote is a JSON string field's text (providertest.Request.Field
// gives the raw JSON).
func unquote(t *testing.T, raw string) string {
	t.Helper()
	var s string
	require.NoError(t, json.Unmarshal([]byte(raw), &s), "not a JSON string: %s", raw)
	return s
}
