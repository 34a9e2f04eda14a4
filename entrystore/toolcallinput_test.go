package entrystore_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/entrystore"
)

// TestToolCallInputFromItsEntry records calls whose input is, and is not,
// the arguments their assistant entry asked with: the first keeps no
// copy, and both read back as recorded.
func TestToolCallInputFromItsEntry(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	asked, _, err := f.store.AppendEntry(ctx, entrystore.Entry{OrgID: f.org.ID, ExecutionID: f.exec.ID, Type: "message", Role: "assistant",
		Content: []byte(`{"role":"assistant","content":[{"type":"tool_call","toolCall":{"id":"a","name":"t","arguments":{"q": 1}}},
			{"type":"tool_call","toolCall":{"id":"b","name":"t","arguments":{"q":2}}}]}`), IdempotencyKey: "asked"})
	require.NoError(t, err)
	for id, input := range map[string]string{"a": `{"q":1}`, "b": `{"q":3}`} {
		for _, status := range []string{entrystore.ToolCallRunning, entrystore.ToolCallCompleted} {
			tc, err := f.store.RecordToolCall(ctx, entrystore.ToolCall{OrgID: f.org.ID, ExecutionID: f.exec.ID, MessageID: asked.ID,
				ToolCallID: id, ToolName: "t", Status: status, Input: []byte(input)})
			require.NoError(t, err)
			require.JSONEq(t, input, string(tc.Input))
		}
		var stored *string
		require.NoError(t, f.store.Pool().QueryRow(ctx, `SELECT input::text FROM agent_tool_call WHERE tool_call_id = $1`, id).Scan(&stored))
		require.Equal(t, id == "b", stored != nil, "call %s", id)
	}
	list, _, err := f.store.ListToolCalls(ctx, f.org.ID, f.exec.ID, entrystore.ToolCallFilter{}, entrystore.Page{})
	require.NoError(t, err)
	require.Len(t, list, 2)
	for _, tc := range list {
		require.JSONEq(t, map[string]string{"a": `{"q":1}`, "b": `{"q":3}`}[tc.ToolCallID], string(tc.Input))
	}
}
