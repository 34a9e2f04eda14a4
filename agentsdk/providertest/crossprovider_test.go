package providertest_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/anthropic"
	"github.com/agentree/agentree/agentsdk/openai"
	"github.com/agentree/agentree/agentsdk/providertest"
)

const (
	claude = "claude-sonnet-4-5"
	gpt    = "gpt-4.1"
)

var tools = []agentsdk.ToolSpec{
	{Name: "get_weather", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)},
	{Name: "to_fahrenheit", Parameters: json.RawMessage(`{"type":"object","properties":{"celsius":{"type":"number"}}}`)},
}

func call(t *testing.T, p agentsdk.Provider, modelID string, budget int, msgs []agentsdk.Message) agentsdk.Message {
	t.Helper()
	msg, _ := providertest.Stream(t, p, agentsdk.ModelRequest{
		Model:          agentsdk.ModelRef{Provider: p.Name(), ModelID: modelID},
		Messages:       msgs,
		Tools:          tools,
		ThinkingBudget: budget,
	})
	return msg
}

// TestAnthropicToOpenAIToAnthropicConversation moves one conversation
// between providers: each gets the other's turns in its own wire format,
// with thinking only where it can be verified and every tool call paired
// with its result.
func TestAnthropicToOpenAIToAnthropicConversation(t *testing.T) {
	antSrv := providertest.NewServer(t,
		providertest.Reply{Body: providertest.NewAnthropicStream(claude, providertest.AnthropicUsage{Input: 100}).
			Thinking("EqQBCgIYAhIM1gbcDa9GJwZA2b3h", "The user wants Paris weather ", "in Fahrenheit.").
			Text("Let me check.").
			ToolUse("toolu_01A09q90qw90lq917835lq9", "get_weather", `{"city":`, ` "Paris"}`).
			End("tool_use", 60)},
		providertest.Reply{Body: providertest.NewAnthropicStream(claude, providertest.AnthropicUsage{Input: 300}).
			Text("It is 64.4°F in Paris.").End("end_turn", 12)},
	)
	oaiSrv := providertest.NewServer(t,
		providertest.Reply{Body: providertest.NewOpenAIStream(gpt).
			Text("Converting.").
			// An ID of the shape some OpenAI-compatible servers send;
			// Anthropic would refuse its '.' and ':'.
			ToolCall(0, "functions.to_fahrenheit:1", "to_fahrenheit", `{"celsius":`, `18}`).
			Finish("tool_calls").Usage(200, 20, 0).Done()},
	)
	ant, err := anthropic.New(anthropic.Options{BaseURL: antSrv.URL, APIKey: "sk-ant-test"})
	require.NoError(t, err)
	oai, err := openai.New(openai.Options{BaseURL: oaiSrv.URL, APIKey: "sk-test"})
	require.NoError(t, err)

	// Turn 1, Anthropic: thinking and a tool call.
	conv := []agentsdk.Message{agentsdk.TextMessage(agentsdk.RoleUser, "Weather in Paris, in Fahrenheit?")}
	turn1 := call(t, ant, claude, 2048, conv)
	require.Equal(t, "anthropic", turn1.Provider)
	weather := turn1.ToolCalls()[0]
	conv = append(conv, turn1, agentsdk.ToolResultMessage(weather, "18°C, sunny", false))

	// Turn 2, OpenAI: Anthropic's thinking is gone, its tool call paired
	// with its result.
	turn2 := call(t, oai, gpt, 0, conv)
	require.Equal(t, "openai", turn2.Provider)
	oaiBody := oaiSrv.Last()
	require.JSONEq(t, `[
		{"role":"user","content":"Weather in Paris, in Fahrenheit?"},
		{"role":"assistant","content":"Let me check.","tool_calls":[{"id":"toolu_01A09q90qw90lq917835lq9","type":"function",
			"function":{"name":"get_weather","arguments":"{\"city\": \"Paris\"}"}}]},
		{"role":"tool","tool_call_id":"toolu_01A09q90qw90lq917835lq9","content":"18°C, sunny"}
	]`, oaiBody.Field(t, "messages"))
	require.NotContains(t, string(oaiBody.Body), "Fahrenheit.", "thinking must not reach OpenAI")
	require.NotContains(t, string(oaiBody.Body), "EqQBCgIYAhIM1gbcDa9GJwZA2b3h", "signatures must not reach OpenAI")

	convert := turn2.ToolCalls()[0]
	sum := sha256.Sum256([]byte("functions.to_fahrenheit:1"))
	normalised := "functions_to_fahrenheit_1_" + hex.EncodeToString(sum[:])[:12]
	require.Equal(t, normalised, convert.ID)
	conv = append(conv, turn2, agentsdk.ToolResultMessage(convert, "64.4", false))

	// Turn 3, Anthropic: its own thinking comes back signed, OpenAI's tool
	// call is paired with its result under the normalised ID.
	turn3 := call(t, ant, claude, 2048, conv)
	require.Equal(t, "It is 64.4°F in Paris.", turn3.Text())
	antBody := antSrv.Last()
	require.JSONEq(t, `[
		{"role":"user","content":[{"type":"text","text":"Weather in Paris, in Fahrenheit?"}]},
		{"role":"assistant","content":[
			{"type":"thinking","thinking":"The user wants Paris weather in Fahrenheit.","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3h"},
			{"type":"text","text":"Let me check."},
			{"type":"tool_use","id":"toolu_01A09q90qw90lq917835lq9","name":"get_weather","input":{"city":"Paris"}}]},
		{"role":"user","content":[
			{"type":"tool_result","tool_use_id":"toolu_01A09q90qw90lq917835lq9","content":[{"type":"text","text":"18°C, sunny"}]}]},
		{"role":"assistant","content":[
			{"type":"text","text":"Converting."},
			{"type":"tool_use","id":"`+normalised+`","name":"to_fahrenheit","input":{"celsius":18}}]},
		{"role":"user","content":[
			{"type":"tool_result","tool_use_id":"`+normalised+`","content":[{"type":"text","text":"64.4"}]}]}
	]`, antBody.Field(t, "messages"))
	// The last tool turn is OpenAI's and has no thinking block, which the
	// API refuses while thinking is on: thinking is off for this call.
	require.Empty(t, antBody.Field(t, "thinking"))
	require.JSONEq(t, `{"type":"enabled","budget_tokens":2048}`, antSrv.Requests()[0].Field(t, "thinking"))
}
