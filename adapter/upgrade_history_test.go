package adapter_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/agentree/agentree/adapter"
	aclient "github.com/agentree/agentree/adapter/client"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/entrystore"
)

var updateUpgradeHistory = flag.Bool("update-upgrade-history", false,
	"record testdata/upgrade/*.json again from a fresh run of this code on the dev server")

// upgradeDir holds histories recorded from the build before the segment
// engine's refactor (commit preRefactorCommit): runs left open in the states
// an execution can wait in for days across a deploy.
const upgradeDir = "testdata/upgrade"

// upgradeHistory is one recorded history: how it is recorded and what state
// it must show, so a re-recording that missed the state fails instead of
// checking in a history that proves less.
type upgradeHistory struct {
	file   string
	record func(t *testing.T) *historypb.History
	check  func(t *testing.T, h *historypb.History)
}

func upgradeHistories() []upgradeHistory {
	return []upgradeHistory{
		{"react_waiting_input.json", recordWaitingForInput, func(t *testing.T, h *historypb.History) {
			require.Empty(t, pendingActivities(h), "no call in flight")
			require.Equal(t, 1, countEvents(h, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED), "the second user message's signal")
		}},
		{"react_mid_tool.json", recordMidTool, func(t *testing.T, h *historypb.History) {
			require.Equal(t, []string{adapter.RunToolActivity}, pendingActivities(h), "the second tool call of the turn in flight")
			require.Equal(t, 1, completedActivities(h, adapter.RunToolActivity), "the first tool call of the turn done")
		}},
		{"react_mid_model_call.json", recordMidModelCall, func(t *testing.T, h *historypb.History) {
			require.Equal(t, []string{adapter.CallModelActivity}, pendingActivities(h), "the second model call in flight")
			require.Equal(t, 1, completedActivities(h, adapter.RunToolActivity))
		}},
		{"react_after_continue_as_new_waiting.json", recordAfterContinueAsNewWaiting, func(t *testing.T, h *historypb.History) {
			require.True(t, continuedAsNew(h), "the second run of the chain")
			require.Empty(t, pendingActivities(h))
		}},
		{"react_after_continue_as_new_mid_model_call.json", recordAfterContinueAsNewMidModelCall, func(t *testing.T, h *historypb.History) {
			require.True(t, continuedAsNew(h), "the run a wait continued into")
			require.Equal(t, []string{adapter.CallModelActivity}, pendingActivities(h), "the answer to the carried message in flight")
		}},
		{"custom_waiting_own_signal.json", recordCustomWaiting, func(t *testing.T, h *historypb.History) {
			require.Equal(t, approvalKind, h.Events[0].GetWorkflowExecutionStartedEventAttributes().GetWorkflowType().GetName())
			require.Empty(t, pendingActivities(h))
			require.Equal(t, 1, completedActivities(h, stampActivity), "the agent's own activity ran")
			require.Equal(t, 1, countEvents(h, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED), "a signal that does not end the wait")
		}},
	}
}

// TestReplayPreRefactorHistories replays the histories recorded from the
// build before the segment engine's refactor, each left open where an
// execution may sit across a deploy: waiting for input, mid tool call, mid
// model call, in a run after a continue-as-new, a custom agent waiting on
// its own signal. New workflow code must replay every one of them (guard a
// behaviour change with workflow.GetVersion); TestUpgradeFinishesOldExecutions
// then proves such executions finish. -update-upgrade-history records them
// again, from the code under test: only do that on the build whose
// executions they stand for.
func TestReplayPreRefactorHistories(t *testing.T) {
	histories := upgradeHistories()
	if *updateUpgradeHistory {
		require.NoError(t, os.MkdirAll(upgradeDir, 0o755))
		for _, u := range histories {
			h := u.record(t)
			b, err := protojson.MarshalOptions{Indent: "  "}.Marshal(h)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(upgradeDir, u.file), append(b, '\n'), 0o644))
		}
	}
	for _, u := range histories {
		t.Run(u.file, func(t *testing.T) {
			path := filepath.Join(upgradeDir, u.file)
			h, err := client.HistoryFromJSON(mustOpen(t, path), client.HistoryJSONOptions{})
			require.NoError(t, err, "%s is missing or unreadable: record it with -update-upgrade-history", path)
			require.False(t, closedRun(h), "%s must be an open run", path)
			u.check(t, h)

			replayer, err := worker.NewWorkflowReplayerWithOptions(worker.WorkflowReplayerOptions{Plugins: []worker.Plugin{upgradeReplayPlugin(t)}})
			require.NoError(t, err)
			require.NoError(t, replayer.ReplayWorkflowHistory(nil, h), path)
		})
	}
}

func mustOpen(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err, "record the histories with -update-upgrade-history")
	t.Cleanup(func() { _ = f.Close() })
	return f
}

// upgradeReplayPlugin registers every workflow the recorded histories ran.
func upgradeReplayPlugin(t *testing.T) worker.Plugin {
	t.Helper()
	plugin, err := adapter.NewPlugin(adapter.Options{Store: &entrystore.Store{},
		Agents: []agentsdk.Agent{react.New(react.Options{}), approvalAgent{}}})
	require.NoError(t, err)
	return plugin
}

// recordWaitingForInput: a multi-turn execution whose first message took a
// tool call and an answer, whose second was answered; it waits for a third.
func recordWaitingForInput(t *testing.T) *historypb.History {
	model := scripted.New(func(turn int, _ agentsdk.ModelRequest) scripted.Turn {
		if turn == 0 {
			return scripted.Turn{Text: "Let me check.", ToolCalls: []agentsdk.ToolCall{echoCall("w1", "checked")}}
		}
		return scripted.Turn{Text: "answer " + string(rune('0'+turn))}
	})
	h := newHarness(t, adapter.Options{Providers: []agentsdk.Provider{model}, Tools: []*agentsdk.Tool{echoTool()}, ReconcileInterval: -1}, false)
	ex := h.start(agentsdk.Config{Mode: agentsdk.ModeMultiTurn, Tools: []string{"echo"}}, "first message")
	h.waitStatus(ex.ID, entrystore.StatusWaiting, time.Minute)
	_, err := h.ac.Signal(context.Background(), h.org.ID, ex.ID, agentsdk.SignalUserMessage, []byte(`{"text":"second message"}`))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return model.Calls() == 3 }, time.Minute, 5*time.Millisecond)
	return h.settledHistory(ex.ID, func(*historypb.History) bool { return h.status(ex.ID) == entrystore.StatusWaiting })
}

// recordMidTool: a one-shot execution whose first turn calls two tools;
// the first has answered, the second is running.
func recordMidTool(t *testing.T) *historypb.History {
	g := newGate()
	block := agentsdk.NewTool("block", "Blocks until released.", func(context.Context, agentsdk.ToolInvocation, struct{}) (string, error) {
		g.pass()
		return "released", nil
	})
	model := scripted.New(scripted.Turns(
		scripted.Turn{Text: "Two tools.", ToolCalls: []agentsdk.ToolCall{echoCall("t1", "first"), {ID: "t2", Name: "block"}}},
		scripted.Turn{Text: "Both done."},
	))
	h := newHarness(t, adapter.Options{Providers: []agentsdk.Provider{model}, Tools: []*agentsdk.Tool{echoTool(), block}, ReconcileInterval: -1}, false)
	ex := h.start(agentsdk.Config{Tools: []string{"echo", "block"}}, "run two tools")
	g.waitReached(t)
	defer h.abandon(ex.ID, g)
	return h.settledHistory(ex.ID, hasPending(adapter.RunToolActivity))
}

// recordMidModelCall: a one-shot execution whose first turn ran a tool;
// the model call of the second turn is in flight.
func recordMidModelCall(t *testing.T) *historypb.History {
	g := newGate()
	model := scripted.New(func(turn int, _ agentsdk.ModelRequest) scripted.Turn {
		if turn == 0 {
			return scripted.Turn{Text: "Checking.", ToolCalls: []agentsdk.ToolCall{echoCall("m1", "x")}}
		}
		g.pass()
		return scripted.Turn{Text: "Done."}
	})
	h := newHarness(t, adapter.Options{Providers: []agentsdk.Provider{model}, Tools: []*agentsdk.Tool{echoTool()}, ReconcileInterval: -1}, false)
	ex := h.start(agentsdk.Config{Tools: []string{"echo"}}, "check, then answer")
	g.waitReached(t)
	defer h.abandon(ex.ID, g)
	return h.settledHistory(ex.ID, hasPending(adapter.CallModelActivity))
}

// recordAfterContinueAsNewWaiting: with a run budget of one segment, the
// tool turn continues as new; the second run answers and waits for input.
func recordAfterContinueAsNewWaiting(t *testing.T) *historypb.History {
	model := scripted.New(scripted.Turns(
		scripted.Turn{Text: "Checking.", ToolCalls: []agentsdk.ToolCall{echoCall("c1", "y")}},
		scripted.Turn{Text: "Here you are."},
	))
	h := newHarness(t, adapter.Options{Providers: []agentsdk.Provider{model}, Tools: []*agentsdk.Tool{echoTool()}, RunEvents: 1, ReconcileInterval: -1}, false)
	ex := h.start(agentsdk.Config{Mode: agentsdk.ModeMultiTurn, Tools: []string{"echo"}}, "check and wait")
	h.waitStatus(ex.ID, entrystore.StatusWaiting, time.Minute)
	return h.settledHistory(ex.ID, func(*historypb.History) bool { return h.status(ex.ID) == entrystore.StatusWaiting })
}

// recordAfterContinueAsNewMidModelCall: with a run budget of one segment,
// the first answer waits; the second user message ends the wait and the run
// continues as new carrying it (a resumed segment); that run's model call
// is in flight.
func recordAfterContinueAsNewMidModelCall(t *testing.T) *historypb.History {
	g := newGate()
	model := scripted.New(func(turn int, _ agentsdk.ModelRequest) scripted.Turn {
		if turn == 1 {
			g.pass()
		}
		return scripted.Turn{Text: "reply " + string(rune('0'+turn))}
	})
	h := newHarness(t, adapter.Options{Providers: []agentsdk.Provider{model}, RunEvents: 1, ReconcileInterval: -1}, false)
	ex := h.start(agentsdk.Config{Mode: agentsdk.ModeMultiTurn}, "message 1")
	h.waitStatus(ex.ID, entrystore.StatusWaiting, time.Minute)
	_, err := h.ac.Signal(context.Background(), h.org.ID, ex.ID, agentsdk.SignalUserMessage, []byte(`{"text":"message 2"}`))
	require.NoError(t, err)
	g.waitReached(t)
	defer h.abandon(ex.ID, g)
	return h.settledHistory(ex.ID, hasPending(adapter.CallModelActivity))
}

// recordCustomWaiting: the test's approval agent ran its own activity and a
// model call and waits for "approve"; a "comment" signal arrived and did
// not end the wait.
func recordCustomWaiting(t *testing.T) *historypb.History {
	model := scripted.New(scripted.Turns(scripted.Turn{Text: "A draft."}))
	h := newHarness(t, adapter.Options{Providers: []agentsdk.Provider{model}, Agents: []agentsdk.Agent{approvalAgent{}},
		Activities: approvalActivities(), ReconcileInterval: -1}, false)
	ex, err := h.ac.Start(context.Background(), aclient.StartRequest{OrgID: h.org.ID, Kind: approvalKind,
		Config: agentsdk.Config{Models: []agentsdk.ModelRef{scripted.Model("")}}, UserPrompt: "draft something"})
	require.NoError(t, err)
	h.waitStatus(ex.ID, entrystore.StatusWaiting, time.Minute)
	_, err = h.ac.Signal(context.Background(), h.org.ID, ex.ID, "comment", []byte(`{"text":"not yet"}`))
	require.NoError(t, err)
	return h.settledHistory(ex.ID, func(hist *historypb.History) bool {
		return countEvents(hist, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED) == 1
	})
}

// settledHistory polls the execution's current run until no workflow task
// is pending and ready holds of its history, and returns that history: the
// state a worker would leave behind if it stopped now.
func (h *harness) settledHistory(id string, ready func(*historypb.History) bool) *historypb.History {
	h.t.Helper()
	var hist *historypb.History
	require.Eventually(h.t, func() bool {
		d, err := h.tc.DescribeWorkflowExecution(context.Background(), id, "")
		require.NoError(h.t, err)
		if d.PendingWorkflowTask != nil {
			return false
		}
		hist = h.history(id, d.WorkflowExecutionInfo.Execution.RunId)
		return lastWorkflowTaskCompleted(hist) && ready(hist)
	}, time.Minute, 10*time.Millisecond, "execution %s never settled in the state to record", id)
	return hist
}

func (h *harness) status(id string) entrystore.Status {
	h.t.Helper()
	ex, err := h.es.GetExecution(context.Background(), h.org.ID, id)
	require.NoError(h.t, err)
	return ex.Status
}

// abandon ends a recorded execution: it is terminated, then its blocked
// call let go, so the worker stops cleanly.
func (h *harness) abandon(id string, g *gate) {
	require.NoError(h.t, h.tc.TerminateWorkflow(context.Background(), id, "", "history recorded"))
	close(g.release)
}

func hasPending(activityType string) func(*historypb.History) bool {
	return func(h *historypb.History) bool {
		p := pendingActivities(h)
		return len(p) == 1 && p[0] == activityType
	}
}
