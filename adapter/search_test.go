package adapter_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/adapter/client"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/entrystore"
)

// TestSearchAttributes lists an organization's executions by the search
// attributes its workflows carry: AgentreeOrg and AgentreeKind from the
// start, AgentreeStatus kept current as the execution waits, runs on
// (across continue-as-new) and ends.
func TestSearchAttributes(t *testing.T) {
	model := scripted.New(func(turn int, _ agentsdk.ModelRequest) scripted.Turn {
		if turn == 0 {
			return scripted.Turn{Text: "Checking.", ToolCalls: []agentsdk.ToolCall{echoCall("a", "1")}}
		}
		return scripted.Turn{Text: fmt.Sprintf("answer %d", turn)}
	})
	// RunEvents 1 continues as new at every checkpoint: the attributes
	// must follow the execution from run to run.
	h := newHarness(t, adapter.Options{Providers: []agentsdk.Provider{model}, Tools: []*agentsdk.Tool{echoTool()}, RunEvents: 1}, false)
	waiting := h.start(agentsdk.Config{Mode: agentsdk.ModeMultiTurn, Tools: []string{"echo"}}, "wait for me")
	done := h.start(agentsdk.Config{Tools: []string{"echo"}}, "finish")
	h.wait(done.ID, time.Minute)
	h.waitStatus(waiting.ID, entrystore.StatusWaiting, time.Minute)

	org := fmt.Sprintf("AgentreeOrg = %q", h.org.ID)
	require.ElementsMatch(t, []string{waiting.ID, done.ID}, h.listWorkflows(org+" AND AgentreeKind = 'react-agent'", 2))
	require.Equal(t, []string{waiting.ID}, h.listWorkflows(org+" AND AgentreeStatus = 'WAITING'", 1))
	require.Equal(t, []string{done.ID}, h.listWorkflows(org+" AND AgentreeStatus = 'COMPLETED'", 1))

	_, err := h.ac.Cancel(context.Background(), h.org.ID, waiting.ID)
	require.NoError(t, err)
	h.waitStatus(waiting.ID, entrystore.StatusCancelled, time.Minute)
	require.Equal(t, []string{waiting.ID}, h.listWorkflows(org+" AND AgentreeStatus = 'CANCELLED'", 1))
	require.Empty(t, h.listWorkflows(org+" AND AgentreeStatus = 'WAITING'", 0))

	// Every run of the chain carries them, the first as the client
	// started it, the last as it ended.
	runs := h.runs(done.ID) // newest first
	require.Greater(t, len(runs), 1, "the execution continued as new")
	for _, run := range runs {
		desc, err := h.tc.DescribeWorkflowExecution(context.Background(), done.ID, run.RunID)
		require.NoError(t, err)
		fields := desc.WorkflowExecutionInfo.SearchAttributes.GetIndexedFields()
		for _, name := range []string{client.SearchOrg.GetName(), client.SearchKind.GetName(), client.SearchStatus.GetName()} {
			require.Contains(t, fields, name, "run %s", run.RunID)
		}
	}
}

// listWorkflows polls the visibility store until query finds want
// workflows (it is eventually consistent) and returns their IDs,
// distinct: the latest run of each.
func (h *harness) listWorkflows(query string, want int) []string {
	h.t.Helper()
	var ids []string
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		resp, err := h.tc.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{Query: query})
		require.NoError(h.t, err)
		seen := map[string]bool{}
		ids = ids[:0]
		for _, e := range resp.Executions {
			if id := e.Execution.WorkflowId; !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
		if len(ids) == want || time.Now().After(deadline) {
			require.Len(h.t, ids, want, "query %s", query)
			return ids
		}
		<-tick.C
	}
}
