package agentsdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// ModelRef names one model of one provider and, optionally, which of the
// worker's endpoints for that provider serves it. It never says where the
// endpoint is or which key it takes: URLs, keys and prices are worker
// configuration (see Endpoints), so nothing a tenant sends can make a
// worker reach a new host, read a secret or price a call its own way.
type ModelRef struct {
	Provider string `json:"provider"`
	ModelID  string `json:"modelId"`
	// Endpoint names one of the worker's endpoints of this provider;
	// "" = the first one the worker declares.
	Endpoint string `json:"endpoint,omitempty"`
}

// Key is "provider/modelId", the key usage is tracked by.
func (m ModelRef) Key() string { return m.Provider + "/" + m.ModelID }

// ToolSpec is what a model is told about a tool.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"` // JSON Schema of the arguments object
}

// ModelRequest is one call to a model.
type ModelRequest struct {
	Model       ModelRef
	System      string
	Messages    []Message
	Tools       []ToolSpec
	MaxTokens   int
	Temperature *float64
	// ThinkingBudget enables extended thinking with this many tokens where
	// the model supports it; 0 disables it.
	ThinkingBudget int
	// ThinkingByDefault says ThinkingBudget is the default
	// (Config.Thinking), not the configuration's: a provider enables it
	// only for the models it knows to think, so a default never makes a
	// request a model refuses.
	ThinkingByDefault bool
}

// ModelResponse is a model's complete answer.
type ModelResponse struct {
	Message Message // role assistant; Provider, Model, Usage, StopReason set
}

// StreamEventType names a streamed delta.
type StreamEventType string

// The kinds of delta a provider streams while it answers.
const (
	StreamText          StreamEventType = "token"
	StreamThinking      StreamEventType = "thinking_delta"
	StreamToolCallStart StreamEventType = "tool_call_start"
	StreamToolCallDelta StreamEventType = "tool_call_delta"
	StreamToolCallEnd   StreamEventType = "tool_call_end"
)

// StreamEvent is one delta of a streaming answer.
type StreamEvent struct {
	Type     StreamEventType `json:"type"`
	Text     string          `json:"text,omitempty"`
	ToolCall *ToolCall       `json:"toolCall,omitempty"` // ID and Name; Arguments when complete
	Delta    string          `json:"delta,omitempty"`    // partial tool-call arguments
}

// StreamFunc receives deltas as they arrive. It must not block for long.
type StreamFunc func(StreamEvent)

// Provider calls one vendor's models. Implementations stream deltas to
// onEvent and return the whole message; they never retry (Temporal does)
// and return *ModelError for failures so retries are classified right.
type Provider interface {
	// Name is the provider name used in ModelRef.Provider.
	Name() string
	Stream(ctx context.Context, req ModelRequest, onEvent StreamFunc) (ModelResponse, error)
}

// ModelError is a classified provider failure.
type ModelError struct {
	Provider   string
	StatusCode int // HTTP status; 0 for network errors
	Message    string
	Retryable  bool
	// RetryAfter is the server's requested wait, when it sent one.
	RetryAfter time.Duration
	Err        error
}

func (e *ModelError) Error() string {
	if e.StatusCode != 0 {
		return fmt.Sprintf("%s: status %d: %s", e.Provider, e.StatusCode, e.Message)
	}
	return fmt.Sprintf("%s: %s", e.Provider, e.Message)
}

func (e *ModelError) Unwrap() error { return e.Err }

// RetryableStatus reports whether an HTTP status is worth retrying: 408,
// 409, 429 and every 5xx.
func RetryableStatus(code int) bool {
	return code == 408 || code == 409 || code == 429 || code >= 500
}

// AsModelError returns err's *ModelError, if it has one.
func AsModelError(err error) (*ModelError, bool) {
	var me *ModelError
	ok := errors.As(err, &me)
	return me, ok
}

// Providers finds a provider by name.
type Providers map[string]Provider

// Get returns the named provider or an error naming the known ones.
func (p Providers) Get(name string) (Provider, error) {
	if pr, ok := p[name]; ok {
		return pr, nil
	}
	known := make([]string, 0, len(p))
	for k := range p {
		known = append(known, k)
	}
	return nil, fmt.Errorf("%w: unknown model provider %q (known: %v)", ErrInvalidInput, name, known)
}

// ErrInvalidInput marks errors caused by bad input: retrying will not help.
var ErrInvalidInput = errors.New("invalid input")
