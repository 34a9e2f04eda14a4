package openai

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/agentree/agentree/agentsdk/internal/providerkit"
)

// modelError classifies a failed call. An HTTP answer is retryable by its
// status; an error document inside a 200 stream by its code or type.
// Anything else never got an answer — refused or reset connections,
// timeouts, a stream cut mid-way — and is retryable.
func (p *Provider) modelError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var apiErr *openai.Error
	var streamErr *ssestream.StreamError
	switch {
	case errors.As(err, &apiErr):
		return providerkit.StatusError(p.opts.Name, apiErr.StatusCode, errorMessage(apiErr), apiErr.Response, err)
	case errors.As(err, &streamErr):
		status, msg := streamedError(streamErr.Event.Data)
		return providerkit.StatusError(p.opts.Name, status, msg, nil, err)
	}
	return providerkit.Unanswered(p.opts.Name, err)
}

// errorMessage is the message of the error document, else the body, else
// the status text. The SDK keeps the body on the response for this; it is
// read only when the document had no message.
func errorMessage(e *openai.Error) string {
	var body []byte
	if e.Message == "" && e.Response != nil && e.Response.Body != nil {
		body, _ = io.ReadAll(io.LimitReader(e.Response.Body, 4<<10))
	}
	return providerkit.ErrorMessage(e.Message, string(body), e.StatusCode)
}

// streamedError reads {"error":{"message","type","code"}} sent as a chunk.
// Its status is the code when that is an HTTP status (vLLM sends one),
// 400 for an invalid_request_error, and 500 otherwise.
func streamedError(data []byte) (int, string) {
	var doc struct {
		Error struct {
			Message string          `json:"message"`
			Type    string          `json:"type"`
			Code    json.RawMessage `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(data, &doc) != nil {
		return http.StatusInternalServerError, string(data)
	}
	status := http.StatusInternalServerError
	if code, err := strconv.Atoi(string(doc.Error.Code)); err == nil && code >= 400 && code < 600 {
		status = code
	} else if doc.Error.Type == "invalid_request_error" {
		status = http.StatusBadRequest
	}
	return status, cmp.Or(doc.Error.Message, string(data))
}
