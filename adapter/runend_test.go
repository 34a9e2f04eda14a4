package adapter_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/entrystore"
)

// TestRunsEndAtWaits: once past its budget a run ends where its execution
// begins to wait for input, not inside a turn, and the next run marks the
// execution WAITING and waits; no run records a Version marker or a
// TemporalChangeVersion update (the versions ride in the run's one side
// effect).
func TestRunsEndAtWaits(t *testing.T) {
	// A budget of 10 events: every turn passes it long before its end. A
	// budget of 95: the second turn would fit it, but not the hard limit
	// of 100 events (with a segment's reserve), so the first run ends at
	// its first wait as well. The sizes are those of model and tool calls
	// run as activities (a turn of local calls is about half as long).
	for _, budget := range []int{10, 95} {
		t.Run(fmt.Sprintf("budget %d", budget), func(t *testing.T) { runsEndAtWaits(t, budget) })
	}
}

func runsEndAtWaits(t *testing.T, budget int) {
	const turns, tools = 3, 3
	model := scripted.New(func(turn int, req agentsdk.ModelRequest) scripted.Turn {
		// Each user turn: three tool calls one after another, then an answer.
		n := turn % (tools + 1)
		if n < tools {
			return scripted.Turn{ToolCalls: []agentsdk.ToolCall{echoCall(fmt.Sprintf("c%d", turn), fmt.Sprint(turn))}}
		}
		return scripted.Turn{Text: fmt.Sprintf("answer %d", turn/(tools+1)+1)}
	})
	h := newHarness(t, adapter.Options{Providers: []agentsdk.Provider{model}, Tools: []*agentsdk.Tool{echoTool()}, RunEvents: budget,
		ActivityModelCalls: true, ActivityToolCalls: true}, false)
	ex := h.start(agentsdk.Config{Mode: agentsdk.ModeMultiTurn, Tools: []string{"echo"}}, "message 1")
	for i := 2; i <= turns; i++ {
		h.waitStatus(ex.ID, entrystore.StatusWaiting, time.Minute)
		_, err := h.ac.Signal(context.Background(), h.org.ID, ex.ID, agentsdk.SignalUserMessage, []byte(fmt.Sprintf(`{"text":"message %d"}`, i)))
		require.NoError(t, err)
		h.waitStatus(ex.ID, entrystore.StatusRunning, time.Minute)
	}
	h.waitStatus(ex.ID, entrystore.StatusWaiting, time.Minute)
	cp, err := h.es.LatestCheckpoint(context.Background(), h.org.ID, ex.ID)
	require.NoError(t, err)
	msgs := h.path(cp.LeafEntryID)
	require.Len(t, msgs, turns*(2+2*tools), "every turn: the user's message, three calls and their results, the answer")
	require.Equal(t, fmt.Sprintf("answer %d", turns), msgs[len(msgs)-1].Text())

	runs := h.runs(ex.ID) // newest first
	require.Len(t, runs, turns+1, "one run per turn, each ended at the wait that followed it, and the run now waiting")
	for i, run := range runs {
		hist := h.history(ex.ID, run.RunID)
		var input map[string]json.RawMessage
		payloads := hist.Events[0].GetWorkflowExecutionStartedEventAttributes().GetInput().GetPayloads()
		require.NotEmpty(t, payloads)
		require.NoError(t, json.Unmarshal(payloads[0].GetData(), &input))
		if i < len(runs)-1 {
			require.Contains(t, input, "waiting", "run %s was handed the wait its predecessor ended at", run.RunID)
		} else {
			require.NotContains(t, input, "waiting", "the first run")
		}
		for _, e := range hist.Events {
			if m := e.GetMarkerRecordedEventAttributes(); m != nil {
				require.NotEqual(t, "Version", m.GetMarkerName(), "run %s event %d", run.RunID, e.GetEventId())
			}
			if u := e.GetUpsertWorkflowSearchAttributesEventAttributes(); u != nil {
				require.NotContains(t, u.GetSearchAttributes().GetIndexedFields(), "TemporalChangeVersion", "run %s event %d", run.RunID, e.GetEventId())
			}
			if i == 0 {
				// The waiting run has scheduled nothing: it marked the
				// execution WAITING (a local activity) and waits.
				require.NotEqual(t, enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED, e.GetEventType(), "the waiting run scheduled an activity")
			}
		}
		require.LessOrEqual(t, run.Events, int64(100), "run %s", run.RunID)
	}
}
