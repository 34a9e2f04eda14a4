package gateway_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
)

// TestCountersDoNotOverflow: store rows with counts past 2^31 — a tool
// call that ran a year (in milliseconds) and wrote 5 GB, an answer that
// read 10^12 tokens — read through REST come back whole and as JSON
// numbers, not strings, wherever the API names them.
func TestCountersDoNotOverflow(t *testing.T) {
	e := newEnv(t, envOptions{noTemporal: true})
	bg := context.Background()
	const (
		year   = int64(365 * 24 * 3600 * 1000)
		size   = int64(5_000_000_000)
		tokens = int64(1_000_000_000_000)
	)
	ex, err := e.es.CreateExecution(bg, entrystore.Execution{OrgID: e.orgA.ID, Kind: "react-agent"})
	require.NoError(t, err)
	prompt, _ := json.Marshal(agentsdk.TextMessage(agentsdk.RoleUser, "Wait a year."))
	answer := agentsdk.Message{Role: agentsdk.RoleAssistant, Provider: "scripted", Model: "scripted-1", StopReason: agentsdk.StopToolUse,
		Content: []agentsdk.Block{{Type: agentsdk.BlockToolCall, ToolCall: &agentsdk.ToolCall{ID: "c1", Name: "wait", Arguments: []byte(`{}`)}}},
		Usage:   &agentsdk.Usage{Input: tokens, Output: 3 * tokens, CacheRead: tokens}}
	content, _ := json.Marshal(answer)
	es, err := e.es.AppendEntries(bg, []entrystore.Entry{
		{OrgID: e.orgA.ID, ExecutionID: ex.ID, Type: string(agentsdk.EntryMessage), Role: string(agentsdk.RoleUser), Content: prompt, IdempotencyKey: "p"},
		{OrgID: e.orgA.ID, ExecutionID: ex.ID, ParentID: entrystore.PrevParent, Type: string(agentsdk.EntryMessage), Role: string(agentsdk.RoleAssistant),
			Content: content, IdempotencyKey: "a", Metadata: json.RawMessage(`{"llmCall":{"latencyMs":` + jsonInt(year) + `}}`)},
	})
	require.NoError(t, err)
	_, err = e.es.RecordToolCall(bg, entrystore.ToolCall{OrgID: e.orgA.ID, ExecutionID: ex.ID, MessageID: es[1].ID, ToolCallID: "c1",
		ToolName: "wait", Status: entrystore.ToolCallCompleted, DurationMs: year, OutputSize: size, Output: json.RawMessage(`{"text":"done"}`)})
	require.NoError(t, err)

	path := e.execPath(e.orgA, ex.ID)
	calls := e.do(e.keyA, http.MethodGet, path+"/tool-calls", nil)
	require.Equal(t, http.StatusOK, calls.Status, "%s", calls.Raw)
	require.Contains(t, string(calls.Raw), `"durationMs":`+jsonInt(year), "a year in milliseconds, a number")
	require.Contains(t, string(calls.Raw), `"outputSize":`+jsonInt(size))
	tasks := e.do(e.keyA, http.MethodGet, path+"/tasks", nil)
	require.Contains(t, string(tasks.Raw), `"durationMs":`+jsonInt(year))

	msgs := e.do(e.keyA, http.MethodGet, path+"/messages", nil)
	require.Equal(t, http.StatusOK, msgs.Status, "%s", msgs.Raw)
	require.Contains(t, string(msgs.Raw), `"input":`+jsonInt(tokens), "10^12 tokens, a number")
	require.Contains(t, string(msgs.Raw), `"output":`+jsonInt(3*tokens))

	usage := e.do(e.keyA, http.MethodGet, path+"/usage", nil)
	require.Equal(t, http.StatusOK, usage.Status, "%s", usage.Raw)
	require.Contains(t, string(usage.Raw), `"inputTokens":`+jsonInt(tokens))
	require.Contains(t, string(usage.Raw), `"outputTokens":`+jsonInt(3*tokens))

	entries := e.do(e.keyA, http.MethodGet, path+"/entries", nil)
	require.Equal(t, http.StatusOK, entries.Status, "%s", entries.Raw)
	for _, en := range items(t, entries.Body, "entries") {
		require.IsType(t, float64(0), en["seq"], "seq is a number")
		require.IsType(t, float64(0), en["tokens"], "tokens is a number")
	}
	require.Contains(t, string(entries.Raw), `"tokens":`+jsonInt(3*tokens), "the answer's size in context: its output tokens")
}

func jsonInt(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
