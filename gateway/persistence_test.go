package gateway_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
)

// TestTopLevelPersistenceModeIsAccepted: seed 000's create body puts
// persistenceMode at the top; it means what config.persistenceMode means
// (both, different: a 400), is kept on the execution, shown on GET and in
// the config, filters the list, and works on definitions too.
func TestTopLevelPersistenceModeIsAccepted(t *testing.T) {
	model := scripted.New(func(int, agentsdk.ModelRequest) scripted.Turn { return scripted.Turn{Text: "Done."} })
	e := newEnv(t, envOptions{noWorker: true})
	e.startHoldingWorker("wp", t.TempDir(), time.Minute, []agentsdk.Provider{model}, nil)
	base := "/api/orgs/" + e.orgA.Slug + "/agent-executions"
	body := func(extra map[string]any) map[string]any {
		b := map[string]any{"kind": "react-agent", "userPrompt": "hello", "models": scriptedModel}
		for k, v := range extra {
			b[k] = v
		}
		return b
	}

	local := e.ok(e.keyA, http.MethodPost, base, body(map[string]any{"persistenceMode": "local"}))
	require.Equal(t, "local", local["persistenceMode"])
	require.Equal(t, "local", local["config"].(map[string]any)["persistenceMode"], "the top-level field and the config's are one setting")
	same := e.ok(e.keyA, http.MethodPost, base, body(map[string]any{"persistenceMode": "local", "config": map[string]any{"persistenceMode": "local"}}))
	require.Equal(t, "local", same["persistenceMode"])
	inConfig := e.ok(e.keyA, http.MethodPost, base, body(map[string]any{"config": map[string]any{"persistenceMode": "local"}}))
	require.Equal(t, "local", inConfig["persistenceMode"])
	remote := e.ok(e.keyA, http.MethodPost, base, body(nil))
	require.Equal(t, "remote", remote["persistenceMode"], "remote is the default, and said")

	r := e.fails(e.keyA, http.MethodPost, base, body(map[string]any{"persistenceMode": "remote", "config": map[string]any{"persistenceMode": "local"}}),
		http.StatusBadRequest, "invalid_argument")
	require.Contains(t, r.Body["message"], `persistenceMode "remote" and config.persistenceMode "local" differ`)
	r = e.fails(e.keyA, http.MethodPost, base, body(map[string]any{"persistenceMode": "disk"}), http.StatusBadRequest, "invalid_argument")
	require.Contains(t, r.Body["message"], `persistenceMode "disk" is not remote or local`)

	got := e.ok(e.keyA, http.MethodGet, base+"/"+local["id"].(string), nil)
	require.Equal(t, "local", got["persistenceMode"])
	require.Equal(t, "wp", e.waitStatus(local["id"].(string), "COMPLETED", time.Minute)["localWorker"])

	ids := func(q string) []string {
		var out []string
		for _, x := range e.ok(e.keyA, http.MethodGet, base+q, nil)["agentExecutions"].([]any) {
			out = append(out, x.(map[string]any)["id"].(string))
		}
		return out
	}
	require.ElementsMatch(t, []string{local["id"].(string), same["id"].(string), inConfig["id"].(string)}, ids("?persistenceMode=local"))
	require.Equal(t, []string{remote["id"].(string)}, ids("?persistenceMode=remote"))
	require.Len(t, ids(""), 4)
	r = e.fails(e.keyA, http.MethodGet, base+"?persistenceMode=disk", nil, http.StatusBadRequest, "invalid_argument")
	require.Contains(t, r.Body["message"], `persistenceMode "disk" is not remote or local`)

	// A definition takes it at the top too, and its executions are local.
	defs := "/api/orgs/" + e.orgA.Slug + "/agent-definitions"
	def := e.ok(e.keyA, http.MethodPost, defs, map[string]any{"name": "Local", "slug": "local-bot", "models": scriptedModel, "persistenceMode": "local"})
	require.Equal(t, "local", def["persistenceMode"])
	require.Equal(t, "local", e.ok(e.keyA, http.MethodGet, defs+"/"+def["id"].(string), nil)["persistenceMode"])
	fromDef := e.ok(e.keyA, http.MethodPost, base, map[string]any{"agentDefinitionId": def["id"], "userPrompt": "hello"})
	require.Equal(t, "local", fromDef["persistenceMode"])
	e.fails(e.keyA, http.MethodPost, defs, map[string]any{"name": "Both", "slug": "both-bot", "models": scriptedModel,
		"persistenceMode": "local", "config": map[string]any{"persistenceMode": "remote"}}, http.StatusBadRequest, "invalid_argument")
	plain := e.ok(e.keyA, http.MethodPost, defs, map[string]any{"name": "Plain", "slug": "plain-bot", "models": scriptedModel})
	require.Equal(t, "remote", plain["persistenceMode"])
}
