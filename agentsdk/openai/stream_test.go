package openai_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/openai"
	"github.com/agentree/agentree/agentsdk/providertest"
)

const model = "gpt-4o-2024-08-06"

func newProvider(t *testing.T, srv *providertest.Server) *openai.Provider {
	t.Helper()
	p, err := openai.New(openai.Options{BaseURL: srv.URL, APIKey: "sk-test"})
	require.NoError(t, err)
	return p
}

func request(msgs ...agentsdk.Message) agentsdk.ModelRequest {
	return agentsdk.ModelRequest{
		Model:    agentsdk.ModelRef{Provider: "openai", ModelID: model},
		Messages: msgs,
	}
}

func stream(t *testing.T, p *openai.Provider, req agentsdk.ModelRequest) (agentsdk.Message, []agentsdk.StreamEvent) {
	t.Helper()
	return providertest.Stream(t, p, req)
}

func TestOpenAIStreamsTextInOrder(t *testing.T) {
	srv := providertest.NewServer(t, providertest.Reply{
		Body: providertest.NewOpenAIStream(model).Text("Hel", "lo", ", world").Finish("stop").Usage(10, 3, 0).Done(),
	})
	p := newProvider(t, srv)
	req := request(agentsdk.TextMessage(agentsdk.RoleUser, "Say hello"))
	req.System, req.MaxTokens = "Be terse.", 256

	msg, events := stream(t, p, req)

	require.Equal(t, []agentsdk.StreamEvent{
		{Type: agentsdk.StreamText, Text: "Hel"},
		{Type: agentsdk.StreamText, Text: "lo"},
		{Type: agentsdk.StreamText, Text: ", world"},
	}, events)
	require.Equal(t, agentsdk.RoleAssistant, msg.Role)
	require.Equal(t, []agentsdk.Block{{Type: agentsdk.BlockText, Text: "Hello, world"}}, msg.Content)
	require.Equal(t, "openai", msg.Provider)
	require.Equal(t, model, msg.Model)
	require.Equal(t, agentsdk.StopEndTurn, msg.StopReason)

	got := srv.Last()
	require.Equal(t, "/chat/completions", got.Path)
	require.Equal(t, "Bearer sk-test", got.Header.Get("Authorization"))
	require.Equal(t, "true", got.Field(t, "stream"))
	require.JSONEq(t, `{"include_usage":true}`, got.Field(t, "stream_options"))
	require.Equal(t, "256", got.Field(t, "max_tokens"), "a compatible server gets max_tokens")
	require.JSONEq(t, `[{"role":"system","content":"Be terse."},{"role":"user","content":"Say hello"}]`, got.Field(t, "messages"))
}

func TestOpenAIToolCallsAssembleStreamedArguments(t *testing.T) {
	srv := providertest.NewServer(t, providertest.Reply{
		Body: providertest.NewOpenAIStream(model).
			ToolCall(0, "call_DdmO9pD3xa9XTPNJ32zg2hcA", "get_weather", `{"loc`, `ation": "Par`, `is"}`).
			ToolCall(1, "call_ABC", "get_time", `{"tz":"CET"}`).
			Finish("tool_calls").Usage(80, 40, 0).Done(),
	})

	msg, events := stream(t, newProvider(t, srv), request(agentsdk.TextMessage(agentsdk.RoleUser, "Weather and time in Paris?")))

	w := &agentsdk.ToolCall{ID: "call_DdmO9pD3xa9XTPNJ32zg2hcA", Name: "get_weather"}
	tm := &agentsdk.ToolCall{ID: "call_ABC", Name: "get_time"}
	wArgs, tArgs := json.RawMessage(`{"location": "Paris"}`), json.RawMessage(`{"tz":"CET"}`)
	require.Equal(t, []agentsdk.StreamEvent{
		{Type: agentsdk.StreamToolCallStart, ToolCall: w},
		{Type: agentsdk.StreamToolCallDelta, ToolCall: w, Delta: `{"loc`},
		{Type: agentsdk.StreamToolCallDelta, ToolCall: w, Delta: `ation": "Par`},
		{Type: agentsdk.StreamToolCallDelta, ToolCall: w, Delta: `is"}`},
		{Type: agentsdk.StreamToolCallStart, ToolCall: tm},
		{Type: agentsdk.StreamToolCallDelta, ToolCall: tm, Delta: `{"tz":"CET"}`},
		{Type: agentsdk.StreamToolCallEnd, ToolCall: &agentsdk.ToolCall{ID: w.ID, Name: w.Name, Arguments: wArgs}},
		{Type: agentsdk.StreamToolCallEnd, ToolCall: &agentsdk.ToolCall{ID: tm.ID, Name: tm.Name, Arguments: tArgs}},
	}, events)
	require.Equal(t, []agentsdk.ToolCall{
		{ID: w.ID, Name: "get_weather", Arguments: wArgs},
		{ID: tm.ID, Name: "get_time", Arguments: tArgs},
	}, msg.ToolCalls())
	require.Equal(t, agentsdk.StopToolUse, msg.StopReason)
}

func TestOpenAIReasoningContentBecomesThinking(t *testing.T) {
	srv := providertest.NewServer(t, providertest.Reply{
		Body: providertest.NewOpenAIStream("qwen3").Reasoning("Hmm, ", "six.").Text("6").Finish("stop").Done(),
	})
	p, err := openai.New(openai.Options{Name: "vllm", BaseURL: srv.URL})
	require.NoError(t, err)
	req := request(agentsdk.TextMessage(agentsdk.RoleUser, "2*3?"))
	req.Model = agentsdk.ModelRef{Provider: "vllm", ModelID: "qwen3"}

	msg, events := stream(t, p, req)

	require.Equal(t, []agentsdk.StreamEvent{
		{Type: agentsdk.StreamThinking, Text: "Hmm, "},
		{Type: agentsdk.StreamThinking, Text: "six."},
		{Type: agentsdk.StreamText, Text: "6"},
	}, events)
	require.Equal(t, []agentsdk.Block{
		{Type: agentsdk.BlockThinking, Thinking: "Hmm, six."},
		{Type: agentsdk.BlockText, Text: "6"},
	}, msg.Content)
	require.Equal(t, "vllm", msg.Provider)
	require.Empty(t, srv.Last().Header.Get("Authorization"), "no key, no Authorization header")
}

func TestOpenAIUsageAndCost(t *testing.T) {
	body := providertest.NewOpenAIStream(model).Text("hi").Finish("stop").Usage(12000, 500, 10000).Done()
	srv := providertest.NewServer(t, providertest.Reply{Body: body}, providertest.Reply{Body: body}, providertest.Reply{Body: body})

	// Built-in price of gpt-4o, found from the dated ID. prompt_tokens
	// counts the cached ones too.
	msg, _ := stream(t, newProvider(t, srv), request(agentsdk.TextMessage(agentsdk.RoleUser, "hi")))
	require.Equal(t, int64(2000), msg.Usage.Input)
	require.Equal(t, int64(10000), msg.Usage.CacheRead)
	require.Equal(t, int64(500), msg.Usage.Output)
	require.Zero(t, msg.Usage.CacheWrite)
	require.InDelta(t, (2000*2.50+10000*1.25+500*10)/1e6, msg.Usage.Cost, 1e-12)

	// Options.Prices overrides the table.
	p, err := openai.New(openai.Options{BaseURL: srv.URL, Prices: map[string]agentsdk.Price{model: {Input: 1, Output: 1}}})
	require.NoError(t, err)
	msg, _ = stream(t, p, request(agentsdk.TextMessage(agentsdk.RoleUser, "hi")))
	require.InDelta(t, 2500.0/1e6, msg.Usage.Cost, 1e-12)

}

func TestOpenAIStopReasonMapping(t *testing.T) {
	for wire, want := range map[string]agentsdk.StopReason{
		"stop":           agentsdk.StopEndTurn,
		"tool_calls":     agentsdk.StopToolUse,
		"function_call":  agentsdk.StopToolUse,
		"length":         agentsdk.StopMaxTokens,
		"content_filter": agentsdk.StopRefusal,
		"something_new":  agentsdk.StopOther,
	} {
		t.Run(wire, func(t *testing.T) {
			srv := providertest.NewServer(t, providertest.Reply{
				Body: providertest.NewOpenAIStream(model).Text("x").Finish(wire).Usage(1, 1, 0).Done(),
			})
			msg, _ := stream(t, newProvider(t, srv), request(agentsdk.TextMessage(agentsdk.RoleUser, "x")))
			require.Equal(t, want, msg.StopReason)
		})
	}
}
