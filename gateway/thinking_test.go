package gateway_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/providertest"
)

// TestThinkingStoredByDefault: a definition that configures nothing about
// thinking, on a model that thinks, sends the default thinking budget in
// its request to the (fake) Anthropic API, and the thinking block the
// model streams is kept in the assistant entry; an explicit
// thinkingBudget 0 sends none.
func TestThinkingStoredByDefault(t *testing.T) {
	const model = "claude-sonnet-4-5"
	usage := providertest.AnthropicUsage{Input: 20}
	srv := providertest.NewServer(t,
		reply(providertest.NewAnthropicStream(model, usage).Thinking("sig-t", "Two and ", "two make four.").
			Text("Four.").End("end_turn", 9)),
		reply(providertest.NewAnthropicStream(model, usage).Text("Four.").End("end_turn", 3)),
	)
	e := newAnthropicEnv(t, srv)
	defs := "/api/orgs/" + e.orgA.Slug + "/agent-definitions"
	models := []any{map[string]any{"provider": "anthropic", "modelId": model}}
	def := e.ok(e.keyA, http.MethodPost, defs, map[string]any{"name": "Thinker", "slug": "thinker", "models": models})
	base := "/api/orgs/" + e.orgA.Slug + "/agent-executions"
	ex := e.ok(e.keyA, http.MethodPost, base, map[string]any{"agentDefinitionId": def["id"], "userPrompt": "Two plus two?"})
	id := ex["id"].(string)
	e.waitStatus(id, "COMPLETED", time.Minute)

	require.Len(t, srv.Requests(), 1)
	require.JSONEq(t, `{"type":"enabled","budget_tokens":4096}`, srv.Requests()[0].Field(t, "thinking"),
		"a zero-config definition thinks by default")
	var thinking []agentsdk.Block
	for _, en := range e.all(base+"/"+id+"/entries?pageSize=500", "entries") {
		if en["role"] != string(agentsdk.RoleAssistant) {
			continue
		}
		b, err := json.Marshal(en["content"])
		require.NoError(t, err)
		var msg agentsdk.Message
		require.NoError(t, json.Unmarshal(b, &msg), "content %s", b)
		for _, bl := range msg.Content {
			if bl.Type == agentsdk.BlockThinking {
				thinking = append(thinking, bl)
			}
		}
	}
	require.Len(t, thinking, 1, "the thinking block is stored in the assistant entry")
	require.Equal(t, "Two and two make four.", thinking[0].Thinking)

	off := e.ok(e.keyA, http.MethodPost, base, map[string]any{"agentDefinitionId": def["id"], "userPrompt": "Again?",
		"config": map[string]any{"thinkingBudget": 0}})
	e.waitStatus(off["id"].(string), "COMPLETED", time.Minute)
	require.Len(t, srv.Requests(), 2)
	require.Empty(t, srv.Last().Field(t, "thinking"), "an explicit 0 is off")
}
