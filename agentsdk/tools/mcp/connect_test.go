package mcp_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk/tools/mcp"
)

func TestToolNamesSuitEveryProvider(t *testing.T) {
	require.Equal(t, "github__create_issue", mcp.ToolName("github", "create_issue"))
	require.Equal(t, "fs__files_read", mcp.ToolName("fs", "files.read"))
	require.Equal(t, "fs__a_b_c", mcp.ToolName("fs", "a/b c"))
	long := mcp.ToolName("server", strings.Repeat("x", 100))
	require.Len(t, long, 64)
	require.Regexp(t, `^server__x+_[0-9a-f]{8}$`, long)
	require.NotEqual(t, long, mcp.ToolName("server", strings.Repeat("x", 101)), "names cut alike differ by their hash")
	require.Equal(t, long, mcp.ToolName("server", strings.Repeat("x", 100)), "stable")
}

// A server that cannot be started or does not answer stops Connect,
// naming it.
func TestConnectFailsNamingTheServer(t *testing.T) {
	for name, c := range map[string]struct {
		server mcp.Server
		want   string
	}{
		"no such program": {mcp.Server{Name: "gone", Command: "/nonexistent/mcp-server"}, "mcp: server gone: connect: "},
		"silent":          {mcp.Server{Name: "mute", Command: "sleep", Args: []string{"60"}, Timeout: 300 * time.Millisecond}, "mcp: server mute: connect: no answer within 300ms"},
		"bad name":        {mcp.Server{Name: "a.b", Command: "x"}, `mcp: server 0: name "a.b": use letters, digits and '-', at most 32`},
		"both":            {mcp.Server{Name: "x", Command: "x", URL: "http://127.0.0.1:1"}, "mcp: server x: give a command or a URL, not both or neither"},
		"unreachable":     {mcp.Server{Name: "web", URL: "http://127.0.0.1:1/mcp", Timeout: 5 * time.Second}, "mcp: server web: connect: "},
	} {
		_, err := mcp.Connect(context.Background(), mcp.Options{Servers: []mcp.Server{c.server}})
		require.ErrorContains(t, err, c.want, name)
	}
}
