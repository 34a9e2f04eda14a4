package adapter_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/worker"

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

// TestRunningShownOnceATurnOutlastsItsTask: AgentreeStatus shows RUNNING
// only for a turn that outlasts its workflow task. Turns whose model calls
// and tool run locally, in one task, upsert nothing after the first wait:
// the status reads WAITING throughout, at no visibility write. A turn that
// waits on a model-call activity shows RUNNING while it waits; a local
// model call that outlasts the workflow task shows it from the task's
// heartbeats on.
func TestRunningShownOnceATurnOutlastsItsTask(t *testing.T) {
	t.Run("local turns", func(t *testing.T) {
		var runs atomic.Int32
		model := scripted.New(func(turn int, _ agentsdk.ModelRequest) scripted.Turn {
			if turn%2 == 0 {
				return scripted.Turn{Text: "Checking.", ToolCalls: []agentsdk.ToolCall{echoCall(fmt.Sprint("c", turn), fmt.Sprint(turn))}}
			}
			return scripted.Turn{Text: fmt.Sprintf("answer %d", turn)}
		})
		h := newHarness(t, adapter.Options{Providers: []agentsdk.Provider{model},
			Tools: []*agentsdk.Tool{countingTool("echo", false, &runs)}}, false)
		ex := h.start(agentsdk.Config{Mode: agentsdk.ModeMultiTurn, Tools: []string{"echo"}}, "turn 1")
		seq := h.awaitWaiting(ex.ID, 0)
		for i := 2; i <= 3; i++ {
			_, err := h.ac.Signal(context.Background(), h.org.ID, ex.ID, agentsdk.SignalUserMessage, []byte(fmt.Sprintf(`{"text":"turn %d"}`, i)))
			require.NoError(t, err)
			seq = h.awaitWaiting(ex.ID, seq)
		}
		require.EqualValues(t, 3, runs.Load(), "each turn called the tool")
		require.Equal(t, []string{"WAITING"}, h.statusUpserts(ex.ID), "only the first wait is upserted")
		org := fmt.Sprintf("AgentreeOrg = %q", h.org.ID)
		require.Equal(t, []string{ex.ID}, h.listWorkflows(org+" AND AgentreeStatus = 'WAITING'", 1))
	})

	for _, local := range []bool{false, true} {
		t.Run(fmt.Sprintf("long turn, localModelCalls=%v", local), func(t *testing.T) {
			release := make(chan struct{})
			model := scripted.New(func(turn int, _ agentsdk.ModelRequest) scripted.Turn {
				if turn == 1 {
					<-release
				}
				return scripted.Turn{Text: fmt.Sprintf("answer %d", turn)}
			})
			// RunEvents 90: the turns stay in one run, which a second worker
			// replays below.
			h := newHarness(t, adapter.Options{Providers: []agentsdk.Provider{model}, ActivityModelCalls: !local, RunEvents: 90}, true)
			first := worker.New(h.tc, h.taskQueue, worker.Options{})
			require.NoError(t, first.Start())
			ex := h.start(agentsdk.Config{Mode: agentsdk.ModeMultiTurn}, "turn 1")
			seq := h.awaitWaiting(ex.ID, 0)
			_, err := h.ac.Signal(context.Background(), h.org.ID, ex.ID, agentsdk.SignalUserMessage, []byte(`{"text":"turn 2"}`))
			require.NoError(t, err)
			// The model call blocks until released: as an activity from its
			// start, as a local activity from the workflow task's second
			// heartbeat (about 8 s), the turn reads RUNNING.
			org := fmt.Sprintf("AgentreeOrg = %q", h.org.ID)
			require.Equal(t, []string{ex.ID}, h.listWorkflows(org+" AND AgentreeStatus = 'RUNNING'", 1))
			close(release)
			h.awaitWaiting(ex.ID, seq)
			require.Equal(t, []string{ex.ID}, h.listWorkflows(org+" AND AgentreeStatus = 'WAITING'", 1))
			want := []string{"WAITING", "RUNNING", "WAITING"}
			if !local {
				want = append([]string{"RUNNING"}, want...) // the first turn's model call is an activity too
			}
			require.Equal(t, want, h.statusUpserts(ex.ID))

			// A worker that never saw the run replays its whole history,
			// upserts included, to answer a third message: a replay that
			// did not upsert where the run did would fail its task.
			first.Stop()
			second := worker.New(h.tc, h.taskQueue, worker.Options{})
			require.NoError(t, second.Start())
			t.Cleanup(second.Stop)
			seq = h.awaitWaiting(ex.ID, 0)
			_, err = h.ac.Signal(context.Background(), h.org.ID, ex.ID, agentsdk.SignalUserMessage, []byte(`{"text":"turn 3"}`))
			require.NoError(t, err)
			h.awaitWaiting(ex.ID, seq)
			runs := h.runs(ex.ID)
			require.Len(t, runs, 1, "the turns stayed in one run")
			for _, e := range h.history(ex.ID, runs[0].RunID).Events {
				require.NotEqual(t, enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED, e.GetEventType(), "a replay failed: %v", e)
			}
		})
	}
}

// awaitWaiting polls the execution until it is WAITING at a checkpoint
// past after, and returns that checkpoint's sequence.
func (h *harness) awaitWaiting(id string, after int) int {
	h.t.Helper()
	return h.waitRow(id, 30*time.Second, func(ex entrystore.Execution) bool {
		return ex.Status == entrystore.StatusWaiting && ex.CheckpointSeq > after
	}, fmt.Sprintf("waited past checkpoint %d", after)).CheckpointSeq
}

// statusUpserts are the AgentreeStatus values an execution's runs upserted,
// oldest first.
func (h *harness) statusUpserts(id string) []string {
	h.t.Helper()
	runs := h.runs(id)
	var out []string
	for i := len(runs) - 1; i >= 0; i-- {
		for _, e := range h.history(id, runs[i].RunID).Events {
			a := e.GetUpsertWorkflowSearchAttributesEventAttributes()
			if a == nil {
				continue
			}
			if p, ok := a.GetSearchAttributes().GetIndexedFields()[client.SearchStatus.GetName()]; ok {
				var v string
				require.NoError(h.t, converter.GetDefaultDataConverter().FromPayload(p, &v))
				out = append(out, v)
			}
		}
	}
	return out
}
