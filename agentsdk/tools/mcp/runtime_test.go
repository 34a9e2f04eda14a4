package mcp_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/agenttest"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/agentsdk/tools/mcp"
	"github.com/agentree/agentree/internal/mcptest"
)

// TestMCPToolInAnExecution: the react agent, on the in-memory runtime,
// calls an MCP server's tools as it calls any tool; the answer and the
// server's isError result are tool_result entries the model reads next.
func TestMCPToolInAnExecution(t *testing.T) {
	c, err := mcp.Connect(context.Background(), mcp.Options{Servers: []mcp.Server{{Name: "calc", Command: mcptest.Build(t)}}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })

	var seen []agentsdk.Message
	model := scripted.New(scripted.Turns(
		scripted.Turn{ToolCalls: []agentsdk.ToolCall{
			{ID: "t1", Name: "calc__add", Arguments: []byte(`{"a":2,"b":40}`)},
			{ID: "t2", Name: "calc__fail", Arguments: []byte(`{"reason":"it is Monday"}`)},
		}},
		scripted.Turn{Text: "the sum is 42"},
	))
	model.OnCall = func(turn int, req agentsdk.ModelRequest) {
		if turn == 1 {
			seen = req.Messages
		}
	}
	x, err := agenttest.Start(agenttest.Options{
		Agent: react.New(react.Options{}), Providers: []agentsdk.Provider{model}, Tools: c.Tools(),
		Config:     agentsdk.Config{Models: []agentsdk.ModelRef{scripted.Model("")}, Tools: []string{"calc__add", "calc__fail"}},
		UserPrompt: "add 2 and 40",
	})
	require.NoError(t, err)
	require.NoError(t, x.Run(context.Background()))
	require.Equal(t, agenttest.StatusCompleted, x.Status)

	msgs, err := x.Messages()
	require.NoError(t, err)
	require.Len(t, msgs, 5)
	require.Equal(t, agentsdk.RoleToolResult, msgs[2].Role)
	require.Equal(t, "t1", msgs[2].ToolCallID)
	require.Equal(t, "42", msgs[2].Text())
	require.False(t, msgs[2].IsError)
	require.Equal(t, agentsdk.RoleToolResult, msgs[3].Role)
	require.True(t, msgs[3].IsError)
	require.Equal(t, "error: cannot comply: it is Monday", msgs[3].Text())
	require.Equal(t, "the sum is 42", msgs[4].Text())
	require.Len(t, seen, 4, "the model's second call saw both results")
	require.Equal(t, "42", seen[2].Text())

	var names []string
	for _, r := range x.Store.ToolCalls() {
		names = append(names, r.ToolName)
	}
	require.ElementsMatch(t, []string{"calc__add", "calc__fail"}, names)
}
