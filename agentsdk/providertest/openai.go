package providertest

import (
	"fmt"
	"strings"
)

// OpenAIStream writes a Chat Completions event stream (`stream: true` with
// `stream_options.include_usage`) as the real API sends it: `data:` lines
// of chat.completion.chunk objects, a usage chunk with no choices, then
// `data: [DONE]`.
type OpenAIStream struct {
	b     strings.Builder
	model string
}

// NewOpenAIStream starts a stream with the chunk that carries the role.
func NewOpenAIStream(model string) *OpenAIStream {
	s := &OpenAIStream{model: model}
	s.choice(map[string]any{"role": "assistant", "content": "", "refusal": nil}, nil)
	return s
}

// Text adds content deltas.
func (s *OpenAIStream) Text(deltas ...string) *OpenAIStream {
	for _, d := range deltas {
		s.choice(map[string]any{"content": d}, nil)
	}
	return s
}

// Reasoning adds reasoning_content deltas, as vLLM, DeepSeek and other
// OpenAI-compatible servers stream a reasoning model's thinking.
func (s *OpenAIStream) Reasoning(deltas ...string) *OpenAIStream {
	for _, d := range deltas {
		s.choice(map[string]any{"reasoning_content": d}, nil)
	}
	return s
}

// ToolCall adds the tool call at index: its ID and name first, then its
// arguments in fragments.
func (s *OpenAIStream) ToolCall(index int, id, name string, fragments ...string) *OpenAIStream {
	s.choice(map[string]any{"tool_calls": []any{map[string]any{
		"index": index, "id": id, "type": "function",
		"function": map[string]any{"name": name, "arguments": ""},
	}}}, nil)
	for _, f := range fragments {
		s.choice(map[string]any{"tool_calls": []any{map[string]any{
			"index": index, "function": map[string]any{"arguments": f},
		}}}, nil)
	}
	return s
}

// Finish adds the chunk with the finish_reason.
func (s *OpenAIStream) Finish(reason string) *OpenAIStream {
	s.choice(map[string]any{}, reason)
	return s
}

// Usage adds the final usage chunk.
func (s *OpenAIStream) Usage(prompt, completion, cached int64) *OpenAIStream {
	s.chunk([]any{}, map[string]any{
		"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
		"prompt_tokens_details":     map[string]any{"cached_tokens": cached, "audio_tokens": 0},
		"completion_tokens_details": map[string]any{"reasoning_tokens": 0, "audio_tokens": 0},
	})
	return s
}

// Done adds `data: [DONE]` and returns the stream.
func (s *OpenAIStream) Done() string {
	s.b.WriteString("data: [DONE]\n\n")
	return s.String()
}

// String returns the stream written so far.
func (s *OpenAIStream) String() string { return s.b.String() }

// OpenAIErrorBody is the API's error document as a response body.
func OpenAIErrorBody(typ, code, message string) string {
	return mustJSON(map[string]any{"error": map[string]any{
		"message": message, "type": typ, "param": nil, "code": code,
	}})
}

func (s *OpenAIStream) choice(delta map[string]any, finish any) {
	s.chunk([]any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}}, nil)
}

func (s *OpenAIStream) chunk(choices []any, usage any) {
	fmt.Fprintf(&s.b, "data: %s\n\n", mustJSON(map[string]any{
		"id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT", "object": "chat.completion.chunk",
		"created": 1741569952, "model": s.model, "system_fingerprint": "fp_44709d6fcb",
		"service_tier": "default", "choices": choices, "usage": usage,
	}))
}
