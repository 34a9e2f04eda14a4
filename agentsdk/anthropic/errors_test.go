package anthropic_test

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/anthropic"
	"github.com/agentree/agentree/agentsdk/providertest"
)

func streamErr(t *testing.T, srv *providertest.Server, p *anthropic.Provider) *agentsdk.ModelError {
	t.Helper()
	return providertest.StreamError(t, srv, p, request(agentsdk.TextMessage(agentsdk.RoleUser, "hi")))
}

func TestAnthropic429IsRetryableWithRetryAfter(t *testing.T) {
	srv := providertest.NewServer(t, providertest.Reply{
		Status: http.StatusTooManyRequests,
		Header: map[string]string{"retry-after": "7"},
		Body:   providertest.AnthropicErrorBody("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"),
	})
	me := streamErr(t, srv, newProvider(t, srv))
	require.True(t, me.Retryable)
	require.Equal(t, 429, me.StatusCode)
	require.Equal(t, 7*time.Second, me.RetryAfter)
	require.Equal(t, "Number of request tokens has exceeded your per-minute rate limit", me.Message)
}

func TestAnthropic429PrefersRetryAfterMs(t *testing.T) {
	srv := providertest.NewServer(t, providertest.Reply{
		Status: http.StatusTooManyRequests,
		Header: map[string]string{"retry-after": "7", "retry-after-ms": "1500"},
		Body:   providertest.AnthropicErrorBody("rate_limit_error", "slow down"),
	})
	require.Equal(t, 1500*time.Millisecond, streamErr(t, srv, newProvider(t, srv)).RetryAfter)
}

func TestAnthropic400IsNotRetryableAndKeepsMessage(t *testing.T) {
	msg := "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`."
	srv := providertest.NewServer(t, providertest.Reply{
		Status: http.StatusBadRequest,
		Body:   providertest.AnthropicErrorBody("invalid_request_error", msg),
	})
	me := streamErr(t, srv, newProvider(t, srv))
	require.False(t, me.Retryable)
	require.Equal(t, 400, me.StatusCode)
	require.Equal(t, msg, me.Message)
}

func TestAnthropicServerErrorsAreRetryable(t *testing.T) {
	for _, c := range []struct {
		status int
		typ    string
	}{{500, "api_error"}, {529, "overloaded_error"}, {503, "api_error"}, {408, "timeout_error"}, {409, "api_error"}} {
		srv := providertest.NewServer(t, providertest.Reply{Status: c.status, Body: providertest.AnthropicErrorBody(c.typ, "Internal server error")})
		me := streamErr(t, srv, newProvider(t, srv))
		require.True(t, me.Retryable, "status %d", c.status)
		require.Equal(t, c.status, me.StatusCode)
		require.Equal(t, "Internal server error", me.Message)
		require.Zero(t, me.RetryAfter)
	}
}

func TestAnthropicNonJSONErrorBodyIsKept(t *testing.T) {
	srv := providertest.NewServer(t, providertest.Reply{Status: http.StatusBadGateway, Body: "<html>bad gateway</html>"})
	me := streamErr(t, srv, newProvider(t, srv))
	require.True(t, me.Retryable)
	require.Equal(t, 502, me.StatusCode)
	require.Equal(t, "<html>bad gateway</html>", me.Message)
}

func TestAnthropicStreamedOverloadedErrorIsRetryable(t *testing.T) {
	srv := providertest.NewServer(t, providertest.Reply{
		Body: providertest.NewAnthropicStream(model, providertest.AnthropicUsage{}).Text("Hel").Error("overloaded_error", "Overloaded"),
	})
	me := streamErr(t, srv, newProvider(t, srv))
	require.True(t, me.Retryable)
	require.Equal(t, 529, me.StatusCode)
	require.Equal(t, "Overloaded", me.Message)
}

func TestAnthropicStreamedInvalidRequestErrorIsNotRetryable(t *testing.T) {
	srv := providertest.NewServer(t, providertest.Reply{
		Body: providertest.NewAnthropicStream(model, providertest.AnthropicUsage{}).Error("invalid_request_error", "prompt is too long"),
	})
	me := streamErr(t, srv, newProvider(t, srv))
	require.False(t, me.Retryable)
	require.Equal(t, "prompt is too long", me.Message)
}

func TestAnthropicBrokenStreamIsRetryable(t *testing.T) {
	partial := providertest.NewAnthropicStream(model, providertest.AnthropicUsage{}).Text("Hel", "lo").String()
	t.Run("connection dropped", func(t *testing.T) {
		srv := providertest.NewServer(t, providertest.Reply{Body: partial, Break: true})
		me := streamErr(t, srv, newProvider(t, srv))
		require.True(t, me.Retryable)
		require.Zero(t, me.StatusCode)
		require.ErrorIs(t, me, io.ErrUnexpectedEOF)
	})
	t.Run("ended before message_stop", func(t *testing.T) {
		srv := providertest.NewServer(t, providertest.Reply{Body: partial})
		me := streamErr(t, srv, newProvider(t, srv))
		require.True(t, me.Retryable)
		require.Zero(t, me.StatusCode)
	})
}

func TestAnthropicConnectionRefusedIsRetryable(t *testing.T) {
	srv := providertest.NewServer(t)
	srv.Close()
	p := newProvider(t, srv)
	me := providertest.ModelError(t, p, request(agentsdk.TextMessage(agentsdk.RoleUser, "hi")))
	require.True(t, me.Retryable)
	require.Zero(t, me.StatusCode)
}

func TestAnthropicCancelledContextReturnsContextError(t *testing.T) {
	srv := providertest.NewServer(t, providertest.Reply{
		Body: providertest.NewAnthropicStream(model, providertest.AnthropicUsage{}).Text("a", "b", "c").End("end_turn", 3),
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := newProvider(t, srv).Stream(ctx, request(agentsdk.TextMessage(agentsdk.RoleUser, "hi")),
		func(agentsdk.StreamEvent) { cancel() })
	require.ErrorIs(t, err, context.Canceled)
	_, isModelErr := agentsdk.AsModelError(err)
	require.False(t, isModelErr)
}

func TestAnthropicMissingAPIKeyIsNotRetryable(t *testing.T) {
	t.Setenv("AGENTREE_TEST_NO_KEY", "")
	p, err := anthropic.New(anthropic.Options{APIKeyEnv: "AGENTREE_TEST_NO_KEY"})
	require.NoError(t, err)
	me := providertest.ModelError(t, p, request(agentsdk.TextMessage(agentsdk.RoleUser, "hi")))
	require.False(t, me.Retryable)
	require.ErrorIs(t, me, agentsdk.ErrInvalidInput)
	require.Contains(t, me.Message, "AGENTREE_TEST_NO_KEY")
}
