package anthropic

import (
	"strings"

	"github.com/anthropics/anthropic-sdk-go"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/internal/providerkit"
)

// accumulator folds the Messages API's stream events into one message,
// passing deltas on as they come.
type accumulator struct {
	onEvent agentsdk.StreamFunc
	blocks  []agentsdk.Block
	// at maps the API's content block index to blocks; blocks of types
	// agentsdk has no use for (server tools) are not kept.
	at    map[int64]int
	args  map[int64]*strings.Builder
	usage agentsdk.Usage
	stop  agentsdk.StopReason
	done  bool // message_stop seen: the answer is whole
}

func newAccumulator(onEvent agentsdk.StreamFunc) *accumulator {
	return &accumulator{onEvent: onEvent, at: map[int64]int{}, args: map[int64]*strings.Builder{}}
}

func (a *accumulator) add(ev anthropic.MessageStreamEventUnion) {
	switch ev.Type {
	case "message_start":
		a.addUsage(ev.Message.Usage.InputTokens, ev.Message.Usage.OutputTokens,
			ev.Message.Usage.CacheReadInputTokens, ev.Message.Usage.CacheCreationInputTokens)
	case "content_block_start":
		a.start(ev.Index, ev.ContentBlock)
	case "content_block_delta":
		a.delta(ev.Index, ev.Delta)
	case "content_block_stop":
		a.end(ev.Index)
	case "message_delta":
		if ev.Delta.StopReason != "" {
			a.stop = stopReason(ev.Delta.StopReason)
		}
		a.addUsage(ev.Usage.InputTokens, ev.Usage.OutputTokens, ev.Usage.CacheReadInputTokens, ev.Usage.CacheCreationInputTokens)
	case "message_stop":
		a.done = true
	}
}

// addUsage keeps the latest non-zero counts: message_delta's are
// cumulative and may repeat or update message_start's.
func (a *accumulator) addUsage(input, output, cacheRead, cacheWrite int64) {
	for _, f := range []struct {
		dst *int64
		v   int64
	}{{&a.usage.Input, input}, {&a.usage.Output, output}, {&a.usage.CacheRead, cacheRead}, {&a.usage.CacheWrite, cacheWrite}} {
		if f.v != 0 {
			*f.dst = f.v
		}
	}
}

func (a *accumulator) start(i int64, cb anthropic.ContentBlockStartEventContentBlockUnion) {
	var b agentsdk.Block
	switch cb.Type {
	case "text":
		b = agentsdk.Block{Type: agentsdk.BlockText, Text: cb.Text}
	case "thinking":
		b = agentsdk.Block{Type: agentsdk.BlockThinking, Thinking: cb.Thinking, Signature: cb.Signature}
	case "redacted_thinking":
		b = agentsdk.Block{Type: agentsdk.BlockThinking, Redacted: cb.Data}
	case "tool_use":
		tc := &agentsdk.ToolCall{ID: toolCallID(cb.ID), Name: cb.Name}
		b = agentsdk.Block{Type: agentsdk.BlockToolCall, ToolCall: tc}
		a.args[i] = &strings.Builder{}
		a.onEvent(agentsdk.StreamEvent{Type: agentsdk.StreamToolCallStart, ToolCall: &agentsdk.ToolCall{ID: tc.ID, Name: tc.Name}})
	default:
		return
	}
	a.at[i] = len(a.blocks)
	a.blocks = append(a.blocks, b)
}

func (a *accumulator) delta(i int64, d anthropic.MessageStreamEventUnionDelta) {
	at, ok := a.at[i]
	if !ok {
		return
	}
	b := &a.blocks[at]
	switch d.Type {
	case "text_delta":
		b.Text += d.Text
		a.onEvent(agentsdk.StreamEvent{Type: agentsdk.StreamText, Text: d.Text})
	case "thinking_delta":
		b.Thinking += d.Thinking
		a.onEvent(agentsdk.StreamEvent{Type: agentsdk.StreamThinking, Text: d.Thinking})
	case "signature_delta":
		b.Signature += d.Signature
	case "input_json_delta":
		if d.PartialJSON == "" || b.ToolCall == nil {
			return
		}
		a.args[i].WriteString(d.PartialJSON)
		a.onEvent(agentsdk.StreamEvent{Type: agentsdk.StreamToolCallDelta, ToolCall: &agentsdk.ToolCall{ID: b.ToolCall.ID, Name: b.ToolCall.Name}, Delta: d.PartialJSON})
	}
}

func (a *accumulator) end(i int64) {
	at, ok := a.at[i]
	if !ok || a.blocks[at].Type != agentsdk.BlockToolCall {
		return
	}
	tc := a.blocks[at].ToolCall
	tc.Arguments = providerkit.Arguments(a.args[i].String())
	done := *tc
	a.onEvent(agentsdk.StreamEvent{Type: agentsdk.StreamToolCallEnd, ToolCall: &done})
}

// message is the answer so far, without empty text blocks.
func (a *accumulator) message() agentsdk.Message {
	content := make([]agentsdk.Block, 0, len(a.blocks))
	for _, b := range a.blocks {
		if b.Type == agentsdk.BlockText && b.Text == "" {
			continue
		}
		content = append(content, b)
	}
	usage := a.usage
	return agentsdk.Message{Role: agentsdk.RoleAssistant, Content: content, Usage: &usage, StopReason: a.stop}
}

func stopReason(r anthropic.StopReason) agentsdk.StopReason {
	switch r {
	case anthropic.StopReasonEndTurn:
		return agentsdk.StopEndTurn
	case anthropic.StopReasonToolUse:
		return agentsdk.StopToolUse
	case anthropic.StopReasonMaxTokens, anthropic.StopReasonModelContextWindowExceeded:
		return agentsdk.StopMaxTokens
	case anthropic.StopReasonStopSequence:
		return agentsdk.StopSequence
	case anthropic.StopReasonRefusal:
		return agentsdk.StopRefusal
	}
	return agentsdk.StopOther
}
