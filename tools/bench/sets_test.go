package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
)

// TestSetsAreTheModesTheyName: A is each system's defaults, B local model
// calls on both, C everything local on both; X takes the flags; -sets
// refuses a set it does not know.
func TestSetsAreTheModesTheyName(t *testing.T) {
	cfg, err := parseConfig([]string{"-sets=a,C,X", "-local-model-calls=false", "-local-tools=false", "-naive-local-tools"})
	require.NoError(t, err)
	sets := cfg.sets()
	require.Len(t, sets, 3)
	require.Equal(t, mode{}, sets[0].Mode, "A: Agentree's zero options; the naive pattern's activities")
	require.Equal(t, mode{NaiveLocalModelCalls: true, NaiveLocalTools: true}, sets[1].Mode)
	require.Equal(t, mode{ActivityModelCalls: true, ActivityToolCalls: true, NaiveLocalTools: true}, sets[2].Mode)
	require.Equal(t, "setX_", sets[2].prefix())

	def, err := parseConfig(nil)
	require.NoError(t, err)
	require.Equal(t, []string{"A", "B", "C"}, []string{def.sets()[0].Name, def.sets()[1].Name, def.sets()[2].Name})
	require.Equal(t, mode{NaiveLocalModelCalls: true}, def.sets()[1].Mode)
	require.Equal(t, mode{}, def.sets()[0].Mode, "X without flags would be set A")

	_, err = parseConfig([]string{"-sets=A,D"})
	require.ErrorContains(t, err, `unknown set "D"`)

	// Each system's step is judged against the floor of its kind: local
	// only when all of it is local.
	require.True(t, knownSets[0].Mode.agentreeFloorLocal(), "Agentree's defaults are all local")
	require.False(t, knownSets[0].Mode.naiveFloorLocal())
	require.False(t, knownSets[1].Mode.naiveFloorLocal())
	require.False(t, sets[2].Mode.agentreeFloorLocal())
	require.True(t, knownSets[2].Mode.agentreeFloorLocal())
	require.True(t, knownSets[2].Mode.naiveFloorLocal())
}

// TestTargetsAreJudgedWithinTheirSet: a set's targets read its own
// figures; one whose scenario did not run says so instead of judging a
// zero.
func TestTargetsAreJudgedWithinTheirSet(t *testing.T) {
	cfg, err := parseConfig(nil)
	require.NoError(t, err)
	r := &report{}
	r.add("concurrent_throughput_ratio", 1.6)
	r.add("concurrent_agentree_throughput", 16.0)
	r.add("concurrent_naive_throughput", 10.0)
	r.targets = targetsFor(knownSets[0], cfg)
	var out bytes.Buffer
	r.printTargets(&out, "set A")
	require.Regexp(t, `setA_concurrent_throughput_ratio >= 1.5 +16.00 vs 10.00 = 1.60 +met`, out.String())
	require.Regexp(t, `setA_ttft_added_p50_ms <= 40 +\(no ttft_added_p50_ms\) +not run`, out.String())
	require.NotContains(t, out.String(), "MISSED")

	// A figure that two decimals would print as its limit shows more.
	r = &report{}
	r.add("concurrent_throughput_ratio", 1.4976)
	r.add("concurrent_agentree_throughput", 78.29)
	r.add("concurrent_naive_throughput", 52.28)
	r.targets = targetsFor(knownSets[0], cfg)
	out.Reset()
	r.printTargets(&out, "set A")
	require.Regexp(t, `setA_concurrent_throughput_ratio >= 1.5 +78.29 vs 52.28 = 1.50 \(1.4976\) +MISSED`, out.String())

	var c []string
	for _, tg := range targetsFor(knownSets[2], cfg) {
		c = append(c, tg.what)
	}
	require.Contains(t, c, "setC_concurrent_throughput_ratio >= 1")
	require.Contains(t, c, "setC_turn_start_p50_ratio <= 1")
	require.NotContains(t, c, "setC_rss_ratio <= 1.5", "set A's alone")
}

// TestActionsCountHeartbeats: a workflow task completed only to ask for
// the next (a local activity still running) is an action, once, with or
// without the markers of local activities done by then; a task that
// holds local activities is one action for all of them; activity
// heartbeats are added as counted at the client.
func TestActionsCountHeartbeats(t *testing.T) {
	ev := func(typ enumspb.EventType) *historypb.HistoryEvent { return &historypb.HistoryEvent{EventType: typ} }
	marker := func(activityType string) *historypb.HistoryEvent {
		data, _ := json.Marshal(map[string]any{"ActivityID": "1", "ActivityType": activityType})
		return &historypb.HistoryEvent{EventType: enumspb.EVENT_TYPE_MARKER_RECORDED,
			Attributes: &historypb.HistoryEvent_MarkerRecordedEventAttributes{MarkerRecordedEventAttributes: &historypb.MarkerRecordedEventAttributes{
				MarkerName: "LocalActivity", Details: map[string]*commonpb.Payloads{"data": {Payloads: []*commonpb.Payload{{Data: data}}}},
			}}}
	}
	const (
		started   = enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED
		scheduled = enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED
		taskStart = enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED
		completed = enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED
		signaled  = enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED
	)
	evs := []*historypb.HistoryEvent{
		ev(started), ev(scheduled), ev(taskStart),
		// A heartbeat with the markers of two model calls done by then.
		ev(completed), marker(NaiveModelActivity), marker(NaiveToolActivity), ev(scheduled), ev(taskStart),
		// A heartbeat with none.
		ev(completed), ev(scheduled), ev(taskStart),
		// The task that ends the turn: its markers, then a wait for a signal.
		ev(completed), marker(NaiveModelActivity),
		ev(signaled), ev(scheduled), ev(taskStart),
		// A task that records nothing: no action.
		ev(completed),
	}
	a := actions{Heartbeats: 3}
	a.add(evs)
	require.Equal(t, 2, a.TaskHeartbeats)
	require.Equal(t, 1, a.LocalActivityTasks)
	require.Equal(t, 3, a.LocalActivities)
	require.Equal(t, 4, a.WorkflowTasks)
	require.Equal(t, 1+2+1+1+3, a.total(), "start, heartbeats, local-activity task, signal, activity heartbeats")
	require.Equal(t, 2, completedActivities(evs, NaiveModelActivity), "model calls counted from their markers")
}
