package openai_test

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/openai"
	"github.com/agentree/agentree/agentsdk/providertest"
)

func streamErr(t *testing.T, srv *providertest.Server, p *openai.Provider) *agentsdk.ModelError {
	t.Helper()
	return providertest.StreamError(t, srv, p, request(agentsdk.TextMessage(agentsdk.RoleUser, "hi")))
}

func TestOpenAI429IsRetryableWithRetryAfter(t *testing.T) {
	srv := providertest.NewServer(t, providertest.Reply{
		Status: http.StatusTooManyRequests,
		Header: map[string]string{"retry-after": "20"},
		Body:   providertest.OpenAIErrorBody("requests", "rate_limit_exceeded", "Rate limit reached for gpt-4o"),
	})
	me := streamErr(t, srv, newProvider(t, srv))
	require.True(t, me.Retryable)
	require.Equal(t, 429, me.StatusCode)
	require.Equal(t, 20*time.Second, me.RetryAfter)
	require.Equal(t, "Rate limit reached for gpt-4o", me.Message)
}

func TestOpenAI429PrefersRetryAfterMs(t *testing.T) {
	srv := providertest.NewServer(t, providertest.Reply{
		Status: http.StatusTooManyRequests,
		Header: map[string]string{"retry-after": "20", "retry-after-ms": "250"},
		Body:   providertest.OpenAIErrorBody("requests", "rate_limit_exceeded", "slow down"),
	})
	require.Equal(t, 250*time.Millisecond, streamErr(t, srv, newProvider(t, srv)).RetryAfter)
}

func TestOpenAI400IsNotRetryableAndKeepsMessage(t *testing.T) {
	msg := "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'."
	srv := providertest.NewServer(t, providertest.Reply{
		Status: http.StatusBadRequest,
		Body:   providertest.OpenAIErrorBody("invalid_request_error", "", msg),
	})
	me := streamErr(t, srv, newProvider(t, srv))
	require.False(t, me.Retryable)
	require.Equal(t, 400, me.StatusCode)
	require.Equal(t, msg, me.Message)
}

func TestOpenAIServerErrorsAreRetryable(t *testing.T) {
	for _, status := range []int{500, 502, 503, 408, 409} {
		srv := providertest.NewServer(t, providertest.Reply{Status: status, Body: providertest.OpenAIErrorBody("server_error", "", "The server had an error")})
		me := streamErr(t, srv, newProvider(t, srv))
		require.True(t, me.Retryable, "status %d", status)
		require.Equal(t, status, me.StatusCode)
		require.Equal(t, "The server had an error", me.Message)
	}
}

func TestOpenAIErrorWithoutErrorDocumentIsClassifiedByStatus(t *testing.T) {
	srv := providertest.NewServer(t, providertest.Reply{Status: http.StatusServiceUnavailable, Body: "upstream connect error"})
	me := streamErr(t, srv, newProvider(t, srv))
	require.True(t, me.Retryable)
	require.Equal(t, 503, me.StatusCode)
	require.Equal(t, "upstream connect error", me.Message)
}

func TestOpenAIStreamedErrorIsClassified(t *testing.T) {
	srv := providertest.NewServer(t, providertest.Reply{
		Body: providertest.NewOpenAIStream(model).Text("Hel").String() +
			"data: " + providertest.OpenAIErrorBody("server_error", "", "The server had an error while processing your request.") + "\n\n",
	})
	me := streamErr(t, srv, newProvider(t, srv))
	require.True(t, me.Retryable)
	require.Equal(t, "The server had an error while processing your request.", me.Message)

	srv = providertest.NewServer(t, providertest.Reply{
		Body: "data: " + providertest.OpenAIErrorBody("invalid_request_error", "", "context too long") + "\n\n",
	})
	me = streamErr(t, srv, newProvider(t, srv))
	require.False(t, me.Retryable)
	require.Equal(t, "context too long", me.Message)
}

func TestOpenAIBrokenStreamIsRetryable(t *testing.T) {
	partial := providertest.NewOpenAIStream(model).Text("Hel", "lo").String()
	t.Run("connection dropped", func(t *testing.T) {
		srv := providertest.NewServer(t, providertest.Reply{Body: partial, Break: true})
		me := streamErr(t, srv, newProvider(t, srv))
		require.True(t, me.Retryable)
		require.Zero(t, me.StatusCode)
		require.ErrorIs(t, me, io.ErrUnexpectedEOF)
	})
	t.Run("ended before finish_reason", func(t *testing.T) {
		srv := providertest.NewServer(t, providertest.Reply{Body: partial + "data: [DONE]\n\n"})
		me := streamErr(t, srv, newProvider(t, srv))
		require.True(t, me.Retryable)
		require.Zero(t, me.StatusCode)
	})
}

func TestOpenAIConnectionRefusedIsRetryable(t *testing.T) {
	srv := providertest.NewServer(t)
	srv.Close()
	me := providertest.ModelError(t, newProvider(t, srv), request(agentsdk.TextMessage(agentsdk.RoleUser, "hi")))
	require.True(t, me.Retryable)
	require.Zero(t, me.StatusCode)
}

func TestOpenAICancelledContextReturnsContextError(t *testing.T) {
	srv := providertest.NewServer(t, providertest.Reply{
		Body: providertest.NewOpenAIStream(model).Text("a", "b", "c").Finish("stop").Done(),
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := newProvider(t, srv).Stream(ctx, request(agentsdk.TextMessage(agentsdk.RoleUser, "hi")),
		func(agentsdk.StreamEvent) { cancel() })
	require.ErrorIs(t, err, context.Canceled)
	_, isModelErr := agentsdk.AsModelError(err)
	require.False(t, isModelErr)
}

func TestOpenAIMissingAPIKeyIsNotRetryableForTheOfficialAPI(t *testing.T) {
	t.Setenv("AGENTREE_TEST_NO_KEY", "")
	p, err := openai.New(openai.Options{APIKeyEnv: "AGENTREE_TEST_NO_KEY"})
	require.NoError(t, err)
	me := providertest.ModelError(t, p, request(agentsdk.TextMessage(agentsdk.RoleUser, "hi")))
	require.False(t, me.Retryable)
	require.ErrorIs(t, me, agentsdk.ErrInvalidInput)
	require.Contains(t, me.Message, "AGENTREE_TEST_NO_KEY")
}
