package agentsdk

import (
	"encoding/json"
	"strings"
)

// Role says who a message is from.
type Role string

// The roles a message entry may have.
const (
	RoleSystem     Role = "system"
	RoleUser       Role = "user"
	RoleAssistant  Role = "assistant"
	RoleToolResult Role = "tool_result"
)

// BlockType names a kind of content block.
type BlockType string

// The content block types.
const (
	BlockText     BlockType = "text"
	BlockThinking BlockType = "thinking"
	BlockImage    BlockType = "image"
	BlockToolCall BlockType = "tool_call"
)

// Block is one piece of a message's content. Exactly the fields of its Type
// are set.
type Block struct {
	Type BlockType `json:"type"`
	// Text is the text of a text block.
	Text string `json:"text,omitempty"`
	// Thinking is a thinking block's reasoning text; Signature is the
	// provider's opaque signature over it, which only that provider can
	// verify when the block is sent back.
	Thinking  string `json:"thinking,omitempty"`
	Signature string `json:"signature,omitempty"`
	// Redacted holds a provider's redacted (encrypted) thinking.
	Redacted string `json:"redacted,omitempty"`
	// Image is an image block's picture.
	Image *Image `json:"image,omitempty"`
	// ToolCall is a tool call block's request.
	ToolCall *ToolCall `json:"toolCall,omitempty"`
}

// Image is inline image data or a URL.
type Image struct {
	MediaType string `json:"mediaType,omitempty"`
	Data      []byte `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

// ToolCall is a model's request to run a tool.
type ToolCall struct {
	// ID is unique within the execution. Providers' own IDs are normalised
	// to [A-Za-z0-9_-]{1,64} so a conversation can move between providers.
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// Message is a provider-agnostic conversation message: what one entry holds.
type Message struct {
	Role    Role    `json:"role"`
	Content []Block `json:"content"`

	// ToolCallID, ToolName and IsError are set on tool_result messages.
	ToolCallID string `json:"toolCallId,omitempty"`
	ToolName   string `json:"toolName,omitempty"`
	IsError    bool   `json:"isError,omitempty"`

	// Provider, Model, Usage and StopReason are set on assistant messages:
	// which model wrote it and how the call ended. Provider also says whose
	// thinking signatures the message carries.
	Provider   string     `json:"provider,omitempty"`
	Model      string     `json:"model,omitempty"`
	Usage      *Usage     `json:"usage,omitempty"`
	StopReason StopReason `json:"stopReason,omitempty"`
}

// TextMessage returns a message of one text block.
func TextMessage(role Role, text string) Message {
	return Message{Role: role, Content: []Block{{Type: BlockText, Text: text}}}
}

// ToolResultMessage returns the message that answers call with output.
func ToolResultMessage(call ToolCall, output string, isError bool) Message {
	return Message{
		Role:       RoleToolResult,
		Content:    []Block{{Type: BlockText, Text: output}},
		ToolCallID: call.ID,
		ToolName:   call.Name,
		IsError:    isError,
	}
}

// Text joins the message's text blocks.
func (m Message) Text() string {
	var b strings.Builder
	for _, c := range m.Content {
		if c.Type == BlockText {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

// ToolCalls returns the message's tool call blocks, in order.
func (m Message) ToolCalls() []ToolCall {
	var out []ToolCall
	for _, c := range m.Content {
		if c.Type == BlockToolCall && c.ToolCall != nil {
			out = append(out, *c.ToolCall)
		}
	}
	return out
}

// StopReason says why a model stopped.
type StopReason string

// The stop reasons every provider's are mapped to.
const (
	StopEndTurn   StopReason = "end_turn"
	StopToolUse   StopReason = "tool_use"
	StopMaxTokens StopReason = "max_tokens"
	StopSequence  StopReason = "stop_sequence"
	StopRefusal   StopReason = "refusal"
	StopOther     StopReason = "other"
)
