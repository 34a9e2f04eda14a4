package event

import "encoding/json"

// Payload types of a data event.
const (
	// Model deltas (seed 000), streamed while the model answers.
	TypeThinkingDelta = "thinking_delta"
	TypeToolCallStart = "tool_call_start"
	TypeToolCallDelta = "tool_call_delta"
	TypeToolCallEnd   = "tool_call_end"
	// TypeToolResult: a tool call's outcome, after it ran (Agentree's
	// addition: seed 000's tool_call_end with a result).
	TypeToolResult = "tool_result"
	// TypeTerminal: output of a command as it runs (seed 000).
	TypeTerminal = "terminal"
	// TypeCustom: an agent's own value (Context.StreamData) in Value.
	TypeCustom = "custom"
	// TypeModelDowngraded: a model call goes to a cheaper model than the
	// one asked for (Downgrade says which and why), before its deltas.
	TypeModelDowngraded = "model_downgraded"
)

// Payload is a data event's payload. Type says which fields are set.
type Payload struct {
	Type string `json:"type"`
	// Text is thinking text (thinking_delta).
	Text string `json:"text,omitempty"`
	// ToolCall is the call a tool_call_* or tool_result payload is about;
	// Arguments are set once complete (tool_call_end).
	ToolCall *ToolCall `json:"tool_call,omitempty"`
	// Delta is partial tool-call arguments (tool_call_delta).
	Delta string `json:"delta,omitempty"`
	// Result is a tool call's outcome (tool_result).
	Result *ToolResult `json:"result,omitempty"`
	// Stream (stdout or stderr) and Output are terminal output.
	Stream string `json:"stream,omitempty"`
	Output string `json:"data,omitempty"`
	// Value is an agent's own value (custom).
	Value json.RawMessage `json:"value,omitempty"`
	// Downgrade is the model a call went to instead (model_downgraded).
	Downgrade *Downgrade `json:"downgrade,omitempty"`
}

// Downgrade is a model call sent to a cheaper model: Model ("provider/
// modelId") instead of From, for Reason ("budget").
type Downgrade struct {
	Model  string `json:"model"`
	From   string `json:"from"`
	Reason string `json:"reason"`
}

// ToolCall names a tool call.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// ToolResult is a tool call's outcome as a stream shows it: a preview,
// never the whole output.
type ToolResult struct {
	IsError   bool   `json:"isError"`
	Preview   string `json:"preview,omitempty"`
	Truncated bool   `json:"truncated,omitempty"`
}

// Custom wraps an agent's own value as a data payload; a Payload is kept
// as it is.
func Custom(v any) (Payload, error) {
	switch p := v.(type) {
	case Payload:
		return p, nil
	case *Payload:
		return *p, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return Payload{}, err
	}
	return Payload{Type: TypeCustom, Value: b}, nil
}
