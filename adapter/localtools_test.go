package adapter_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/internal/step"
)

// countingTool is a tool named name that answers "<name>: <text>" and
// counts its runs; LongRunning as longRunning says.
func countingTool(name string, longRunning bool, runs *atomic.Int32) *agentsdk.Tool {
	t := agentsdk.NewTool(name, "Answers with its text.",
		func(_ context.Context, _ agentsdk.ToolInvocation, a echoArgs) (string, error) {
			runs.Add(1)
			return name + ": " + a.Text, nil
		})
	t.LongRunning = longRunning
	return t
}

// toolActivities counts the tool-call activities an execution's runs
// scheduled, by activity type, and fails the test on a workflow task that
// failed or timed out.
func toolActivities(t *testing.T, h *harness, id string) map[string]int {
	n := map[string]int{}
	for _, run := range h.runs(id) {
		for _, e := range h.history(id, run.RunID).Events {
			switch e.GetEventType() {
			case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
				name := e.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName()
				if name == adapter.RunToolActivity || name == adapter.ExecuteToolActivity {
					n[name]++
				}
			case enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED, enumspb.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT:
				t.Fatalf("a workflow task failed: %v", e)
			}
		}
	}
	return n
}

// TestToolCallsRunLocalUnlessLongRunning: calls of an unmarked tool run
// as local activities — alone (RunTool) and beside a LongRunning tool's in
// one answer (ExecuteTools) — and schedule no activity; the LongRunning
// tool's calls still do. Every call runs once and its result is on the
// path in the model's order, with model calls as activities and as local
// activities.
func TestToolCallsRunLocalUnlessLongRunning(t *testing.T) {
	for _, localModels := range []bool{false, true} {
		t.Run(fmt.Sprintf("localModelCalls=%v", localModels), func(t *testing.T) {
			var quickRuns, slowRuns atomic.Int32
			quick, slow := countingTool("quick", false, &quickRuns), countingTool("slow", true, &slowRuns)
			call := func(id, tool, text string) agentsdk.ToolCall {
				return agentsdk.ToolCall{ID: id, Name: tool, Arguments: []byte(`{"text":"` + text + `"}`)}
			}
			model := scripted.New(scripted.Turns(
				scripted.Turn{ToolCalls: []agentsdk.ToolCall{call("q1", "quick", "1")}},
				scripted.Turn{ToolCalls: []agentsdk.ToolCall{call("q2", "quick", "2"), call("s3", "slow", "3"), call("q4", "quick", "4")}},
				scripted.Turn{Text: "All four done."},
			))
			h := newHarness(t, adapter.Options{Providers: []agentsdk.Provider{model}, Tools: []*agentsdk.Tool{quick, slow},
				ActivityModelCalls: !localModels, ReconcileInterval: -1}, false)
			ex := h.start(agentsdk.Config{Tools: []string{"quick", "slow"}}, "four tools")
			res := h.wait(ex.ID, time.Minute)
			require.Equal(t, "COMPLETED", res.Status, res.Error)
			require.Equal(t, "All four done.", res.Text)

			var results []string
			for _, m := range h.path(res.LeafID) {
				if m.Role == agentsdk.RoleToolResult {
					results = append(results, m.ToolCallID+"="+m.Text())
				}
			}
			require.Equal(t, []string{"q1=quick: 1", "q2=quick: 2", "s3=slow: 3", "q4=quick: 4"}, results)
			require.Equal(t, int32(3), quickRuns.Load(), "each local call ran once")
			require.Equal(t, int32(1), slowRuns.Load())
			require.Equal(t, map[string]int{adapter.ExecuteToolActivity: 1}, toolActivities(t, h, ex.ID),
				"only the activity tool's call was an activity")
			if localModels {
				// The final answer's local call and the completion it
				// leads to run in one workflow task: no boundary between
				// them (no timer, no signal to itself), and the run's last
				// task records both markers.
				runs := h.runs(ex.ID)
				n := map[enumspb.EventType]int{}
				for _, run := range runs {
					hist := h.history(ex.ID, run.RunID)
					for _, typ := range []enumspb.EventType{enumspb.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED,
						enumspb.EVENT_TYPE_TIMER_STARTED, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED} {
						if c := countEvents(hist, typ); c > 0 {
							n[typ] += c
						}
					}
				}
				require.Empty(t, n, "no workflow-task boundary after the final answer")
				last := h.history(ex.ID, runs[len(runs)-1].RunID).Events
				var after []string
				for i := len(last) - 1; i >= 0 && last[i].EventType != enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED; i-- {
					if m := last[i].GetMarkerRecordedEventAttributes(); m != nil {
						after = append(after, localActivityType(t, m))
					}
				}
				require.GreaterOrEqual(t, len(after), 2, "the last task's markers, last first: %v", after)
				require.Equal(t, []string{"Finish", adapter.CallModelActivity}, after[:2],
					"the last task records the final answer's call, then the completion")
			}
		})
	}
}

// TestLocalActivityToolRetriedAsActivity: a local call that fails with a
// Retryable error is retried as an activity, its failure counted: a tool
// that fails once answers from the activity; with ToolAttempts 2, one that
// always fails runs twice in all (once locally, once as the activity), both
// failures counted, and its result is the error the model reads. Either
// way the stream announces the call's end once.
func TestLocalActivityToolRetriedAsActivity(t *testing.T) {
	for _, failures := range []int32{1, 10} {
		t.Run(fmt.Sprintf("failures=%d", failures), func(t *testing.T) {
			var runs atomic.Int32
			flaky := agentsdk.NewTool("flaky", "Fails at first.",
				func(_ context.Context, _ agentsdk.ToolInvocation, a echoArgs) (string, error) {
					if runs.Add(1) <= failures {
						return "", agentsdk.Retryable(errors.New("busy"))
					}
					return "flaky: " + a.Text, nil
				})
			model := scripted.New(scripted.Turns(
				scripted.Turn{ToolCalls: []agentsdk.ToolCall{{ID: "f1", Name: "flaky", Arguments: []byte(`{"text":"ok"}`)}}},
				scripted.Turn{Text: "Tried."},
			))
			h := newHarness(t, adapter.Options{Providers: []agentsdk.Provider{model}, Tools: []*agentsdk.Tool{flaky},
				ToolAttempts: 2, ReconcileInterval: -1}, false)
			ex := h.start(agentsdk.Config{Tools: []string{"flaky"}}, "try it")
			res := h.wait(ex.ID, time.Minute)
			require.Equal(t, "COMPLETED", res.Status, res.Error)
			require.Equal(t, int32(2), runs.Load(), "one local attempt, one activity attempt")
			require.Equal(t, map[string]int{adapter.RunToolActivity: 1}, toolActivities(t, h, ex.ID))
			// A failed attempt is not the call's end: the stream announces
			// one end, the call's last, after the activity's start.
			end := "task.completed"
			if failures > 1 {
				end = "task.failed"
			}
			require.Equal(t, "task.started,task.started,"+end, taskEvents(t, h, ex.ID, "f1"))
			msgs := h.path(res.LeafID)
			if failures > 1 {
				require.True(t, msgs[len(msgs)-2].IsError)
				require.Equal(t, step.ExhaustedResult("flaky", 2, errors.New("busy")), msgs[len(msgs)-2].Text(),
					"the model reads the given-up call's result")
				return
			}
			require.Equal(t, "flaky: ok", msgs[len(msgs)-2].Text(), "the activity's result is on the path")
		})
	}
}

// TestLongToolCallFallsBackToAnActivity: a tool call whose local first
// attempt outlasts LocalCallLimit is made again as an activity, and the
// cut-short attempt announces no end: the stream reads two starts and
// the activity's one completion.
func TestLongToolCallFallsBackToAnActivity(t *testing.T) {
	var runs atomic.Int32
	slow := agentsdk.NewTool("slow", "Slow at first.",
		func(ctx context.Context, _ agentsdk.ToolInvocation, a echoArgs) (string, error) {
			if runs.Add(1) == 1 {
				<-ctx.Done() // the local attempt's limit
				return "", ctx.Err()
			}
			return "slow: " + a.Text, nil
		})
	model := scripted.New(scripted.Turns(
		scripted.Turn{ToolCalls: []agentsdk.ToolCall{{ID: "l1", Name: "slow", Arguments: []byte(`{"text":"ok"}`)}}},
		scripted.Turn{Text: "Waited."},
	))
	h := newHarness(t, adapter.Options{Providers: []agentsdk.Provider{model}, Tools: []*agentsdk.Tool{slow},
		LocalCallLimit: time.Second, ReconcileInterval: -1}, false)
	ex := h.start(agentsdk.Config{Tools: []string{"slow"}}, "wait for it")
	res := h.wait(ex.ID, time.Minute)
	require.Equal(t, "COMPLETED", res.Status, res.Error)
	require.Equal(t, int32(2), runs.Load(), "the local attempt, then the activity's")
	require.Equal(t, map[string]int{adapter.RunToolActivity: 1}, toolActivities(t, h, ex.ID))
	msgs := h.path(res.LeafID)
	require.Equal(t, "slow: ok", msgs[len(msgs)-2].Text())
	require.Equal(t, "task.started,task.started,task.completed", taskEvents(t, h, ex.ID, "l1"))
}

// TestActivityToolCallsRunsEveryToolAsAnActivity: with
// Options.ActivityToolCalls an unmarked tool's call is an activity from
// its first attempt.
func TestActivityToolCallsRunsEveryToolAsAnActivity(t *testing.T) {
	var runs atomic.Int32
	model := scripted.New(scripted.Turns(
		scripted.Turn{ToolCalls: []agentsdk.ToolCall{{ID: "c1", Name: "echo", Arguments: []byte(`{"text":"hi"}`)}}},
		scripted.Turn{Text: "Done."},
	))
	h := newHarness(t, adapter.Options{Providers: []agentsdk.Provider{model}, Tools: []*agentsdk.Tool{countingTool("echo", false, &runs)},
		ActivityToolCalls: true, ReconcileInterval: -1}, false)
	ex := h.start(agentsdk.Config{Tools: []string{"echo"}}, "go")
	res := h.wait(ex.ID, time.Minute)
	require.Equal(t, "COMPLETED", res.Status, res.Error)
	require.Equal(t, map[string]int{adapter.RunToolActivity: 1}, toolActivities(t, h, ex.ID))
	require.Equal(t, int32(1), runs.Load())
}

// localActivityType is the activity type a local activity's marker
// records.
func localActivityType(t *testing.T, m *historypb.MarkerRecordedEventAttributes) string {
	t.Helper()
	var data struct{ ActivityType string }
	payloads := m.GetDetails()["data"].GetPayloads()
	require.NotEmpty(t, payloads, "marker %s has no data", m.GetMarkerName())
	require.NoError(t, json.Unmarshal(payloads[0].GetData(), &data))
	return data.ActivityType
}
