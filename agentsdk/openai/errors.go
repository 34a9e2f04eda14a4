package openai

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/agentree/agentree/agentsdk"
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
		me := &agentsdk.ModelError{
			Provider:   p.opts.Name,
			StatusCode: apiErr.StatusCode,
			Message:    errorMessage(apiErr),
			Retryable:  agentsdk.RetryableStatus(apiErr.StatusCode),
			Err:        err,
		}
		if apiErr.Response != nil {
			me.RetryAfter = retryAfter(apiErr.Response.Header)
		}
		return me
	case errors.As(err, &streamErr):
		status, msg := streamedError(streamErr.Event.Data)
		return &agentsdk.ModelError{Provider: p.opts.Name, StatusCode: status, Message: msg,
			Retryable: agentsdk.RetryableStatus(status), Err: err}
	}
	return &agentsdk.ModelError{Provider: p.opts.Name, Message: err.Error(), Retryable: true, Err: err}
}

// errorMessage is the message of the error document, else the body, else
// the status text. The SDK keeps the body on the response for this.
func errorMessage(e *openai.Error) string {
	if e.Message != "" {
		return e.Message
	}
	if e.Response != nil && e.Response.Body != nil {
		body, _ := io.ReadAll(io.LimitReader(e.Response.Body, 4<<10))
		if s := strings.TrimSpace(string(body)); s != "" {
			return s
		}
	}
	return http.StatusText(e.StatusCode)
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
	return status, firstNonEmpty(doc.Error.Message, string(data))
}

// invalid wraps a failure found before calling the API: retrying the same
// request cannot help.
func (p *Provider) invalid(err error) error {
	return &agentsdk.ModelError{Provider: p.opts.Name, Message: err.Error(), Err: err}
}

func (p *Provider) brokenStream() error {
	return &agentsdk.ModelError{Provider: p.opts.Name, Message: "stream ended before a finish_reason", Retryable: true}
}

// retryAfter is the wait the server asked for: retry-after-ms, else
// retry-after in seconds or as an HTTP date.
func retryAfter(h http.Header) time.Duration {
	if ms, err := strconv.ParseFloat(h.Get("retry-after-ms"), 64); err == nil && ms > 0 {
		return time.Duration(ms * float64(time.Millisecond))
	}
	v := h.Get("retry-after")
	if s, err := strconv.ParseFloat(v, 64); err == nil && s > 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}
