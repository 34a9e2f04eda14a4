package gateway_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
)

// TestOrgIsolation: another organization's key sees nothing of org A's (a
// 404, as for something missing); no key or a wrong one is a 401.
func TestOrgIsolation(t *testing.T) {
	model := scripted.New(scripted.Turns(scripted.Turn{Text: "done"}))
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{model}})
	id := e.startOneShot()
	def := e.ok(e.keyA, http.MethodPost, "/api/orgs/"+e.orgA.Slug+"/agent-definitions", map[string]any{
		"name": "Helper", "slug": "helper", "models": scriptedModel,
	})
	defID := def["id"].(string)

	underA := e.execPath(e.orgA, id)
	underB := e.execPath(e.orgB, id)
	for _, p := range []string{"", "/entries", "/messages", "/tool-calls", "/tasks", "/checkpoints", "/checkpoints/1"} {
		e.fails(e.keyB, http.MethodGet, underA+p, nil, http.StatusNotFound, "not_found")
		e.fails(e.keyB, http.MethodGet, underB+p, nil, http.StatusNotFound, "not_found")
	}
	e.fails(e.keyB, http.MethodGet, underA+"/stream", nil, http.StatusNotFound, "not_found")
	e.fails(e.keyB, http.MethodGet, underB+"/stream/consolidated", nil, http.StatusNotFound, "not_found")
	e.fails(e.keyB, http.MethodDelete, underB, nil, http.StatusNotFound, "not_found")
	e.fails(e.keyB, http.MethodPost, underB+"/signal", map[string]any{
		"signalName": "userMessage", "signalValue": map[string]any{"text": "hi"},
	}, http.StatusNotFound, "not_found")
	e.fails(e.keyB, http.MethodGet, "/api/orgs/"+e.orgB.Slug+"/agent-definitions/"+defID, nil, http.StatusNotFound, "not_found")
	e.fails(e.keyB, http.MethodPost, "/api/orgs/"+e.orgB.Slug+"/agent-executions", map[string]any{
		"agentDefinitionId": defID, "userPrompt": "borrow A's definition",
	}, http.StatusBadRequest, "invalid_argument")
	require.Empty(t, items(t, e.ok(e.keyB, http.MethodGet, "/api/orgs/"+e.orgB.Slug+"/agent-executions", nil), "agentExecutions"))
	require.Empty(t, items(t, e.ok(e.keyB, http.MethodGet, "/api/orgs/"+e.orgB.Slug+"/agent-definitions", nil), "agentDefinitions"))

	// No key, a wrong key, another scheme: 401 before anything is looked up.
	for _, key := range []string{"", "agt_00000000_" + "00", e.keyA + "x"} {
		e.fails(key, http.MethodGet, underA, nil, http.StatusUnauthorized, "unauthenticated")
		e.fails(key, http.MethodGet, underA+"/stream", nil, http.StatusUnauthorized, "unauthenticated")
		e.fails(key, http.MethodPost, "/api/orgs/"+e.orgA.Slug+"/agent-executions", `{"bogus":`, http.StatusUnauthorized, "unauthenticated")
	}
	req, err := http.NewRequest(http.MethodGet, e.base+underA, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Basic "+e.keyA)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)

	// The organization's ID names it as well as its slug.
	got := e.ok(e.keyA, http.MethodGet, "/api/orgs/"+e.orgA.ID+"/agent-executions/"+id, nil)
	require.Equal(t, "COMPLETED", got["status"])
}
