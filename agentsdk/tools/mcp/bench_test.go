package mcp_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/tools/mcp"
	"github.com/agentree/agentree/internal/mcptest"
)

// BenchmarkStdioCall is one call of a stdio server's tool, as the runtime
// makes it: what MCP adds to a tool call.
func BenchmarkStdioCall(b *testing.B) {
	c, err := mcp.Connect(context.Background(), mcp.Options{Servers: []mcp.Server{{Name: "calc", Command: mcptest.Build(b)}}})
	require.NoError(b, err)
	b.Cleanup(func() { _ = c.Close() })
	tools, err := agentsdk.NewTools(c.Tools()...)
	require.NoError(b, err)
	add, err := tools.Get("calc__add")
	require.NoError(b, err)
	args := json.RawMessage(`{"a":1,"b":2}`)
	for b.Loop() {
		out, err := add.Run(context.Background(), agentsdk.ToolInvocation{Arguments: args})
		if err != nil || out != "3" {
			b.Fatalf("add: %q, %v", out, err)
		}
	}
}
