package providerkit

import (
	"cmp"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agentree/agentree/agentsdk"
)

// StatusError is the failure of a call the server answered with status:
// retryable as agentsdk.RetryableStatus says, after the wait resp's
// headers ask for. resp may be nil (an error sent inside a 200 stream).
func StatusError(provider string, status int, message string, resp *http.Response, err error) *agentsdk.ModelError {
	me := &agentsdk.ModelError{
		Provider:   provider,
		StatusCode: status,
		Message:    message,
		Retryable:  agentsdk.RetryableStatus(status),
		Err:        err,
	}
	if resp != nil {
		me.RetryAfter = RetryAfter(resp.Header)
	}
	return me
}

// Unanswered is the failure of a call that never got an answer — a
// refused or reset connection, a timeout, a stream cut mid-way — which is
// always worth retrying.
func Unanswered(provider string, err error) *agentsdk.ModelError {
	return &agentsdk.ModelError{Provider: provider, Message: err.Error(), Retryable: true, Err: err}
}

// Invalid is a failure found before calling the API: retrying the same
// request cannot help.
func Invalid(provider string, err error) *agentsdk.ModelError {
	return &agentsdk.ModelError{Provider: provider, Message: err.Error(), Err: err}
}

// Broken is a stream that ended cleanly but before the answer was whole;
// why says what was missing. A retry may well get the whole answer.
func Broken(provider, why string) *agentsdk.ModelError {
	return &agentsdk.ModelError{Provider: provider, Message: why, Retryable: true}
}

// ErrorMessage is what a failed call's ModelError says: the API's own
// message, else the response body (an HTML page from a proxy, say), else
// the status text.
func ErrorMessage(message, body string, status int) string {
	return cmp.Or(message, strings.TrimSpace(body), http.StatusText(status))
}

// RetryAfter is the wait the server asked for: retry-after-ms, else
// retry-after in seconds or as an HTTP date; 0 when it asked for none.
func RetryAfter(h http.Header) time.Duration {
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
