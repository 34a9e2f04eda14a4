package providertest

import (
	"encoding/json"
	"fmt"
	"strings"
)

// AnthropicStream writes a Messages API event stream (`stream: true`) with
// the event names and JSON shapes the real API sends.
type AnthropicStream struct {
	b    strings.Builder
	next int // index of the next content block
}

// AnthropicUsage is the usage message_start reports.
type AnthropicUsage struct {
	Input, CacheRead, CacheWrite int64
}

// NewAnthropicStream starts a stream with message_start and a ping.
func NewAnthropicStream(model string, u AnthropicUsage) *AnthropicStream {
	s := &AnthropicStream{}
	s.event("message_start", map[string]any{
		"type": "message_start",
		"message": map[string]any{
			"id": "msg_01XFDUDYJgAACzvnptvVoYEL", "type": "message", "role": "assistant",
			"content": []any{}, "model": model, "stop_reason": nil, "stop_sequence": nil,
			"usage": map[string]any{
				"input_tokens": u.Input, "cache_creation_input_tokens": u.CacheWrite,
				"cache_read_input_tokens": u.CacheRead, "output_tokens": 1,
			},
		},
	})
	s.Ping()
	return s
}

// Ping adds a ping event, which clients must ignore.
func (s *AnthropicStream) Ping() *AnthropicStream {
	s.event("ping", map[string]any{"type": "ping"})
	return s
}

// Text adds a text block streamed as deltas.
func (s *AnthropicStream) Text(deltas ...string) *AnthropicStream {
	i := s.start(map[string]any{"type": "text", "text": ""})
	for _, d := range deltas {
		s.delta(i, map[string]any{"type": "text_delta", "text": d})
	}
	return s.stop(i)
}

// Thinking adds a thinking block streamed as deltas, then its signature.
func (s *AnthropicStream) Thinking(signature string, deltas ...string) *AnthropicStream {
	i := s.start(map[string]any{"type": "thinking", "thinking": "", "signature": ""})
	for _, d := range deltas {
		s.delta(i, map[string]any{"type": "thinking_delta", "thinking": d})
	}
	s.delta(i, map[string]any{"type": "signature_delta", "signature": signature})
	return s.stop(i)
}

// RedactedThinking adds a redacted_thinking block.
func (s *AnthropicStream) RedactedThinking(data string) *AnthropicStream {
	return s.stop(s.start(map[string]any{"type": "redacted_thinking", "data": data}))
}

// ToolUse adds a tool_use block whose input arrives as partial JSON.
func (s *AnthropicStream) ToolUse(id, name string, fragments ...string) *AnthropicStream {
	i := s.start(map[string]any{"type": "tool_use", "id": id, "name": name, "input": map[string]any{}})
	s.delta(i, map[string]any{"type": "input_json_delta", "partial_json": ""})
	for _, f := range fragments {
		s.delta(i, map[string]any{"type": "input_json_delta", "partial_json": f})
	}
	return s.stop(i)
}

// End adds message_delta and message_stop and returns the stream.
func (s *AnthropicStream) End(stopReason string, outputTokens int64) string {
	s.event("message_delta", map[string]any{
		"type":  "message_delta",
		"delta": map[string]any{"stop_reason": stopReason, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": outputTokens},
	})
	s.event("message_stop", map[string]any{"type": "message_stop"})
	return s.String()
}

// Error adds an error event, as the API sends when it fails mid-stream,
// and returns the stream.
func (s *AnthropicStream) Error(typ, message string) string {
	s.event("error", AnthropicError(typ, message))
	return s.String()
}

// String returns the stream written so far.
func (s *AnthropicStream) String() string { return s.b.String() }

// AnthropicError is the API's error document.
func AnthropicError(typ, message string) map[string]any {
	return map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": message}}
}

// AnthropicErrorBody is the API's error document as a response body.
func AnthropicErrorBody(typ, message string) string { return mustJSON(AnthropicError(typ, message)) }

func (s *AnthropicStream) start(block map[string]any) int {
	i := s.next
	s.next++
	s.event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": block})
	return i
}

func (s *AnthropicStream) delta(i int, d map[string]any) {
	s.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": d})
}

func (s *AnthropicStream) stop(i int) *AnthropicStream {
	s.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	return s
}

func (s *AnthropicStream) event(name string, data any) {
	fmt.Fprintf(&s.b, "event: %s\ndata: %s\n\n", name, mustJSON(data))
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
