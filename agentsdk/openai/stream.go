package openai

import (
	"encoding/json"
	"strings"

	"github.com/openai/openai-go/v3"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/internal/providerkit"
)

// accumulator folds Chat Completions chunks into one message, passing
// deltas on as they come.
type accumulator struct {
	onEvent  agentsdk.StreamFunc
	thinking strings.Builder
	text     strings.Builder
	refusal  strings.Builder
	calls    []*call // in the order they started
	byIndex  map[int64]*call
	usage    agentsdk.Usage
	finish   string // the finish_reason; "" until the answer is whole
}

// call is a tool call being streamed.
type call struct {
	id, name string
	args     strings.Builder
}

func (c *call) head() *agentsdk.ToolCall { return &agentsdk.ToolCall{ID: c.id, Name: c.name} }

func newAccumulator(onEvent agentsdk.StreamFunc) *accumulator {
	return &accumulator{onEvent: onEvent, byIndex: map[int64]*call{}}
}

func (a *accumulator) add(chunk openai.ChatCompletionChunk) {
	if u := chunk.Usage; u.JSON.PromptTokens.Valid() {
		cached := u.PromptTokensDetails.CachedTokens
		a.usage = agentsdk.Usage{Input: u.PromptTokens - cached, CacheRead: cached, Output: u.CompletionTokens}
	}
	for _, ch := range chunk.Choices {
		if ch.Index != 0 {
			continue
		}
		a.delta(ch.Delta)
		if ch.FinishReason != "" && a.finish == "" {
			a.finish = ch.FinishReason
			for _, c := range a.calls {
				tc := c.head()
				tc.Arguments = providerkit.Arguments(c.args.String())
				a.onEvent(agentsdk.StreamEvent{Type: agentsdk.StreamToolCallEnd, ToolCall: tc})
			}
		}
	}
}

func (a *accumulator) delta(d openai.ChatCompletionChunkChoiceDelta) {
	if t := reasoning(d); t != "" {
		a.thinking.WriteString(t)
		a.onEvent(agentsdk.StreamEvent{Type: agentsdk.StreamThinking, Text: t})
	}
	if d.Content != "" {
		a.text.WriteString(d.Content)
		a.onEvent(agentsdk.StreamEvent{Type: agentsdk.StreamText, Text: d.Content})
	}
	if d.Refusal != "" {
		a.refusal.WriteString(d.Refusal)
		a.onEvent(agentsdk.StreamEvent{Type: agentsdk.StreamText, Text: d.Refusal})
	}
	for _, tc := range d.ToolCalls {
		c, ok := a.byIndex[tc.Index]
		if !ok {
			c = &call{id: providerkit.ToolCallID(tc.ID, providerkit.OwnIDLen), name: tc.Function.Name}
			a.byIndex[tc.Index] = c
			a.calls = append(a.calls, c)
			a.onEvent(agentsdk.StreamEvent{Type: agentsdk.StreamToolCallStart, ToolCall: c.head()})
		}
		if tc.Function.Arguments != "" {
			c.args.WriteString(tc.Function.Arguments)
			a.onEvent(agentsdk.StreamEvent{Type: agentsdk.StreamToolCallDelta, ToolCall: c.head(), Delta: tc.Function.Arguments})
		}
	}
}

// reasoning is a delta's thinking, which OpenAI-compatible servers send
// as reasoning_content (vLLM, DeepSeek) or reasoning (Ollama, OpenRouter);
// OpenAI itself streams none.
func reasoning(d openai.ChatCompletionChunkChoiceDelta) string {
	for _, key := range []string{"reasoning_content", "reasoning"} {
		var s string
		if f, ok := d.JSON.ExtraFields[key]; ok && json.Unmarshal([]byte(f.Raw()), &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

// message is the whole answer: thinking, then text, then tool calls.
func (a *accumulator) message() agentsdk.Message {
	var content []agentsdk.Block
	if a.thinking.Len() > 0 {
		content = append(content, agentsdk.Block{Type: agentsdk.BlockThinking, Thinking: a.thinking.String()})
	}
	if text := a.text.String() + a.refusal.String(); text != "" {
		content = append(content, agentsdk.Block{Type: agentsdk.BlockText, Text: text})
	}
	for _, c := range a.calls {
		tc := c.head()
		tc.Arguments = providerkit.Arguments(c.args.String())
		content = append(content, agentsdk.Block{Type: agentsdk.BlockToolCall, ToolCall: tc})
	}
	usage := a.usage
	return agentsdk.Message{Role: agentsdk.RoleAssistant, Content: content, Usage: &usage, StopReason: a.stopReason()}
}

func (a *accumulator) stopReason() agentsdk.StopReason {
	switch a.finish {
	case "stop":
		switch {
		case a.refusal.Len() > 0:
			return agentsdk.StopRefusal
		case len(a.calls) > 0: // some compatible servers finish tool calls with "stop"
			return agentsdk.StopToolUse
		}
		return agentsdk.StopEndTurn
	case "tool_calls", "function_call":
		return agentsdk.StopToolUse
	case "length":
		return agentsdk.StopMaxTokens
	case "content_filter":
		return agentsdk.StopRefusal
	}
	return agentsdk.StopOther
}
