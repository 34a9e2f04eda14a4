package providertest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
)

// Stream calls p with req and returns its answer and the events it
// streamed, in order; the test fails if the call does.
func Stream(t testing.TB, p agentsdk.Provider, req agentsdk.ModelRequest) (agentsdk.Message, []agentsdk.StreamEvent) {
	t.Helper()
	var events []agentsdk.StreamEvent
	resp, err := p.Stream(context.Background(), req, func(e agentsdk.StreamEvent) { events = append(events, e) })
	require.NoError(t, err)
	return resp.Message, events
}

// StreamError calls p with req and returns the *agentsdk.ModelError it
// fails with. srv must have received exactly one request: the SDKs must
// not retry, Temporal does.
func StreamError(t testing.TB, srv *Server, p agentsdk.Provider, req agentsdk.ModelRequest) *agentsdk.ModelError {
	t.Helper()
	me := ModelError(t, p, req)
	require.Len(t, srv.Requests(), 1, "the SDK must not retry: Temporal does")
	return me
}

// ModelError calls p with req and returns the *agentsdk.ModelError it
// fails with, which must name p.
func ModelError(t testing.TB, p agentsdk.Provider, req agentsdk.ModelRequest) *agentsdk.ModelError {
	t.Helper()
	_, err := p.Stream(context.Background(), req, nil)
	require.Error(t, err)
	me, ok := agentsdk.AsModelError(err)
	require.True(t, ok, "want a *agentsdk.ModelError, got %T: %v", err, err)
	require.Equal(t, p.Name(), me.Provider)
	return me
}
