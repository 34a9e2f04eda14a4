package anthropic_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/anthropic"
	"github.com/agentree/agentree/agentsdk/providertest"
)

func okReply() providertest.Reply {
	return providertest.Reply{Body: providertest.NewAnthropicStream(model, providertest.AnthropicUsage{}).Text("ok").End("end_turn", 1)}
}

func toolCall(id, name, args string) agentsdk.Block {
	return agentsdk.Block{Type: agentsdk.BlockToolCall, ToolCall: &agentsdk.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}}
}

func TestAnthropicConvertsConversationToWireFormat(t *testing.T) {
	srv := providertest.NewServer(t, okReply())
	p := newProvider(t, srv)
	temp := 0.2
	req := agentsdk.ModelRequest{
		Model:       agentsdk.ModelRef{Provider: "anthropic", ModelID: model},
		System:      "You are terse.",
		MaxTokens:   1000,
		Temperature: &temp,
		Tools: []agentsdk.ToolSpec{{
			Name: "read", Description: "Read a file.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`),
		}},
		Messages: []agentsdk.Message{
			{Role: agentsdk.RoleUser, Content: []agentsdk.Block{
				{Type: agentsdk.BlockText, Text: "What is in these?"},
				{Type: agentsdk.BlockImage, Image: &agentsdk.Image{MediaType: "image/png", Data: []byte("png!")}},
				{Type: agentsdk.BlockImage, Image: &agentsdk.Image{URL: "https://example.com/cat.jpg"}},
			}},
			{Role: agentsdk.RoleAssistant, Provider: "openai", Model: "gpt-5", Content: []agentsdk.Block{
				{Type: agentsdk.BlockThinking, Thinking: "openai reasoning"},
				{Type: agentsdk.BlockText, Text: "Reading both."},
				toolCall("call.a:1", "read", `{"path":"a"}`),
				toolCall("call_b", "read", `{"path":"b"}`),
			}},
			agentsdk.ToolResultMessage(agentsdk.ToolCall{ID: "call.a:1", Name: "read"}, "A", false),
			agentsdk.ToolResultMessage(agentsdk.ToolCall{ID: "call_b", Name: "read"}, "no such file", true),
			agentsdk.TextMessage(agentsdk.RoleUser, "Also, be brief."),
		},
	}

	stream(t, p, req)

	got := srv.Last()
	require.Equal(t, `"`+model+`"`, got.Field(t, "model"))
	require.Equal(t, "1000", got.Field(t, "max_tokens"))
	require.Equal(t, "0.2", got.Field(t, "temperature"))
	require.Empty(t, got.Field(t, "thinking"))
	require.JSONEq(t, `[{"type":"text","text":"You are terse."}]`, got.Field(t, "system"))
	require.JSONEq(t, `[{"name":"read","description":"Read a file.","input_schema":{
		"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}}]`,
		got.Field(t, "tools"))
	// "call.a:1" has characters the API refuses: cleaned, plus a hash of
	// the original so that distinct IDs stay distinct.
	sum := sha256.Sum256([]byte("call.a:1"))
	aID := "call_a_1_" + hex.EncodeToString(sum[:])[:12]
	require.JSONEq(t, `[
		{"role":"user","content":[
			{"type":"text","text":"What is in these?"},
			{"type":"image","source":{"type":"base64","media_type":"image/png","data":"cG5nIQ=="}},
			{"type":"image","source":{"type":"url","url":"https://example.com/cat.jpg"}}]},
		{"role":"assistant","content":[
			{"type":"text","text":"Reading both."},
			{"type":"tool_use","id":"`+aID+`","name":"read","input":{"path":"a"}},
			{"type":"tool_use","id":"call_b","name":"read","input":{"path":"b"}}]},
		{"role":"user","content":[
			{"type":"tool_result","tool_use_id":"`+aID+`","content":[{"type":"text","text":"A"}]},
			{"type":"tool_result","tool_use_id":"call_b","is_error":true,"content":[{"type":"text","text":"no such file"}]},
			{"type":"text","text":"Also, be brief."}]}
	]`, got.Field(t, "messages"))
}

func TestAnthropicThinkingIsOffWhenLastToolTurnHasNoThinking(t *testing.T) {
	srv := providertest.NewServer(t, okReply())
	temp := 0.5
	req := request(
		agentsdk.TextMessage(agentsdk.RoleUser, "go"),
		agentsdk.Message{Role: agentsdk.RoleAssistant, Provider: "openai", Content: []agentsdk.Block{toolCall("call_1", "ls", `{}`)}},
		agentsdk.ToolResultMessage(agentsdk.ToolCall{ID: "call_1"}, "x", false),
	)
	req.ThinkingBudget = 8000
	req.Temperature = &temp

	stream(t, newProvider(t, srv), req)

	require.Empty(t, srv.Last().Field(t, "thinking"))
	require.Equal(t, "0.5", srv.Last().Field(t, "temperature"))
}

func TestAnthropicThinkingRaisesMaxTokensAboveBudget(t *testing.T) {
	srv := providertest.NewServer(t, okReply())
	temp := 0.5
	req := request(agentsdk.TextMessage(agentsdk.RoleUser, "go"))
	req.ThinkingBudget, req.MaxTokens, req.Temperature = 8000, 1000, &temp

	stream(t, newProvider(t, srv), req)

	require.JSONEq(t, `{"type":"enabled","budget_tokens":8000}`, srv.Last().Field(t, "thinking"))
	require.Equal(t, "12096", srv.Last().Field(t, "max_tokens"))
	require.Empty(t, srv.Last().Field(t, "temperature"))
}

func TestAnthropicSystemMessagesJoinSystemPrompt(t *testing.T) {
	srv := providertest.NewServer(t, okReply())
	req := request(agentsdk.TextMessage(agentsdk.RoleSystem, "Be kind."), agentsdk.TextMessage(agentsdk.RoleUser, "hi"))
	req.System = "Be brief."
	stream(t, newProvider(t, srv), req)
	require.JSONEq(t, `[{"type":"text","text":"Be brief."},{"type":"text","text":"Be kind."}]`, srv.Last().Field(t, "system"))
	require.JSONEq(t, `[{"role":"user","content":[{"type":"text","text":"hi"}]}]`, srv.Last().Field(t, "messages"))
}

// The endpoint's key is read once, when the provider is made, from the
// variable its options name, and sent only to its own base URL.
func TestAnthropicKeyIsReadOnceFromTheEndpointsVariable(t *testing.T) {
	srv := providertest.NewServer(t, okReply(), okReply())
	t.Setenv("ENDPOINT_ANTHROPIC_KEY", "sk-first")
	p, err := anthropic.New(anthropic.Options{BaseURL: srv.URL, APIKeyEnv: "ENDPOINT_ANTHROPIC_KEY"})
	require.NoError(t, err)
	t.Setenv("ENDPOINT_ANTHROPIC_KEY", "sk-second")

	stream(t, p, request(agentsdk.TextMessage(agentsdk.RoleUser, "hi")))
	stream(t, p, request(agentsdk.TextMessage(agentsdk.RoleUser, "hi")))

	require.Len(t, srv.Requests(), 2)
	require.Equal(t, "sk-first", srv.Last().Header.Get("X-Api-Key"))
}

// An endpoint with its own base URL never receives $ANTHROPIC_API_KEY
// unless its options name the variable: the rule openai's endpoints follow.
func TestAnthropicWithBaseURLSendsOnlyItsConfiguredKey(t *testing.T) {
	srv := providertest.NewServer(t, okReply(), okReply())
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-real")
	p, err := anthropic.New(anthropic.Options{BaseURL: srv.URL})
	require.NoError(t, err)
	stream(t, p, request(agentsdk.TextMessage(agentsdk.RoleUser, "hi")))
	require.Empty(t, srv.Last().Header.Get("X-Api-Key"), "the operator's Anthropic key stays with Anthropic")

	t.Setenv("TEAM_PROXY_KEY", "sk-proxy")
	p, err = anthropic.New(anthropic.Options{BaseURL: srv.URL, APIKeyEnv: "TEAM_PROXY_KEY"})
	require.NoError(t, err)
	stream(t, p, request(agentsdk.TextMessage(agentsdk.RoleUser, "hi")))
	require.Equal(t, "sk-proxy", srv.Last().Header.Get("X-Api-Key"))
}

func TestAnthropicDescribesItsEndpoint(t *testing.T) {
	p, err := anthropic.New(anthropic.Options{Endpoint: "team-a", Models: []string{"m1", "m2"}})
	require.NoError(t, err)
	require.Equal(t, agentsdk.EndpointInfo{Name: "team-a", Provider: "anthropic", Models: []string{"m1", "m2"}}, p.Endpoint())
	p, err = anthropic.New(anthropic.Options{})
	require.NoError(t, err)
	require.Equal(t, agentsdk.EndpointInfo{Name: "anthropic", Provider: "anthropic", Models: []string{"*"}}, p.Endpoint())
}

func TestAnthropicNewValidatesOptions(t *testing.T) {
	for name, opts := range map[string]anthropic.Options{
		"base URL":       {BaseURL: "localhost:8080"},
		"negative price": {Prices: map[string]agentsdk.Price{"m": {Input: -1}}},
		"name":           {Name: "my/provider"},
	} {
		_, err := anthropic.New(opts)
		require.ErrorIs(t, err, agentsdk.ErrInvalidInput, name)
	}
	p, err := anthropic.New(anthropic.Options{})
	require.NoError(t, err)
	require.Equal(t, "anthropic", p.Name())
}

// A default thinking budget (no thinkingBudget configured) reaches only
// the models that think: a model without thinking would refuse it.
func TestAnthropicDefaultThinkingOnlyForThinkingModels(t *testing.T) {
	for id, thinks := range map[string]bool{
		"claude-sonnet-4-5": true, "claude-opus-4-1-20250805": true, "claude-haiku-4-5": true,
		"claude-3-7-sonnet-20250219": true, "us.anthropic.claude-sonnet-4-20250514-v1:0": true,
		"claude-3-5-haiku-20241022": false, "claude-3-opus-20240229": false, "claude-sonnet-x": false, "gpt-5": false,
	} {
		require.Equal(t, thinks, anthropic.ThinkingModel(id), id)
	}
	srv := providertest.NewServer(t, okReply(), okReply())
	p := newProvider(t, srv)
	req := request(agentsdk.TextMessage(agentsdk.RoleUser, "go"))
	req.ThinkingBudget, req.ThinkingByDefault = agentsdk.DefaultThinkingBudget, true

	req.Model.ModelID = "claude-sonnet-4-5"
	stream(t, p, req)
	require.JSONEq(t, `{"type":"enabled","budget_tokens":4096}`, srv.Last().Field(t, "thinking"))

	req.Model.ModelID = "claude-3-5-haiku-20241022"
	stream(t, p, req)
	require.Empty(t, srv.Last().Field(t, "thinking"))
}
