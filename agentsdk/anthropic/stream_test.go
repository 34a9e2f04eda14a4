package anthropic_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/anthropic"
	"github.com/agentree/agentree/agentsdk/providertest"
)

const model = "claude-sonnet-4-5-20250929"

func newProvider(t *testing.T, srv *providertest.Server) *anthropic.Provider {
	t.Helper()
	p, err := anthropic.New(anthropic.Options{BaseURL: srv.URL, APIKey: "sk-ant-test"})
	require.NoError(t, err)
	return p
}

func request(msgs ...agentsdk.Message) agentsdk.ModelRequest {
	return agentsdk.ModelRequest{
		Model:    agentsdk.ModelRef{Provider: "anthropic", ModelID: model},
		Messages: msgs,
	}
}

func stream(t *testing.T, p *anthropic.Provider, req agentsdk.ModelRequest) (agentsdk.Message, []agentsdk.StreamEvent) {
	t.Helper()
	return providertest.Stream(t, p, req)
}

func TestAnthropicStreamsTextInOrder(t *testing.T) {
	srv := providertest.NewServer(t, providertest.Reply{
		Body: providertest.NewAnthropicStream(model, providertest.AnthropicUsage{Input: 12}).
			Text("Hel", "lo", ", world").Ping().End("end_turn", 5),
	})
	p := newProvider(t, srv)

	msg, events := stream(t, p, request(agentsdk.TextMessage(agentsdk.RoleUser, "Say hello")))

	require.Equal(t, []agentsdk.StreamEvent{
		{Type: agentsdk.StreamText, Text: "Hel"},
		{Type: agentsdk.StreamText, Text: "lo"},
		{Type: agentsdk.StreamText, Text: ", world"},
	}, events)
	require.Equal(t, agentsdk.RoleAssistant, msg.Role)
	require.Equal(t, []agentsdk.Block{{Type: agentsdk.BlockText, Text: "Hello, world"}}, msg.Content)
	require.Equal(t, "anthropic", msg.Provider)
	require.Equal(t, model, msg.Model)
	require.Equal(t, agentsdk.StopEndTurn, msg.StopReason)

	req := srv.Last()
	require.Equal(t, "/v1/messages", req.Path)
	require.Equal(t, "sk-ant-test", req.Header.Get("X-Api-Key"))
	require.Equal(t, "true", req.Field(t, "stream"))
	require.Equal(t, "4096", req.Field(t, "max_tokens"))
	require.JSONEq(t, `[{"role":"user","content":[{"type":"text","text":"Say hello"}]}]`, req.Field(t, "messages"))
}

func TestAnthropicToolUseAssemblesStreamedArguments(t *testing.T) {
	srv := providertest.NewServer(t, providertest.Reply{
		Body: providertest.NewAnthropicStream(model, providertest.AnthropicUsage{Input: 30}).
			Text("Checking.").
			ToolUse("toolu_01A09q90qw90lq917835lq9", "get_weather", `{"loc`, `ation": "Par`, `is", "unit": "c"}`).
			End("tool_use", 40),
	})
	p := newProvider(t, srv)

	msg, events := stream(t, p, request(agentsdk.TextMessage(agentsdk.RoleUser, "Weather in Paris?")))

	id := "toolu_01A09q90qw90lq917835lq9"
	head := &agentsdk.ToolCall{ID: id, Name: "get_weather"}
	args := json.RawMessage(`{"location": "Paris", "unit": "c"}`)
	require.Equal(t, []agentsdk.StreamEvent{
		{Type: agentsdk.StreamText, Text: "Checking."},
		{Type: agentsdk.StreamToolCallStart, ToolCall: head},
		{Type: agentsdk.StreamToolCallDelta, ToolCall: head, Delta: `{"loc`},
		{Type: agentsdk.StreamToolCallDelta, ToolCall: head, Delta: `ation": "Par`},
		{Type: agentsdk.StreamToolCallDelta, ToolCall: head, Delta: `is", "unit": "c"}`},
		{Type: agentsdk.StreamToolCallEnd, ToolCall: &agentsdk.ToolCall{ID: id, Name: "get_weather", Arguments: args}},
	}, events)
	require.Equal(t, []agentsdk.ToolCall{{ID: id, Name: "get_weather", Arguments: args}}, msg.ToolCalls())
	require.Equal(t, "Checking.", msg.Text())
	require.Equal(t, agentsdk.StopToolUse, msg.StopReason)
}

func TestAnthropicToolUseWithoutInputGetsEmptyObject(t *testing.T) {
	srv := providertest.NewServer(t, providertest.Reply{
		Body: providertest.NewAnthropicStream(model, providertest.AnthropicUsage{}).
			ToolUse("toolu_1", "now").End("tool_use", 3),
	})
	msg, _ := stream(t, newProvider(t, srv), request(agentsdk.TextMessage(agentsdk.RoleUser, "time?")))
	require.JSONEq(t, `{}`, string(msg.ToolCalls()[0].Arguments))
}

func TestAnthropicThinkingWithSignatureRoundTrips(t *testing.T) {
	srv := providertest.NewServer(t, providertest.Reply{
		Body: providertest.NewAnthropicStream(model, providertest.AnthropicUsage{Input: 50}).
			Thinking("EqQBCgIYAhIM1gbcDa9GJwZA2b3h", "Let me ", "think.").
			RedactedThinking("EmwKAhgBEgy3va3pzix/LafPsn4a").
			Text("42").End("end_turn", 20),
	}, providertest.Reply{
		Body: providertest.NewAnthropicStream(model, providertest.AnthropicUsage{}).Text("ok").End("end_turn", 1),
	})
	p := newProvider(t, srv)
	user := agentsdk.TextMessage(agentsdk.RoleUser, "Meaning of life?")
	req := request(user)
	req.ThinkingBudget = 2048

	msg, events := stream(t, p, req)

	require.Equal(t, []agentsdk.StreamEvent{
		{Type: agentsdk.StreamThinking, Text: "Let me "},
		{Type: agentsdk.StreamThinking, Text: "think."},
		{Type: agentsdk.StreamText, Text: "42"},
	}, events)
	require.Equal(t, []agentsdk.Block{
		{Type: agentsdk.BlockThinking, Thinking: "Let me think.", Signature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3h"},
		{Type: agentsdk.BlockThinking, Redacted: "EmwKAhgBEgy3va3pzix/LafPsn4a"},
		{Type: agentsdk.BlockText, Text: "42"},
	}, msg.Content)
	require.JSONEq(t, `{"type":"enabled","budget_tokens":2048}`, srv.Last().Field(t, "thinking"))
	require.Equal(t, "4096", srv.Last().Field(t, "max_tokens"))

	// The answer goes back to Anthropic with its thinking intact.
	req = request(user, msg, agentsdk.TextMessage(agentsdk.RoleUser, "Why?"))
	stream(t, p, req)
	require.JSONEq(t, `[
		{"role":"user","content":[{"type":"text","text":"Meaning of life?"}]},
		{"role":"assistant","content":[
			{"type":"thinking","thinking":"Let me think.","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3h"},
			{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4a"},
			{"type":"text","text":"42"}]},
		{"role":"user","content":[{"type":"text","text":"Why?"}]}
	]`, srv.Last().Field(t, "messages"))
}

func TestAnthropicUsageAndCost(t *testing.T) {
	body := providertest.NewAnthropicStream(model, providertest.AnthropicUsage{Input: 1000, CacheRead: 20000, CacheWrite: 4000}).
		Text("hi").End("end_turn", 300)
	srv := providertest.NewServer(t, providertest.Reply{Body: body}, providertest.Reply{Body: body}, providertest.Reply{Body: body})

	// Built-in price of claude-sonnet-4-5, found from the dated ID.
	msg, _ := stream(t, newProvider(t, srv), request(agentsdk.TextMessage(agentsdk.RoleUser, "hi")))
	want := agentsdk.Usage{Input: 1000, Output: 300, CacheRead: 20000, CacheWrite: 4000,
		Cost: (1000*3 + 300*15 + 20000*0.30 + 4000*3.75) / 1e6}
	require.Equal(t, want.Input, msg.Usage.Input)
	require.Equal(t, want.Output, msg.Usage.Output)
	require.Equal(t, want.CacheRead, msg.Usage.CacheRead)
	require.Equal(t, want.CacheWrite, msg.Usage.CacheWrite)
	require.InDelta(t, want.Cost, msg.Usage.Cost, 1e-12)

	// Options.Prices overrides the table.
	p, err := anthropic.New(anthropic.Options{BaseURL: srv.URL, APIKey: "k", Prices: map[string]agentsdk.Price{model: {Input: 1, Output: 1}}})
	require.NoError(t, err)
	msg, _ = stream(t, p, request(agentsdk.TextMessage(agentsdk.RoleUser, "hi")))
	require.InDelta(t, 1300.0/1e6, msg.Usage.Cost, 1e-12)

}

func TestAnthropicStopReasonMapping(t *testing.T) {
	for wire, want := range map[string]agentsdk.StopReason{
		"end_turn":                      agentsdk.StopEndTurn,
		"tool_use":                      agentsdk.StopToolUse,
		"max_tokens":                    agentsdk.StopMaxTokens,
		"model_context_window_exceeded": agentsdk.StopMaxTokens,
		"stop_sequence":                 agentsdk.StopSequence,
		"refusal":                       agentsdk.StopRefusal,
		"pause_turn":                    agentsdk.StopOther,
	} {
		t.Run(wire, func(t *testing.T) {
			srv := providertest.NewServer(t, providertest.Reply{
				Body: providertest.NewAnthropicStream(model, providertest.AnthropicUsage{}).Text("x").End(wire, 1),
			})
			msg, _ := stream(t, newProvider(t, srv), request(agentsdk.TextMessage(agentsdk.RoleUser, "x")))
			require.Equal(t, want, msg.StopReason)
		})
	}
}
