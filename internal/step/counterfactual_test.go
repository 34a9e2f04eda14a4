package step_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/internal/step"
)

func messageEntry(t *testing.T, id string, m agentsdk.Message) agentsdk.Entry {
	t.Helper()
	b, err := json.Marshal(m)
	require.NoError(t, err)
	return agentsdk.Entry{ID: id, Type: agentsdk.EntryMessage, Role: m.Role, Content: b}
}

// TestRecordedAnswersMatchNameAndArguments: a call matches a recorded one
// by tool name and arguments as values (key order and spacing aside, {}
// and no arguments alike); a call the path asked but never answered, or
// with other arguments or another tool, matches nothing.
func TestRecordedAnswersMatchNameAndArguments(t *testing.T) {
	call := func(id, name, args string) agentsdk.ToolCall {
		return agentsdk.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
	}
	answer := agentsdk.Message{Role: agentsdk.RoleAssistant, Content: []agentsdk.Block{
		{Type: agentsdk.BlockToolCall, ToolCall: &agentsdk.ToolCall{ID: "c1", Name: "read", Arguments: json.RawMessage(`{"path":"a","n":1}`)}},
		{Type: agentsdk.BlockToolCall, ToolCall: &agentsdk.ToolCall{ID: "c2", Name: "list", Arguments: json.RawMessage(`{}`)}},
		{Type: agentsdk.BlockToolCall, ToolCall: &agentsdk.ToolCall{ID: "c3", Name: "write", Arguments: json.RawMessage(`{"path":"a"}`)}},
	}}
	rec := step.RecordedIn([]agentsdk.Entry{
		messageEntry(t, "u", agentsdk.TextMessage(agentsdk.RoleUser, "go")),
		messageEntry(t, "a", answer),
		messageEntry(t, "r1", agentsdk.ToolResultMessage(call("c1", "read", ""), "contents of a", false)),
		messageEntry(t, "r2", agentsdk.ToolResultMessage(call("c2", "list", ""), "no such dir", true)),
	})
	text, isError, ok := rec.Answer(call("x", "read", `{ "n": 1, "path": "a" }`))
	require.True(t, ok)
	require.Equal(t, "contents of a", text)
	require.False(t, isError)
	text, isError, ok = rec.Answer(call("y", "list", ``))
	require.True(t, ok, "{} and no arguments are one call")
	require.Equal(t, "no such dir", text)
	require.True(t, isError, "an error result is replayed as an error")
	for _, c := range []agentsdk.ToolCall{call("z", "read", `{"path":"b","n":1}`), call("z", "grep", `{"path":"a","n":1}`), call("c3", "write", `{"path":"a"}`)} {
		_, _, ok := rec.Answer(c)
		require.False(t, ok, "%s %s", c.Name, c.Arguments)
	}

	// Policies: the recorded call runs nothing; a new call of a tool not
	// read-only asks, a read-only one keeps its policy; forbid stays.
	msg := agentsdk.Message{Role: agentsdk.RoleAssistant, Content: []agentsdk.Block{
		{Type: agentsdk.BlockToolCall, ToolCall: &agentsdk.ToolCall{ID: "k1", Name: "read", Arguments: json.RawMessage(`{"path":"a","n":1}`)}},
		{Type: agentsdk.BlockToolCall, ToolCall: &agentsdk.ToolCall{ID: "k2", Name: "write", Arguments: json.RawMessage(`{"path":"b"}`)}},
		{Type: agentsdk.BlockToolCall, ToolCall: &agentsdk.ToolCall{ID: "k3", Name: "grep", Arguments: json.RawMessage(`{}`)}},
		{Type: agentsdk.BlockToolCall, ToolCall: &agentsdk.ToolCall{ID: "k4", Name: "rm", Arguments: json.RawMessage(`{}`)}},
	}}
	before := step.AnswerMeta{Policies: map[string]agentsdk.ToolPolicy{"k1": agentsdk.PolicyAsk, "k4": agentsdk.PolicyForbid},
		Risks: map[string]string{"k1": agentsdk.RiskHigh}}
	meta := step.CounterfactualMeta(before, msg, rec, func(name string) bool { return name == "grep" })
	require.Equal(t, agentsdk.PolicyAuto, meta.Policy("k1"), "answered from the record")
	require.Equal(t, agentsdk.PolicyAsk, meta.Policy("k2"), "a new side effect waits")
	require.Equal(t, agentsdk.PolicyAuto, meta.Policy("k3"), "a new read runs")
	require.Equal(t, agentsdk.PolicyForbid, meta.Policy("k4"))
}
