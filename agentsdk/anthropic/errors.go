package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go"

	"github.com/agentree/agentree/agentsdk"
)

// modelError classifies a failed call. An HTTP answer is retryable by its
// status; an error event inside a 200 stream by its error type. Anything
// else never got an answer — refused or reset connections, timeouts, a
// stream cut mid-way — and is retryable.
func (p *Provider) modelError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) {
		return &agentsdk.ModelError{Provider: p.opts.Name, Message: err.Error(), Retryable: true, Err: err}
	}
	status := apiErr.StatusCode
	if status < http.StatusBadRequest {
		status = streamedErrorStatus(apiErr.Type())
	}
	me := &agentsdk.ModelError{
		Provider:   p.opts.Name,
		StatusCode: status,
		Message:    errorMessage(apiErr.RawJSON(), status),
		Retryable:  agentsdk.RetryableStatus(status),
		Err:        err,
	}
	if apiErr.Response != nil {
		me.RetryAfter = retryAfter(apiErr.Response.Header)
	}
	return me
}

// invalid wraps a failure found before calling the API: retrying the same
// request cannot help.
func (p *Provider) invalid(err error) error {
	return &agentsdk.ModelError{Provider: p.opts.Name, Message: err.Error(), Err: err}
}

func (p *Provider) brokenStream() error {
	return &agentsdk.ModelError{Provider: p.opts.Name, Message: "stream ended before message_stop", Retryable: true}
}

// streamedErrorStatus is the HTTP status the API uses for an error type,
// for errors that arrive as a stream event after a 200.
func streamedErrorStatus(t anthropic.ErrorType) int {
	switch t {
	case "invalid_request_error":
		return http.StatusBadRequest
	case "authentication_error":
		return http.StatusUnauthorized
	case "permission_error":
		return http.StatusForbidden
	case "not_found_error":
		return http.StatusNotFound
	case "request_too_large":
		return http.StatusRequestEntityTooLarge
	case "rate_limit_error":
		return http.StatusTooManyRequests
	case "timeout_error":
		return http.StatusGatewayTimeout
	case "overloaded_error":
		return 529
	}
	return http.StatusInternalServerError // api_error, or one not known yet
}

// errorMessage is the message of the API's error document
// {"type":"error","error":{"type":…,"message":…}}, or the body itself when
// it is not one.
func errorMessage(body string, status int) string {
	var doc struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(body), &doc) == nil && doc.Error.Message != "" {
		return doc.Error.Message
	}
	if body = strings.TrimSpace(body); body != "" {
		return body
	}
	return http.StatusText(status)
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
