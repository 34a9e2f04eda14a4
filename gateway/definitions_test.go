package gateway_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
)

// TestDefinitions: definitions CRUD, and an execution started from one
// with overrides, its configuration frozen from both.
func TestDefinitions(t *testing.T) {
	model := scripted.New(scripted.Turns(scripted.Turn{Text: "from a definition"}))
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{model}, tools: []*agentsdk.Tool{echoTool()}})
	defs := "/api/orgs/" + e.orgA.Slug + "/agent-definitions"
	created := e.ok(e.keyA, http.MethodPost, defs, map[string]any{
		"name": "Researcher", "slug": "researcher", "systemPrompt": "Be thorough.",
		"models": scriptedModel, "tools": []string{"echo"}, "config": map[string]any{"maxTurns": 7},
		"metadata": map[string]any{"team": "blue"},
	})
	id := created["id"].(string)
	require.Equal(t, "react-agent", created["kind"])
	e.fails(e.keyA, http.MethodPost, defs, map[string]any{"name": "Again", "slug": "researcher"}, http.StatusConflict, "conflict")

	got := e.ok(e.keyA, http.MethodGet, defs+"/"+id, nil)
	require.Equal(t, "Be thorough.", got["systemPrompt"])
	require.Equal(t, float64(7), got["config"].(map[string]any)["maxTurns"], "the config is typed: unset optional fields are left out")
	require.NotContains(t, got["config"], "maxTokens")
	e.ok(e.keyA, http.MethodPost, defs, map[string]any{"name": "Second", "slug": "second", "models": scriptedModel})
	page := e.ok(e.keyA, http.MethodGet, defs+"?pageSize=1", nil)
	require.Len(t, items(t, page, "agentDefinitions"), 1)
	next := e.ok(e.keyA, http.MethodGet, defs+"?pageSize=1&cursor="+page["nextCursor"].(string), nil)
	require.Equal(t, "second", items(t, next, "agentDefinitions")[0]["slug"])

	updated := e.ok(e.keyA, http.MethodPut, defs+"/"+id, map[string]any{
		"name": "Researcher", "slug": "researcher", "systemPrompt": "Be brief.",
		"models": scriptedModel, "tools": []string{"echo"}, "config": map[string]any{"maxTurns": 5},
	})
	require.Equal(t, "Be brief.", updated["systemPrompt"])

	ex := e.ok(e.keyA, http.MethodPost, "/api/orgs/"+e.orgA.Slug+"/agent-executions", map[string]any{
		"agentDefinitionId": id, "userPrompt": "go", "config": map[string]any{"maxTokens": 100},
	})
	cfg := ex["config"].(map[string]any)
	require.Equal(t, "Be brief.", cfg["systemPrompt"])
	require.Equal(t, float64(5), cfg["maxTurns"], "from the definition")
	require.Equal(t, float64(100), cfg["maxTokens"], "from the request")
	require.Equal(t, []any{"echo"}, cfg["tools"])
	require.Equal(t, id, ex["agentDefinitionId"])
	e.waitStatus(ex["id"].(string), "COMPLETED", time.Minute)
	byDef := e.ok(e.keyA, http.MethodGet, "/api/orgs/"+e.orgA.Slug+"/agent-executions?agentDefinitionId="+id, nil)
	require.Len(t, items(t, byDef, "agentExecutions"), 1)

	e.ok(e.keyA, http.MethodDelete, defs+"/"+id, nil)
	e.fails(e.keyA, http.MethodGet, defs+"/"+id, nil, http.StatusNotFound, "not_found")
	e.fails(e.keyA, http.MethodDelete, defs+"/"+id, nil, http.StatusNotFound, "not_found")
}
