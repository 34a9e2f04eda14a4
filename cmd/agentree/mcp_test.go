package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	d := startConfiguredDev(t, anthropicEndpoint(t, fake.URL, "["+model+"]")+fmt.Sprintf(`toolSets: []
mcp:
  - name: calc
    command: %s
    orgs: ["*"]
`, mcptest.Build(t)))

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

// TestMCPServersArePerOrg: an MCP server enabled for one organization,
// with that organization's own credential (a file reference), runs its
// calls with that credential and the organization in _meta; another
// organization neither sees its tools in capabilities, nor can name them
// at create, nor have them run when its model asks anyway. Real Postgres
// and Temporal, `agentree dev` with a real MCP server process and a fake
// Anthropic server playing the model.
func TestMCPServersArePerOrg(t *testing.T) {
	const model = "claude-sonnet-4-5"
	usage := providertest.AnthropicUsage{Input: 5}
	ask := func(id string) providertest.Reply {
		return providertest.Reply{Body: providertest.NewAnthropicStream(model, usage).ToolUse(id, "calc__whoami", `{}`).End("tool_use", 3)}
	}
	done := providertest.Reply{Body: providertest.NewAnthropicStream(model, usage).Text("done").End("end_turn", 1)}
	fake := providertest.NewServer(t, ask("toolu_a"), done, ask("toolu_b"), done)
	token := filepath.Join(t.TempDir(), "dev-token")
	require.NoError(t, os.WriteFile(token, []byte("dev-secret\n"), 0o600))
	d := startConfiguredDev(t, anthropicEndpoint(t, fake.URL, "["+model+"]")+fmt.Sprintf(`toolSets: []
mcp:
  - name: calc
    command: %s
    env: {MCPTEST_TOKEN: operator-secret}
    orgs:
      dev: {env: {MCPTEST_TOKEN: "${file:%s}"}}
`, mcptest.Build(t), token))
	otherKey, _, err := cli(context.Background(), "keys", "create", "--org", "globex")
	require.NoError(t, err)
	other := &devServer{t: t, base: strings.Replace(d.base, "/orgs/dev", "/orgs/globex", 1), key: strings.TrimSpace(otherKey)}

	toolNames := func(d *devServer) []string {
		status, caps := d.do(http.MethodGet, "/capabilities", "")
		require.Equal(t, http.StatusOK, status, caps)
		var names []string
		for _, tool := range caps["tools"].([]any) {
			names = append(names, tool.(map[string]any)["name"].(string))
		}
		return names
	}
	require.Contains(t, toolNames(d), "calc__whoami")
	require.Empty(t, toolNames(other), "another organization is not told of the server's tools")

	// The enabled organization's call runs with its credential and says
	// who calls.
	status, ex := d.do(http.MethodPost, "/agent-executions",
		fmt.Sprintf(`{"userPrompt":"who?","models":[{"provider":"anthropic","modelId":%q}],"tools":["calc__whoami"]}`, model))
	require.Equal(t, http.StatusOK, status, ex)
	ex = d.ended(ex["id"].(string))
	require.Equal(t, "COMPLETED", ex["status"], ex)
	result := oneResult(t, d, ex["id"].(string))
	require.False(t, result.IsError)
	require.Equal(t, fmt.Sprintf("token=dev-secret org=%s", ex["orgId"]), result.Text)

	// The other may not name the tool...
	status, body := other.do(http.MethodPost, "/agent-executions",
		fmt.Sprintf(`{"userPrompt":"who?","models":[{"provider":"anthropic","modelId":%q}],"tools":["calc__whoami"]}`, model))
	require.Equal(t, http.StatusBadRequest, status, body)
	require.Contains(t, body["message"], `unknown tool "calc__whoami"`)
	// ...and its model asking for it anyway gets a refusal, not a call.
	status, ex = other.do(http.MethodPost, "/agent-executions",
		fmt.Sprintf(`{"userPrompt":"who?","models":[{"provider":"anthropic","modelId":%q}]}`, model))
	require.Equal(t, http.StatusOK, status, ex)
	ex = other.ended(ex["id"].(string))
	require.Equal(t, "COMPLETED", ex["status"], ex)
	result = oneResult(t, other, ex["id"].(string))
	require.True(t, result.IsError)
	require.NotContains(t, result.Text, "secret")
	var sent struct{ Tools []struct{ Name string } }
	require.NoError(t, json.Unmarshal(fake.Requests()[2].Body, &sent))
	require.Empty(t, sent.Tools, "the other organization's model was offered no MCP tool")
}

// oneResult is an execution's one tool_result message.
func oneResult(t *testing.T, d *devServer, id string) toolResult {
	t.Helper()
	rs := results(t, d, id)
	require.Len(t, rs, 1, "one tool result")
	return rs[0]
}
