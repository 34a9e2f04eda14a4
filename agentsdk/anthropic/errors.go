package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/anthropics/anthropic-sdk-go"

	"github.com/agentree/agentree/agentsdk/internal/providerkit"
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
		return providerkit.Unanswered(p.opts.Name, err)
	}
	status := apiErr.StatusCode
	if status < http.StatusBadRequest {
		status = streamedErrorStatus(apiErr.Type())
	}
	return providerkit.StatusError(p.opts.Name, status, errorMessage(apiErr.RawJSON(), status), apiErr.Response, err)
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
// {"type":"error","error":{"type":…,"message":…}}, else the body itself,
// else the status text.
func errorMessage(body string, status int) string {
	var doc struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	var msg string
	if json.Unmarshal([]byte(body), &doc) == nil {
		msg = doc.Error.Message
	}
	return providerkit.ErrorMessage(msg, body, status)
}
