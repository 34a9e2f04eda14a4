package openai_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/openai"
	"github.com/agentree/agentree/agentsdk/providertest"
)

func okReply() providertest.Reply {
	return providertest.Reply{Body: providertest.NewOpenAIStream(model).Text("ok").Finish("stop").Usage(1, 1, 0).Done()}
}

func toolCall(id, name, args string) agentsdk.Block {
	return agentsdk.Block{Type: agentsdk.BlockToolCall, ToolCall: &agentsdk.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}}
}

func TestOpenAIConvertsConversationToWireFormat(t *testing.T) {
	srv := providertest.NewServer(t, okReply())
	temp := 0.3
	longID := "toolu_01A09q90qw90lq917835lq9_with_a_very_long_tail_0123456789"
	req := agentsdk.ModelRequest{
		Model:       agentsdk.ModelRef{Provider: "openai", ModelID: model},
		System:      "You are terse.",
		Temperature: &temp,
		Tools: []agentsdk.ToolSpec{
			{Name: "read", Description: "Read a file.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
			{Name: "now"},
		},
		Messages: []agentsdk.Message{
			{Role: agentsdk.RoleUser, Content: []agentsdk.Block{
				{Type: agentsdk.BlockText, Text: "What is in these?"},
				{Type: agentsdk.BlockImage, Image: &agentsdk.Image{MediaType: "image/png", Data: []byte("png!")}},
				{Type: agentsdk.BlockImage, Image: &agentsdk.Image{URL: "https://example.com/cat.jpg"}},
			}},
			{Role: agentsdk.RoleAssistant, Provider: "anthropic", Content: []agentsdk.Block{
				{Type: agentsdk.BlockThinking, Thinking: "private", Signature: "sig"},
				{Type: agentsdk.BlockThinking, Redacted: "opaque"},
				{Type: agentsdk.BlockText, Text: "Reading both."},
				toolCall(longID, "read", `{"path":"a"}`),
				toolCall("toolu_02", "read", `{"path":"b"}`),
			}},
			agentsdk.ToolResultMessage(agentsdk.ToolCall{ID: longID, Name: "read"}, "A", false),
			agentsdk.ToolResultMessage(agentsdk.ToolCall{ID: "toolu_02", Name: "read"}, "no such file", true),
			agentsdk.TextMessage(agentsdk.RoleUser, "Also, be brief."),
		},
	}

	stream(t, newProvider(t, srv), req)

	got := srv.Last()
	require.Equal(t, `"`+model+`"`, got.Field(t, "model"))
	require.Equal(t, "0.3", got.Field(t, "temperature"))
	require.Empty(t, got.Field(t, "max_tokens"))
	require.Empty(t, got.Field(t, "reasoning_effort"))
	require.JSONEq(t, `[
		{"type":"function","function":{"name":"read","description":"Read a file.",
			"parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}},
		{"type":"function","function":{"name":"now","parameters":{"type":"object","properties":{}}}}
	]`, got.Field(t, "tools"))
	// The 61-character ID is cut to the API's 40, with a hash of the
	// original; the tool message carries the same ID.
	sum := sha256.Sum256([]byte(longID))
	id := longID[:27] + "_" + hex.EncodeToString(sum[:])[:12]
	require.Len(t, id, 40)
	require.JSONEq(t, `[
		{"role":"system","content":"You are terse."},
		{"role":"user","content":[
			{"type":"text","text":"What is in these?"},
			{"type":"image_url","image_url":{"url":"data:image/png;base64,cG5nIQ=="}},
			{"type":"image_url","image_url":{"url":"https://example.com/cat.jpg"}}]},
		{"role":"assistant","content":"Reading both.","tool_calls":[
			{"id":"`+id+`","type":"function","function":{"name":"read","arguments":"{\"path\":\"a\"}"}},
			{"id":"toolu_02","type":"function","function":{"name":"read","arguments":"{\"path\":\"b\"}"}}]},
		{"role":"tool","tool_call_id":"`+id+`","content":"A"},
		{"role":"tool","tool_call_id":"toolu_02","content":"no such file"},
		{"role":"user","content":"Also, be brief."}
	]`, got.Field(t, "messages"))
}

func TestOpenAIThinkingOnlyAnswerIsDropped(t *testing.T) {
	srv := providertest.NewServer(t, okReply())
	stream(t, newProvider(t, srv), request(
		agentsdk.TextMessage(agentsdk.RoleUser, "a"),
		agentsdk.Message{Role: agentsdk.RoleAssistant, Provider: "anthropic", Content: []agentsdk.Block{{Type: agentsdk.BlockThinking, Thinking: "…", Signature: "s"}}},
		agentsdk.TextMessage(agentsdk.RoleUser, "b"),
	))
	require.JSONEq(t, `[{"role":"user","content":"a"},{"role":"user","content":"b"}]`, srv.Last().Field(t, "messages"))
}

// redirect sends every request to srv, whatever its host.
type redirect struct{ to *url.URL }

func (r redirect) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.URL.Scheme, req.URL.Host = r.to.Scheme, r.to.Host
	return http.DefaultTransport.RoundTrip(req)
}

func TestOpenAIOfficialAPIGetsMaxCompletionTokensAndReasoningEffort(t *testing.T) {
	srv := providertest.NewServer(t, okReply())
	to, err := url.Parse(srv.URL)
	require.NoError(t, err)
	p, err := openai.New(openai.Options{APIKey: "sk-test", HTTPClient: &http.Client{Transport: redirect{to}}})
	require.NoError(t, err)
	temp := 0.3
	req := request(agentsdk.TextMessage(agentsdk.RoleUser, "hi"))
	req.Model.ModelID, req.MaxTokens, req.ThinkingBudget, req.Temperature = "gpt-5-mini", 5000, 8000, &temp

	stream(t, p, req)

	got := srv.Last()
	require.Equal(t, "/v1/chat/completions", got.Path)
	require.Equal(t, "5000", got.Field(t, "max_completion_tokens"))
	require.Empty(t, got.Field(t, "max_tokens"))
	require.Equal(t, `"medium"`, got.Field(t, "reasoning_effort"))
	require.Empty(t, got.Field(t, "temperature"), "reasoning models take only the default temperature")
}

// The endpoint's key is read once, when the provider is made, from the
// variable its options name, and sent only to its own base URL.
func TestOpenAIKeyIsReadOnceFromTheEndpointsVariable(t *testing.T) {
	srv := providertest.NewServer(t, okReply(), okReply())
	t.Setenv("ENDPOINT_OPENAI_KEY", "sk-first")
	p, err := openai.New(openai.Options{BaseURL: srv.URL + "/v1", APIKeyEnv: "ENDPOINT_OPENAI_KEY"})
	require.NoError(t, err)
	t.Setenv("ENDPOINT_OPENAI_KEY", "sk-second")

	stream(t, p, request(agentsdk.TextMessage(agentsdk.RoleUser, "hi")))
	stream(t, p, request(agentsdk.TextMessage(agentsdk.RoleUser, "hi")))

	require.Len(t, srv.Requests(), 2)
	require.Equal(t, "Bearer sk-first", srv.Last().Header.Get("Authorization"))
}

// Another server never receives OpenAI's key unless its options name the
// variable.
func TestOpenAICompatibleServerGetsNoKeyByDefault(t *testing.T) {
	srv := providertest.NewServer(t, okReply())
	t.Setenv("OPENAI_API_KEY", "sk-real-openai")
	p, err := openai.New(openai.Options{BaseURL: srv.URL + "/v1"})
	require.NoError(t, err)

	stream(t, p, request(agentsdk.TextMessage(agentsdk.RoleUser, "hi")))

	require.Empty(t, srv.Last().Header.Get("Authorization"))
}

func TestOpenAIDescribesItsEndpoint(t *testing.T) {
	p, err := openai.New(openai.Options{Endpoint: "team-a", Models: []string{"m1", "m2"}})
	require.NoError(t, err)
	require.Equal(t, agentsdk.EndpointInfo{Name: "team-a", Provider: "openai", Models: []string{"m1", "m2"}}, p.Endpoint())
	p, err = openai.New(openai.Options{})
	require.NoError(t, err)
	require.Equal(t, agentsdk.EndpointInfo{Name: "openai", Provider: "openai", Models: []string{"*"}}, p.Endpoint())
}

func TestOpenAINewValidatesOptions(t *testing.T) {
	for name, opts := range map[string]openai.Options{
		"base URL":       {BaseURL: "localhost:11434"},
		"negative price": {Prices: map[string]agentsdk.Price{"m": {Output: -1}}},
		"name":           {Name: "my provider"},
	} {
		_, err := openai.New(opts)
		require.ErrorIs(t, err, agentsdk.ErrInvalidInput, name)
	}
	p, err := openai.New(openai.Options{Name: "ollama", BaseURL: "http://localhost:11434/v1"})
	require.NoError(t, err)
	require.Equal(t, "ollama", p.Name())
}
