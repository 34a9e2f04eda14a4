package adapter_test

import (
	"flag"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/entrystore"
)

var updateHistory = flag.Bool("update-history", false, "rewrite testdata/*.json from a fresh run on the dev server")

// historyFiles are the checked-in histories: a run of one segment that
// calls the model and a tool, checkpoints and continues as new; the run
// after it, which answers and completes; and one run holding both segments
// (the default run budget).
var historyFiles = []string{"testdata/segment_tools.json", "testdata/segment_final.json", "testdata/run_two_segments.json"}

// TestReplayCheckedInHistory replays histories recorded from the dev
// server: a change that makes the segment workflow non-deterministic fails
// here before it can break a running execution. Run with -update-history
// to record them again after a deliberate change.
func TestReplayCheckedInHistory(t *testing.T) {
	if *updateHistory {
		recordHistories(t)
	}
	plugin, err := adapter.NewPlugin(adapter.Options{Store: &entrystore.Store{}, Agents: []agentsdk.Agent{react.New(react.Options{})}})
	require.NoError(t, err)
	for _, f := range historyFiles {
		replayer, err := worker.NewWorkflowReplayerWithOptions(worker.WorkflowReplayerOptions{Plugins: []worker.Plugin{plugin}})
		require.NoError(t, err)
		require.NoError(t, replayer.ReplayWorkflowHistoryFromJSONFile(nil, f), f)
	}
}

func recordHistories(t *testing.T) {
	record := func(runEvents int) []string {
		model := scripted.New(scripted.Turns(
			scripted.Turn{Text: "Checking.", ToolCalls: []agentsdk.ToolCall{echoCall("a", "1")}},
			scripted.Turn{Text: "Done."},
		))
		h := newHarness(t, adapter.Options{Providers: []agentsdk.Provider{model}, Tools: []*agentsdk.Tool{echoTool()}, RunEvents: runEvents}, false)
		ex := h.start(agentsdk.Config{Tools: []string{"echo"}}, "record a history")
		h.wait(ex.ID, time.Minute)
		var out []string
		runs := h.runs(ex.ID) // newest first
		for i := len(runs) - 1; i >= 0; i-- {
			b, err := protojson.MarshalOptions{Indent: "  "}.Marshal(h.history(ex.ID, runs[i].RunID))
			require.NoError(t, err)
			out = append(out, string(b))
		}
		return out
	}
	perSegment, oneRun := record(1), record(0)
	require.Len(t, perSegment, 2)
	require.Len(t, oneRun, 1)
	for i, body := range append(perSegment, oneRun...) {
		require.NoError(t, os.MkdirAll(filepath.Dir(historyFiles[i]), 0o755))
		require.NoError(t, os.WriteFile(historyFiles[i], []byte(body), 0o644))
	}
}

// TestReplayerReplaysLocalCalls: a team's replay test (a
// worker.WorkflowReplayer with the plugin) replays runs whose model and
// tool calls ran as local activities. A replayer registers no activities,
// so a local activity named by its function would be named otherwise
// than the worker recorded it ("CallModel" against "agentree.CallModel")
// and the replay would fail as nondeterministic.
func TestReplayerReplaysLocalCalls(t *testing.T) {
	var runs atomic.Int32
	call := func(id string) agentsdk.ToolCall {
		return agentsdk.ToolCall{ID: id, Name: "quick", Arguments: []byte(`{"text":"` + id + `"}`)}
	}
	model := scripted.New(scripted.Turns( // one call alone (RunTool), then two at once (ExecuteTool)
		scripted.Turn{ToolCalls: []agentsdk.ToolCall{call("q1")}},
		scripted.Turn{ToolCalls: []agentsdk.ToolCall{call("q2"), call("q3")}},
		scripted.Turn{Text: "Done."},
	))
	opts := adapter.Options{Providers: []agentsdk.Provider{model}, Tools: []*agentsdk.Tool{countingTool("quick", false, &runs)},
		ReconcileInterval: -1}
	h := newHarness(t, opts, false)
	ex := h.start(agentsdk.Config{Tools: []string{"quick"}}, "replay me")
	res := h.wait(ex.ID, time.Minute)
	require.Equal(t, "COMPLETED", res.Status, res.Error)
	require.Equal(t, int32(3), runs.Load())

	opts.Store, opts.Agents = &entrystore.Store{}, []agentsdk.Agent{react.New(react.Options{})}
	plugin, err := adapter.NewPlugin(opts)
	require.NoError(t, err)
	for _, run := range h.runs(ex.ID) {
		hist := h.history(ex.ID, run.RunID)
		var locals []string
		for _, e := range hist.Events {
			if m := e.GetMarkerRecordedEventAttributes(); m != nil && m.GetMarkerName() == "LocalActivity" {
				locals = append(locals, localActivityType(t, m))
			}
		}
		require.Contains(t, locals, adapter.CallModelActivity, "the model calls ran locally")
		require.Contains(t, locals, adapter.RunToolActivity, "the lone tool call ran locally")
		require.Contains(t, locals, adapter.ExecuteToolActivity, "the tool calls made at once ran locally")
		replayer, err := worker.NewWorkflowReplayerWithOptions(worker.WorkflowReplayerOptions{Plugins: []worker.Plugin{plugin}})
		require.NoError(t, err)
		require.NoError(t, replayer.ReplayWorkflowHistory(nil, hist), "run %s", run.RunID)
	}
}
