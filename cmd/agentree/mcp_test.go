package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk/providertest"
	"github.com/agentree/agentree/internal/mcptest"
)

// TestMCPToolsInTheWorker: `agentree dev` from a configuration with an
// MCP server (a real process, built from internal/mcptest) lists the
// server's tools with their schemas in its capabilities, sends them to the
// model through the official Anthropic SDK, and runs the model's call:
// the answer is a tool_result entry. Real Postgres and Temporal.
func TestMCPToolsInTheWorker(t *testing.T) {
	const model = "claude-sonnet-4-5"
	usage := providertest.AnthropicUsage{Input: 5}
	fake := providertest.NewServer(t,
		providertest.Reply{Body: providertest.NewAnthropicStream(model, usage).ToolUse("toolu_1", "calc__add", `{"a":2,`, `"b":40}`).End("tool_use", 3)},
		providertest.Reply{Body: providertest.NewAnthropicStream(model, usage).Text("It is ", "42.").End("end_turn", 3)},
	)
	suffix := strings.ToUpper(uuid.NewString()[:8])
	keyVar := "MCP_TEST_KEY_" + suffix
	t.Setenv(keyVar, "sk-ant-mcp")
	d := startConfiguredDev(t, fmt.Sprintf(`
endpoints:
  - name: team
    provider: anthropic
    baseUrl: %s
    apiKeyEnv: %s
toolSets: []
mcp:
  - name: calc
    command: %s
`, fake.URL, keyVar, mcptest.Build(t)))

	status, caps := d.do(http.MethodGet, "/capabilities", "")
	require.Equal(t, http.StatusOK, status, caps)
	var add map[string]any
	for _, tool := range caps["tools"].([]any) {
		if tool := tool.(map[string]any); tool["name"] == "calc__add" {
			add = tool
		}
	}
	require.NotNil(t, add, "capabilities list the MCP tools: %v", caps["tools"])
	require.Equal(t, "Adds two integers.", add["description"])
	params, _ := json.Marshal(add["parameters"])
	require.Contains(t, string(params), `"a":{"description":"the first addend","type":"integer"}`)

	status, ex := d.do(http.MethodPost, "/agent-executions",
		fmt.Sprintf(`{"userPrompt":"add 2 and 40","models":[{"provider":"anthropic","modelId":%q}],"tools":["calc__add"]}`, model))
	require.Equal(t, http.StatusOK, status, ex)
	id := ex["id"].(string)
	ex = d.ended(id)
	require.Equal(t, "COMPLETED", ex["status"], ex)

	var sent struct {
		Tools []struct {
			Name        string
			InputSchema map[string]any `json:"input_schema"`
		}
	}
	require.NoError(t, json.Unmarshal(fake.Requests()[0].Body, &sent))
	require.Len(t, sent.Tools, 1)
	require.Equal(t, "calc__add", sent.Tools[0].Name)
	require.Contains(t, sent.Tools[0].InputSchema["properties"], "b")

	_, msgs := d.do(http.MethodGet, "/agent-executions/"+id+"/messages", "")
	b, _ := json.Marshal(msgs)
	var got struct {
		Messages []struct {
			Role, ToolCallID, ToolName string
			IsError                    bool
			Content                    []struct{ Text string }
		}
	}
	require.NoError(t, json.Unmarshal(b, &got))
	require.Len(t, got.Messages, 4, "%s", b)
	result := got.Messages[2]
	require.Equal(t, "tool_result", result.Role)
	require.Equal(t, "toolu_1", result.ToolCallID)
	require.Equal(t, "calc__add", result.ToolName)
	require.False(t, result.IsError)
	require.Len(t, result.Content, 1)
	require.Equal(t, "42", result.Content[0].Text)
	require.Equal(t, "It is 42.", got.Messages[3].Content[0].Text)
}
