package gateway_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
)

// TestUsageEqualsTheLLMCalls: an execution's usage is the sum of its
// llm_call entries, and the organization's groups the same calls by model,
// kind and definition over a time range; bad parameters are 400s.
func TestUsageEqualsTheLLMCalls(t *testing.T) {
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{stepper(2)}, tools: []*agentsdk.Tool{echoTool()}})
	org := "/api/orgs/" + e.orgA.Slug
	def := e.ok(e.keyA, http.MethodPost, org+"/agent-definitions", map[string]any{
		"name": "Stepper", "slug": "stepper", "models": scriptedModel, "tools": []string{"echo"},
	})
	inline := e.ok(e.keyA, http.MethodPost, org+"/agent-executions", map[string]any{
		"kind": "react-agent", "userPrompt": "Step.", "models": scriptedModel, "tools": []string{"echo"},
	})
	fromDef := e.ok(e.keyA, http.MethodPost, org+"/agent-executions", map[string]any{
		"agentDefinitionId": def["id"], "userPrompt": "Step too.",
	})
	var calls, input, output float64
	for _, ex := range []map[string]any{inline, fromDef} {
		id := ex["id"].(string)
		path := org + "/agent-executions/" + id
		e.waitStatus(id, "COMPLETED", time.Minute)
		var n, in, out float64
		for _, en := range e.all(path+"/entries?pageSize=500", "entries") {
			// Each answer a model call wrote holds the call's record; its
			// usage is the message's.
			meta, _ := en["metadata"].(map[string]any)
			if en["type"] != string(agentsdk.EntryMessage) || meta["llmCall"] == nil {
				continue
			}
			u := en["content"].(map[string]any)["usage"].(map[string]any)
			n, in, out = n+1, in+u["input"].(float64), out+u["output"].(float64)
		}
		require.Positive(t, n)
		got := e.ok(e.keyA, http.MethodGet, path+"/usage", nil)
		lines := items(t, got, "lines")
		require.Len(t, lines, 1)
		require.Equal(t, "scripted/scripted-1", lines[0]["key"])
		total := got["total"].(map[string]any)
		require.EqualValues(t, n, mustNumber(t, total["calls"]))
		require.EqualValues(t, in, mustNumber(t, total["inputTokens"]))
		require.EqualValues(t, out, mustNumber(t, total["outputTokens"]))
		calls, input, output = calls+n, input+in, output+out
	}

	byModel := e.ok(e.keyA, http.MethodGet, org+"/usage", nil)
	require.EqualValues(t, calls, mustNumber(t, byModel["total"].(map[string]any)["calls"]))
	require.EqualValues(t, input, mustNumber(t, byModel["total"].(map[string]any)["inputTokens"]))
	byKind := items(t, e.ok(e.keyA, http.MethodGet, org+"/usage?groupBy=kind", nil), "lines")
	require.Len(t, byKind, 1)
	require.Equal(t, "react-agent", byKind[0]["key"])
	byDef := items(t, e.ok(e.keyA, http.MethodGet, org+"/usage?groupBy=definition", nil), "lines")
	require.Len(t, byDef, 2)
	keys := []any{byDef[0]["key"], byDef[1]["key"]}
	require.Contains(t, keys, def["id"])
	require.Equal(t, 0.0, func() float64 {
		r := e.ok(e.keyB, http.MethodGet, "/api/orgs/"+e.orgB.Slug+"/usage", nil)
		c, _ := r["total"].(map[string]any)["calls"]
		if c == nil {
			return 0
		}
		return mustNumber(t, c)
	}(), "another organization's usage is its own")
	long := e.ok(e.keyA, http.MethodGet, org+"/usage?from=2000-01-01T00:00:00Z&to=2000-02-01T00:00:00Z", nil)
	require.Empty(t, long["lines"], "nothing in that range")
	require.Zero(t, mustNumber(t, long["total"].(map[string]any)["calls"]), "a total of none")

	e.fails(e.keyA, http.MethodGet, org+"/usage?groupBy=day", nil, http.StatusBadRequest, "invalid_argument")
	e.fails(e.keyA, http.MethodGet, org+"/usage?from=2030-01-01T00:00:00Z&to=2020-01-01T00:00:00Z", nil, http.StatusBadRequest, "invalid_argument")
	e.fails(e.keyA, http.MethodGet, org+"/usage?from=yesterday", nil, http.StatusBadRequest, "invalid_argument")
	e.fails(e.keyB, http.MethodGet, org+"/agent-executions/"+inline["id"].(string)+"/usage", nil, http.StatusNotFound, "not_found")
	e.fails(e.keyA, http.MethodGet, org+"/agent-executions/00000000-0000-0000-0000-000000000000/usage", nil, http.StatusNotFound, "not_found")
}

// mustNumber reads a JSON number that protojson may write as a string
// (64-bit integers).
func mustNumber(t testing.TB, v any) float64 {
	t.Helper()
	switch n := v.(type) {
	case float64:
		return n
	case string:
		var f float64
		_, err := fmt.Sscan(n, &f)
		require.NoError(t, err)
		return f
	}
	require.Failf(t, "not a number", "%v", v)
	return 0
}
