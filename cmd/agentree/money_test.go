package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk/providertest"
)

// TestUnpricedModelIsRefused: an endpoint that serves any model ("*",
// written out) serves only those it has a price for or that its operator
// marked unpriced. A model with neither is a 400 at create that says so,
// and reaches no server; a priced one and a marked one run. Real Postgres
// and Temporal, `agentree dev` with a fake Anthropic server.
func TestUnpricedModelIsRefused(t *testing.T) {
	usage := providertest.AnthropicUsage{Input: 1000}
	reply := func(model string) providertest.Reply {
		return providertest.Reply{Body: providertest.NewAnthropicStream(model, usage).Text("ok").End("end_turn", 1000)}
	}
	fake := providertest.NewServer(t, reply("claude-sonnet-4-5"), reply("claude-lab-1"))
	d := startConfiguredDev(t, anthropicEndpoint(t, fake.URL, `["*"]`)+`    prices:
      claude-lab-1: unpriced
toolSets: []
`)
	create := func(model string) (int, map[string]any) {
		return d.do(http.MethodPost, "/agent-executions",
			fmt.Sprintf(`{"userPrompt":"hi","models":[{"provider":"anthropic","modelId":%q}]}`, model))
	}

	status, body := create("claude-mystery-9")
	require.Equal(t, http.StatusBadRequest, status, body)
	require.Equal(t, "invalid_argument", strings.ToLower(fmt.Sprint(body["code"])), body)
	require.Contains(t, body["message"], `model "claude-mystery-9"`)
	require.Contains(t, body["message"], "has no price")
	require.Empty(t, fake.Requests(), "a refused model reaches no server")

	// A priced model's cost is a JSON number; an unpriced one's usage
	// says "unpriced" and has no cost, never $0.
	usageOf := func(model string) (call, total map[string]any) {
		status, ex := create(model)
		require.Equal(t, http.StatusOK, status, ex)
		id := ex["id"].(string)
		ex = d.ended(id)
		require.Equal(t, "COMPLETED", ex["status"], ex)
		_, msgs := d.do(http.MethodGet, "/agent-executions/"+id+"/messages", "")
		for _, m := range msgs["messages"].([]any) {
			if m := m.(map[string]any); m["role"] == "assistant" {
				call = m["usage"].(map[string]any)
			}
		}
		_, report := d.do(http.MethodGet, "/agent-executions/"+id+"/usage", "")
		return call, report["total"].(map[string]any)
	}
	call, total := usageOf("claude-sonnet-4-5")
	require.InDelta(t, 0.018, call["cost"], 1e-9, "1000 tokens in at $3/M, 1000 out at $15/M")
	require.Equal(t, false, call["unpriced"])
	require.InDelta(t, 0.018, total["cost"], 1e-9)
	require.Equal(t, false, total["unpriced"])

	call, total = usageOf("claude-lab-1")
	require.Equal(t, true, call["unpriced"], call)
	require.NotContains(t, call, "cost", "an unpriced call has no cost, not $0")
	require.Equal(t, true, total["unpriced"], total)
	require.Len(t, fake.Requests(), 2)
}
