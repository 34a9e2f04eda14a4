package adapter_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/internal/step"
)

// TestExhaustedToolBecomesAToolResult: a tool that always fails with a
// Retryable error is tried ToolAttempts times, then its result is an error
// the model reads, naming the failure's class, alone (RunTool) and beside
// another call of the same answer (ExecuteTool); the execution completes.
func TestExhaustedToolBecomesAToolResult(t *testing.T) {
	var runs atomic.Int32
	flaky := agentsdk.NewTool("flaky", "Always busy.",
		func(_ context.Context, _ agentsdk.ToolInvocation, _ echoArgs) (string, error) {
			runs.Add(1)
			return "", agentsdk.Retryable(errors.New("upstream busy"))
		})
	var mu sync.Mutex
	var seen []agentsdk.ModelRequest
	turns := []scripted.Turn{
		{ToolCalls: []agentsdk.ToolCall{{ID: "f1", Name: "flaky", Arguments: []byte(`{"text":"a"}`)}}},
		{ToolCalls: []agentsdk.ToolCall{{ID: "f2", Name: "flaky", Arguments: []byte(`{"text":"b"}`)}, echoCall("e1", "fine")}},
		{Text: "The flaky tool is down."},
	}
	model := scripted.New(func(turn int, req agentsdk.ModelRequest) scripted.Turn {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, req)
		return turns[min(turn, len(turns)-1)]
	})
	h := newHarness(t, adapter.Options{Providers: []agentsdk.Provider{model}, Tools: []*agentsdk.Tool{flaky, echoTool()},
		ToolAttempts: 2, ReconcileInterval: -1}, false)
	ex := h.start(agentsdk.Config{Tools: []string{"flaky", "echo"}}, "try the flaky tool")
	res := h.wait(ex.ID, 2*time.Minute)
	require.Equal(t, "COMPLETED", res.Status, res.Error)
	require.Equal(t, "The flaky tool is down.", res.Text)
	require.Equal(t, int32(4), runs.Load(), "two attempts per call")

	want := step.ExhaustedResult("flaky", 2, errors.New("upstream busy"))
	require.Contains(t, want, step.ExhaustedClass)
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, seen, 3)
	results := func(req agentsdk.ModelRequest) map[string]agentsdk.Message {
		out := map[string]agentsdk.Message{}
		for _, m := range req.Messages {
			if m.Role == agentsdk.RoleToolResult {
				out[m.ToolCallID] = m
			}
		}
		return out
	}
	got := results(seen[1])
	require.True(t, got["f1"].IsError)
	require.Equal(t, want, got["f1"].Text(), "the model read the given-up call")
	got = results(seen[2])
	require.True(t, got["f2"].IsError)
	require.Equal(t, want, got["f2"].Text(), "a given-up call of a parallel batch")
	require.False(t, got["e1"].IsError)
	require.Equal(t, "echo: fine", got["e1"].Text())
}
