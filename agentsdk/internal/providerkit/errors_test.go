package providerkit_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/internal/providerkit"
)

func header(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}

func TestRetryAfter(t *testing.T) {
	for name, c := range map[string]struct {
		h    http.Header
		want time.Duration
	}{
		"none":                   {nil, 0},
		"seconds":                {header("Retry-After", "7"), 7 * time.Second},
		"fractional seconds":     {header("Retry-After", "1.5"), 1500 * time.Millisecond},
		"milliseconds preferred": {header("Retry-After", "7", "Retry-After-Ms", "1500"), 1500 * time.Millisecond},
		"bad milliseconds":       {header("Retry-After", "2", "Retry-After-Ms", "soon"), 2 * time.Second},
		"zero":                   {header("Retry-After", "0"), 0},
		"negative":               {header("Retry-After", "-3"), 0},
		"garbage":                {header("Retry-After", "later"), 0},
		"past date":              {header("Retry-After", "Mon, 02 Jan 2006 15:04:05 GMT"), 0},
	} {
		require.Equal(t, c.want, providerkit.RetryAfter(c.h), name)
	}
}

func TestRetryAfterHTTPDate(t *testing.T) {
	at := time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)
	got := providerkit.RetryAfter(header("Retry-After", at))
	require.Greater(t, got, 58*time.Minute)
	require.LessOrEqual(t, got, time.Hour)
}

func TestStatusErrorIsRetryableByStatus(t *testing.T) {
	cause := errors.New("sdk error")
	resp := &http.Response{Header: header("Retry-After", "3")}
	me := providerkit.StatusError("p", http.StatusTooManyRequests, "slow down", resp, cause)
	require.Equal(t, &agentsdk.ModelError{Provider: "p", StatusCode: 429, Message: "slow down", Retryable: true, RetryAfter: 3 * time.Second, Err: cause}, me)
	require.ErrorIs(t, me, cause)

	me = providerkit.StatusError("p", http.StatusBadRequest, "bad", nil, cause)
	require.False(t, me.Retryable)
	require.Zero(t, me.RetryAfter)
	require.True(t, providerkit.StatusError("p", 529, "overloaded", nil, cause).Retryable)
}

func TestFailuresBeforeAndWithoutAnAnswer(t *testing.T) {
	unanswered := providerkit.Unanswered("p", io.ErrUnexpectedEOF)
	require.True(t, unanswered.Retryable)
	require.Zero(t, unanswered.StatusCode)
	require.ErrorIs(t, unanswered, io.ErrUnexpectedEOF)
	require.Equal(t, io.ErrUnexpectedEOF.Error(), unanswered.Message)

	bad := fmt.Errorf("%w: no model ID", agentsdk.ErrInvalidInput)
	invalid := providerkit.Invalid("p", bad)
	require.False(t, invalid.Retryable)
	require.ErrorIs(t, invalid, agentsdk.ErrInvalidInput)
	require.Equal(t, "p: invalid input: no model ID", invalid.Error())

	broken := providerkit.Broken("p", "stream ended early")
	require.Equal(t, &agentsdk.ModelError{Provider: "p", Message: "stream ended early", Retryable: true}, broken)
	require.NoError(t, broken.Unwrap())
}

func TestErrorMessagePrefersTheAPIsOwn(t *testing.T) {
	require.Equal(t, "prompt too long", providerkit.ErrorMessage("prompt too long", "{...}", 400))
	require.Equal(t, "<html>bad gateway</html>", providerkit.ErrorMessage("", " <html>bad gateway</html>\n", 502))
	require.Equal(t, "Service Unavailable", providerkit.ErrorMessage("", " \n", 503))
}
