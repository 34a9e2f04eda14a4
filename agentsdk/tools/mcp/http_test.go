package mcp_test

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentree/agentree/agentsdk/tools/mcp"
	"github.com/agentree/agentree/internal/mcptest"
)

// TestMCPToolsOverStreamableHTTP serves the test server over streamable
// HTTP in process: the configured headers reach it, calls answer, and a
// server restart that forgets its sessions is survived.
func TestMCPToolsOverStreamableHTTP(t *testing.T) {
	newHandler := func() http.Handler {
		s := mcptest.NewServer(mcptest.Options{})
		return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
	}
	var handler atomic.Pointer[http.Handler]
	h := newHandler()
	handler.Store(&h)
	var requests, unauthorized atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.Header.Get("Authorization") != "Bearer t0ken" {
			unauthorized.Add(1)
			http.Error(w, "who are you?", http.StatusUnauthorized)
			return
		}
		(*handler.Load()).ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	tools := connect(t, mcp.Options{Servers: []mcp.Server{{
		Name: "web", URL: srv.URL, Headers: map[string]string{"Authorization": "Bearer t0ken"},
	}}})
	require.Contains(t, tools.Names(), "web__add")
	require.NotContains(t, tools.Names(), "web__crash")
	out, err := call(t, tools, "web__add", `{"a":20,"b":22}`)
	require.NoError(t, err)
	require.Equal(t, "42", out)
	_, err = call(t, tools, "web__fail", `{"reason":"over HTTP"}`)
	require.EqualError(t, err, "cannot comply: over HTTP")
	require.Positive(t, requests.Load())
	require.Zero(t, unauthorized.Load(), "every request carried the configured header")

	// The server restarts: a new handler that knows none of the old
	// sessions.
	h = newHandler()
	handler.Store(&h)
	_, err = call(t, tools, "web__add", `{"a":1,"b":2}`)
	require.ErrorContains(t, err, "MCP server web stopped during the call")
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		out, err := call(t, tools, "web__add", `{"a":1,"b":2}`)
		require.NoError(c, err)
		require.Equal(c, "3", out)
	}, 30*time.Second, 50*time.Millisecond)
}
