package gateway

import (
	"encoding/json"
	"net/http"
)

// The JSON of the OpenAI Responses and Conversations APIs, as the Open
// Responses specification and the official SDKs (openai-go's responses and
// conversations packages) shape it. Only what /v1 serves is here; fields a
// client may read are always present (null where the spec says nullable),
// so every SDK decodes them.

// oaResponse is a response object: one turn of a conversation.
type oaResponse struct {
	ID                 string          `json:"id"`
	Object             string          `json:"object"`
	CreatedAt          int64           `json:"created_at"`
	CompletedAt        *int64          `json:"completed_at"`
	Status             string          `json:"status"`
	Background         bool            `json:"background"`
	Error              *oaError        `json:"error"`
	IncompleteDetails  *oaIncomplete   `json:"incomplete_details"`
	Instructions       *string         `json:"instructions"`
	MaxOutputTokens    *int            `json:"max_output_tokens"`
	Metadata           json.RawMessage `json:"metadata"`
	Model              string          `json:"model"`
	Output             []oaItem        `json:"output"`
	ParallelToolCalls  bool            `json:"parallel_tool_calls"`
	PreviousResponseID *string         `json:"previous_response_id"`
	Conversation       *oaConvRef      `json:"conversation"`
	Store              bool            `json:"store"`
	Temperature        *float64        `json:"temperature"`
	TopP               *float64        `json:"top_p"`
	ToolChoice         string          `json:"tool_choice"`
	Tools              []oaTool        `json:"tools"`
	Truncation         string          `json:"truncation"`
	Usage              *oaUsage        `json:"usage"`
}

// oaConvRef names the conversation a response belongs to.
type oaConvRef struct {
	ID string `json:"id"`
}

// oaIncomplete says why a response is incomplete.
type oaIncomplete struct {
	Reason string `json:"reason"`
}

// oaTool is a tool a request offers: a function, a worker tool by name or
// a client tool (name, description and parameters) the client runs.
type oaTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Strict      *bool           `json:"strict,omitempty"`
}

// oaUsage is a response's token counts.
type oaUsage struct {
	InputTokens         int64           `json:"input_tokens"`
	InputTokensDetails  oaInputDetails  `json:"input_tokens_details"`
	OutputTokens        int64           `json:"output_tokens"`
	OutputTokensDetails oaOutputDetails `json:"output_tokens_details"`
	TotalTokens         int64           `json:"total_tokens"`
}

type oaInputDetails struct {
	CachedTokens int64 `json:"cached_tokens"`
}

type oaOutputDetails struct {
	ReasoningTokens int64 `json:"reasoning_tokens"`
}

// oaItem is one output or conversation item: a message, a worker tool's
// call (mcp_call, server side, as the spec has remote tools) or a call
// waiting for approval (mcp_approval_request).
type oaItem struct {
	Type    string   `json:"type"`
	ID      string   `json:"id"`
	Status  string   `json:"status,omitempty"`
	Role    string   `json:"role,omitempty"`
	Content []oaPart `json:"content,omitempty"`
	// mcp_call and mcp_approval_request.
	Name        string  `json:"name,omitempty"`
	Arguments   *string `json:"arguments,omitempty"`
	ServerLabel string  `json:"server_label,omitempty"`
	Output      *string `json:"output,omitempty"`
	ItemError   *string `json:"error,omitempty"`
	// function_call: a call to a client tool, answered by the client's
	// function_call_output.
	CallID string `json:"call_id,omitempty"`
}

// oaPart is a message's content part.
type oaPart struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	Annotations []any  `json:"annotations,omitempty"`
}

// outputText is an assistant's text part; annotations are always a list.
func outputText(text string) oaPart {
	return oaPart{Type: "output_text", Text: text, Annotations: []any{}}
}

// oaError is a failed response's error.
type oaError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// oaConversation is a conversation object.
type oaConversation struct {
	ID        string          `json:"id"`
	Object    string          `json:"object"`
	CreatedAt int64           `json:"created_at"`
	Metadata  json.RawMessage `json:"metadata"`
}

// oaList is a page of conversation items.
type oaList struct {
	Object  string   `json:"object"`
	Data    []oaItem `json:"data"`
	FirstID *string  `json:"first_id"`
	LastID  *string  `json:"last_id"`
	HasMore bool     `json:"has_more"`
}

// oaErrorBody is the spec's error response.
type oaErrorBody struct {
	Error oaErrorDetail `json:"error"`
}

type oaErrorDetail struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// oaEvent is one streamed event; which fields it carries depends on its
// type, the spec's event name (also the SSE event field).
type oaEvent struct {
	Type           string      `json:"type"`
	SequenceNumber int         `json:"sequence_number"`
	Response       *oaResponse `json:"response,omitempty"`
	OutputIndex    *int        `json:"output_index,omitempty"`
	ContentIndex   *int        `json:"content_index,omitempty"`
	ItemID         string      `json:"item_id,omitempty"`
	Item           *oaItem     `json:"item,omitempty"`
	Part           *oaPart     `json:"part,omitempty"`
	Delta          *string     `json:"delta,omitempty"`
	Text           *string     `json:"text,omitempty"`
	Arguments      *string     `json:"arguments,omitempty"`
	Logprobs       []any       `json:"logprobs,omitempty"`
	// error events.
	Code    string `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
}

// writeOAError writes the spec's error shape. param names the request
// field at fault ("" for none).
func writeOAError(w http.ResponseWriter, code int, typ, errCode, param, msg string) {
	body := oaErrorBody{Error: oaErrorDetail{Message: msg, Type: typ}}
	if param != "" {
		body.Error.Param = &param
	}
	if errCode != "" {
		body.Error.Code = &errCode
	}
	if code == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", retryAfter)
	}
	writeOAJSON(w, code, body)
}

// writeOAJSON writes v as JSON with status code.
func writeOAJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}
