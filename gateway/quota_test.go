package gateway_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/providertest"
	"github.com/agentree/agentree/agentsdk/tools/demo"
)

// TestOrgQuotaPausesAtTheBudget: against a fake Anthropic server that
// reports usage, an organization with a tiny daily token budget runs one
// model call that crosses it; the next call is refused before it reaches
// the server and the execution ends PAUSED with stopReason budget, its
// conversation kept. While the budget is spent a create and a resume answer
// 429 quota_exceeded saying when it resets; once the quota is raised the
// resume continues the same conversation to the end.
func TestOrgQuotaPausesAtTheBudget(t *testing.T) {
	const model = "claude-sonnet-4-5"
	usage := providertest.AnthropicUsage{Input: 40}
	srv := providertest.NewServer(t,
		reply(providertest.NewAnthropicStream(model, usage).Text("Searching.").
			ToolUse("toolu_1", demo.SearchNotesTool, `{"query": "history"}`).End("tool_use", 30)),
		reply(providertest.NewAnthropicStream(model, usage).Text("Done.").End("end_turn", 5)),
	)
	e := newAnthropicEnv(t, srv)
	org := "/api/orgs/" + e.orgA.Slug
	base := org + "/agent-executions"
	create := map[string]any{
		"kind": "react-agent", "userPrompt": "Find the notes on history.",
		"models": []any{map[string]any{"provider": "anthropic", "modelId": model}},
		"tools":  []string{demo.SearchNotesTool},
	}

	q := e.ok(e.keyA, http.MethodPut, org+"/quota", map[string]any{"tokensPerDay": 50})
	require.EqualValues(t, 50, q["tokensPerDay"])
	require.NotEqual(t, true, q["isDefault"])

	ex := e.ok(e.keyA, http.MethodPost, base, create)
	id := ex["id"].(string)
	path := base + "/" + id
	paused := e.waitStatus(id, "PAUSED", time.Minute)
	require.Equal(t, "budget", paused["stopReason"])
	require.Contains(t, paused["error"], "tokensPerDay")
	require.Len(t, srv.Requests(), 1, "the call past the budget never reached the model")

	// Nothing lost: the answer that crossed the budget and its tool's
	// result are the paused conversation.
	msgs := items(t, e.ok(e.keyA, http.MethodGet, path+"/messages?pageSize=500", nil), "messages")
	roles := make([]string, len(msgs))
	for i, m := range msgs {
		roles[i] = m["role"].(string)
	}
	require.Equal(t, []string{"user", "assistant", "tool_result"}, roles)
	u := msgs[1]["usage"].(map[string]any)
	spent := mustNumber(t, u["input"]) + mustNumber(t, u["output"])
	require.Greater(t, spent, 50.0, "the one call crossed the budget")

	q = e.ok(e.keyA, http.MethodGet, org+"/quota", nil)
	require.EqualValues(t, spent, q["tokensToday"], "today's spend is the calls' usage")
	resets, err := time.Parse(time.RFC3339, q["resetsAt"].(string))
	require.NoError(t, err)
	require.Equal(t, time.Now().UTC().Truncate(24*time.Hour).Add(24*time.Hour), resets, "the next midnight UTC")

	// A second create and the resume are refused while the budget is spent.
	r := e.fails(e.keyA, http.MethodPost, base, create, http.StatusTooManyRequests, "quota_exceeded")
	require.Contains(t, r.Body["message"], "tokensPerDay")
	require.Contains(t, r.Body["message"], resets.Format(time.RFC3339), "it says when the budget resets")
	retry, err := strconv.Atoi(r.Header.Get("Retry-After"))
	require.NoError(t, err, "Retry-After: %q", r.Header.Get("Retry-After"))
	require.InDelta(t, time.Until(resets).Seconds(), retry, 5)
	r = e.fails(e.keyA, http.MethodPost, path+"/resume", map[string]any{}, http.StatusTooManyRequests, "quota_exceeded")
	require.Contains(t, r.Body["message"], "resets at")
	require.Equal(t, 1, e.count(`SELECT count(*) FROM agent_execution WHERE org_id = $1`, e.orgA.ID), "nothing was created")
	// Another organization's budget is its own.
	e.ok(e.keyB, http.MethodGet, "/api/orgs/"+e.orgB.Slug+"/quota", nil)

	// Raised, the resume continues the paused conversation to its end.
	e.ok(e.keyA, http.MethodPut, org+"/quota", map[string]any{"tokensPerDay": 1000})
	res := e.ok(e.keyA, http.MethodPost, path+"/resume", map[string]any{})
	rid := res["id"].(string)
	done := e.waitStatus(rid, "COMPLETED", time.Minute)
	require.Equal(t, "Done.", done["summary"])
	rmsgs := items(t, e.ok(e.keyA, http.MethodGet, base+"/"+rid+"/messages?pageSize=500", nil), "messages")
	require.Equal(t, msgs, rmsgs[:len(msgs)], "the resume continues the paused conversation")
	last := string(srv.Last().Body)
	require.Contains(t, last, "toolu_1", "the model saw the call made before the pause")
	require.Contains(t, last, "Find the notes on history.")
}

// TestOrgQuotaRefusesCreatesPastMaxRunning: with maxRunning 2, executions
// that have not ended (here WAITING for input) hold their places: a third
// create answers 429 quota_exceeded naming the quota, however many arrive at
// once, and a create passes again once one ends — a refused one retried
// with its Idempotency-Key included.
func TestOrgQuotaRefusesCreatesPastMaxRunning(t *testing.T) {
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{stepper(0)}, tools: []*agentsdk.Tool{echoTool()}})
	org := "/api/orgs/" + e.orgA.Slug
	base := org + "/agent-executions"
	create := map[string]any{"kind": "react-agent", "userPrompt": "Hello.", "models": scriptedModel,
		"config": map[string]any{"mode": "multi-turn"}}

	e.fails(e.keyA, http.MethodPut, org+"/quota", map[string]any{"maxRunning": -1}, http.StatusBadRequest, "invalid_argument")
	e.fails(e.keyA, http.MethodPut, org+"/quota", map[string]any{"costPerDay": -0.5}, http.StatusBadRequest, "invalid_argument")
	q := e.ok(e.keyA, http.MethodGet, org+"/quota", nil)
	require.Equal(t, true, q["isDefault"], "no quota set: no limits")
	e.ok(e.keyA, http.MethodPut, org+"/quota", map[string]any{"maxRunning": 2})

	// Six creates at once: exactly two pass.
	var wg sync.WaitGroup
	statuses := make([]response, 6)
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = e.do(e.keyA, http.MethodPost, base, create)
		}()
	}
	wg.Wait()
	var ids []string
	for _, r := range statuses {
		switch r.Status {
		case http.StatusOK:
			ids = append(ids, r.Body["id"].(string))
		case http.StatusTooManyRequests:
			require.Equal(t, "quota_exceeded", r.Body["code"], "%s", r.Raw)
			require.True(t, strings.Contains(r.Body["message"].(string), "maxRunning"), "%s", r.Raw)
		default:
			require.Failf(t, "unexpected answer", "%d %s", r.Status, r.Raw)
		}
	}
	require.Len(t, ids, 2, "exactly maxRunning creates pass")
	for _, id := range ids {
		e.waitStatus(id, "WAITING", time.Minute)
	}
	r := e.fails(e.keyA, http.MethodPost, base, create, http.StatusTooManyRequests, "quota_exceeded")
	require.Contains(t, r.Body["message"], "2 executions have not ended, of 2 allowed")
	require.EqualValues(t, 2, e.ok(e.keyA, http.MethodGet, org+"/quota", nil)["running"])
	// The other organization has no quota.
	e.ok(e.keyB, http.MethodPost, "/api/orgs/"+e.orgB.Slug+"/agent-executions", create)

	// A refused create with an Idempotency-Key is not its key's answer: the
	// same request passes once there is room.
	body, err := json.Marshal(create)
	require.NoError(t, err)
	kr := e.keyed(e.keyA, http.MethodPost, base, "quota-retry", string(body))
	require.Equal(t, http.StatusTooManyRequests, kr.status, kr.raw)

	e.ok(e.keyA, http.MethodDelete, base+"/"+ids[0], nil)
	e.waitStatus(ids[0], "CANCELLED", time.Minute)
	kr = e.keyed(e.keyA, http.MethodPost, base, "quota-retry", string(body))
	require.Equal(t, http.StatusOK, kr.status, kr.raw)
	require.False(t, kr.replayed)
	e.waitStatus(kr.body["id"].(string), "WAITING", time.Minute)
	e.fails(e.keyA, http.MethodPost, base, create, http.StatusTooManyRequests, "quota_exceeded")
}
