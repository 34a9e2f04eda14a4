package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// oaRequest is a POST /v1/responses body, as far as it is served.
type oaRequest struct {
	Model              string            `json:"model"`
	Input              json.RawMessage   `json:"input"`
	Instructions       *string           `json:"instructions"`
	PreviousResponseID string            `json:"previous_response_id"`
	Conversation       json.RawMessage   `json:"conversation"`
	Stream             bool              `json:"stream"`
	Background         bool              `json:"background"`
	Store              *bool             `json:"store"`
	Metadata           map[string]string `json:"metadata"`
	Tools              []oaTool          `json:"tools"`
	MaxOutputTokens    *int              `json:"max_output_tokens"`
	Temperature        *float64          `json:"temperature"`

	// Read from Input.
	text      string
	approvals []oaApproval
	outputs   []oaToolOutput
	// conversation is Conversation's ID.
	conversation string
}

// oaApproval is an mcp_approval_response input item.
type oaApproval struct {
	RequestID string
	Approve   bool
	Reason    string
}

// oaToolOutput is a function_call_output input item: a client tool
// call's output.
type oaToolOutput struct {
	CallID string
	Output string
}

// servedParams are the request fields the server honours; acceptedAsDefault
// are those it takes only with the value it behaves as anyway (any other is
// a 400 naming the field); every other field, known to the spec or not, is
// a 400 naming it: a client never gets a response that silently ignored
// what it asked for.
var (
	servedParams = []string{"model", "input", "instructions", "previous_response_id", "conversation", "stream",
		"background", "store", "metadata", "tools", "max_output_tokens", "temperature"}
	acceptedAsDefault = map[string]string{
		"parallel_tool_calls": "true",
		"tool_choice":         `"auto"`,
		"truncation":          `"disabled"`,
		"include":             "[]",
		"text":                `{"format":{"type":"text"}}`,
		"top_p":               "1",
	}
)

// decodeResponseRequest reads and checks a request body.
func decodeResponseRequest(body []byte) (*oaRequest, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		return nil, badParam("", "the request body must be a JSON object")
	}
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		v := fields[name]
		if string(v) == "null" || slices.Contains(servedParams, name) {
			continue
		}
		if def, ok := acceptedAsDefault[name]; ok {
			if equalJSON(v, []byte(def)) {
				continue
			}
			return nil, badParam(name, "%s is supported only as %s on this server", name, def)
		}
		return nil, badParam(name, "%s is not supported by this server (see README \"OpenAI-compatible API\")", name)
	}
	req := &oaRequest{}
	if err := json.Unmarshal(body, req); err != nil {
		return nil, badParam(fieldOf(err), "%s", describeJSONError(err))
	}
	if req.Store != nil && !*req.Store {
		return nil, badParam("store", "store: false is not supported: every response is a durable turn of its conversation")
	}
	if req.Stream && req.Background {
		return nil, badParam("stream", "stream and background cannot both be true here: create the response with background, then poll it")
	}
	if req.MaxOutputTokens != nil && *req.MaxOutputTokens <= 0 {
		return nil, badParam("max_output_tokens", "max_output_tokens must be positive")
	}
	if err := req.readConversation(); err != nil {
		return nil, err
	}
	if req.conversation != "" && req.PreviousResponseID != "" {
		return nil, badParam("conversation", "conversation and previous_response_id cannot both be given")
	}
	if err := req.readInput(); err != nil {
		return nil, err
	}
	if k := conversationMetadataKey; req.Metadata[k] != "" {
		return nil, badParam("metadata", "metadata key %q is reserved", k)
	}
	return req, nil
}

// equalJSON compares two JSON values by meaning.
func equalJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// fieldOf is the field a decoding error is about.
func fieldOf(err error) string {
	if te, ok := err.(*json.UnmarshalTypeError); ok {
		return te.Field
	}
	return ""
}

// describeJSONError says what was wrong without Go's type names.
func describeJSONError(err error) string {
	if te, ok := err.(*json.UnmarshalTypeError); ok {
		return fmt.Sprintf("%s must not be a JSON %s", te.Field, te.Value)
	}
	return "the request body is not valid JSON"
}

// readConversation reads conversation, a string or {"id": …}.
func (r *oaRequest) readConversation() error {
	if len(r.Conversation) == 0 || string(r.Conversation) == "null" {
		return nil
	}
	if json.Unmarshal(r.Conversation, &r.conversation) == nil {
		return nil
	}
	var obj struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(r.Conversation, &obj); err != nil || obj.ID == "" {
		return badParam("conversation", `conversation must be a conversation ID or {"id": "<conversation ID>"}`)
	}
	r.conversation = obj.ID
	return nil
}

// inputItem is one item of an input list.
type inputItem struct {
	Type              string          `json:"type"`
	Role              string          `json:"role"`
	Content           json.RawMessage `json:"content"`
	ApprovalRequestID string          `json:"approval_request_id"`
	Approve           *bool           `json:"approve"`
	Reason            string          `json:"reason"`
	CallID            string          `json:"call_id"`
	Output            json.RawMessage `json:"output"`
}

// readInput reads input: a string, or a list of user messages (their text
// joined), of mcp_approval_response items or of function_call_output
// items. Earlier turns are in the
// tree, so other roles and item types are refused rather than taken for
// history.
func (r *oaRequest) readInput() error {
	if len(r.Input) == 0 || string(r.Input) == "null" {
		return badParam("input", "input is required")
	}
	if json.Unmarshal(r.Input, &r.text) == nil {
		if strings.TrimSpace(r.text) == "" {
			return badParam("input", "input must not be empty")
		}
		return nil
	}
	var items []inputItem
	if err := json.Unmarshal(r.Input, &items); err != nil {
		return badParam("input", "input must be a string or a list of input items")
	}
	var texts []string
	for i, it := range items {
		p := fmt.Sprintf("input[%d]", i)
		switch it.Type {
		case "", "message":
			if it.Role != "user" {
				return badParam(p+".role", "%s.role %q is not supported: send user messages only (earlier turns are kept by the server; instructions go in instructions)", p, it.Role)
			}
			t, err := messageText(it.Content, p+".content")
			if err != nil {
				return err
			}
			texts = append(texts, t)
		case "mcp_approval_response":
			if it.ApprovalRequestID == "" || it.Approve == nil {
				return badParam(p, "%s needs approval_request_id and approve", p)
			}
			r.approvals = append(r.approvals, oaApproval{RequestID: it.ApprovalRequestID, Approve: *it.Approve, Reason: it.Reason})
		case "function_call_output":
			var out string
			if it.CallID == "" || json.Unmarshal(it.Output, &out) != nil {
				return badParam(p, "%s needs call_id and output, a string", p)
			}
			r.outputs = append(r.outputs, oaToolOutput{CallID: it.CallID, Output: out})
		default:
			return badParam(p+".type", "input item type %q is not supported", it.Type)
		}
	}
	r.text = strings.Join(texts, "\n\n")
	switch {
	case len(r.approvals) > 0 && r.text != "":
		return badParam("input", "send approval responses without messages: the turn they continue answers first")
	case len(r.outputs) > 0 && (r.text != "" || len(r.approvals) > 0):
		return badParam("input", "send function_call_output items alone: the turn they continue answers first")
	case len(r.approvals) == 0 && len(r.outputs) == 0 && strings.TrimSpace(r.text) == "":
		return badParam("input", "input has no text")
	}
	return nil
}

// messageText is a user message's content: a string or input_text parts.
func messageText(content json.RawMessage, param string) (string, error) {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(content, &parts); err != nil {
		return "", badParam(param, "%s must be a string or a list of input_text parts", param)
	}
	var texts []string
	for i, p := range parts {
		if p.Type != "input_text" {
			return "", badParam(fmt.Sprintf("%s[%d].type", param, i), "content part type %q is not supported: only input_text", p.Type)
		}
		texts = append(texts, p.Text)
	}
	return strings.Join(texts, "\n"), nil
}
