package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
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
	keyVar := "MONEY_TEST_KEY_" + strings.ToUpper(uuid.NewString()[:8])
	t.Setenv(keyVar, "sk-ant-money")
	d := startConfiguredDev(t, fmt.Sprintf(`
endpoints:
  - name: team
    provider: anthropic
    baseUrl: %s
    apiKeyEnv: %s
    models: ["*"]
    prices:
      claude-lab-1: unpriced
toolSets: []
`, fake.URL, keyVar))
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

	for _, model := range []string{"claude-sonnet-4-5", "claude-lab-1"} {
		status, ex := create(model)
		require.Equal(t, http.StatusOK, status, ex)
		ex = d.ended(ex["id"].(string))
		require.Equal(t, "COMPLETED", ex["status"], ex)
	}
	require.Len(t, fake.Requests(), 2)
}
