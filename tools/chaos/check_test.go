package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/event"
	"github.com/agentree/agentree/agentsdk/scripted"
)

func msgEntry(t *testing.T, id, parent string, m agentsdk.Message, at time.Time) *entry {
	b, err := json.Marshal(m)
	require.NoError(t, err)
	return &entry{ID: id, Parent: parent, Type: "message", Role: string(m.Role), Content: string(b), Created: at}
}

// TestModelRerunIsFoundInTheCallLog: a call logged as started after its
// answer was stored is a rerun; one started before is not.
func TestModelRerunIsFoundInTheCallLog(t *testing.T) {
	t0 := time.Now()
	chain := []*entry{
		msgEntry(t, "u", "", agentsdk.TextMessage(agentsdk.RoleUser, "[s1-c00-m0] q"), t0),
		msgEntry(t, "a", "u", agentsdk.TextMessage(agentsdk.RoleAssistant, "answer"), t0.Add(2*time.Second)),
	}
	cv := &conversation{ExecID: "x"}
	f := &findings{DuplicatedBy: map[string]int{}}
	checkModelReruns(cv, chain, []scripted.CallRecord{{At: t0.Add(time.Second), Phase: "start", Turn: 0, User: "[s1-c00-m0] q"}}, f)
	require.Zero(t, f.Rerun)
	checkModelReruns(cv, chain, []scripted.CallRecord{{At: t0.Add(3 * time.Second), Phase: "start", Turn: 0, User: "[s1-c00-m0] q"}}, f)
	require.Equal(t, 1, f.Rerun)
	checkModelReruns(cv, chain, []scripted.CallRecord{{At: t0.Add(3 * time.Second), Phase: "start", Turn: 1, User: "[s1-c00-m0] q"}}, f)
	require.Equal(t, 1, f.Rerun, "another turn is another call")
}

func TestAnswersNeedsAnAnswerToTheTaggedMessage(t *testing.T) {
	now := time.Now()
	user := msgEntry(t, "u", "", agentsdk.TextMessage(agentsdk.RoleUser, "[s1-c00-m1] q"), now)
	answer := msgEntry(t, "a", "u", agentsdk.TextMessage(agentsdk.RoleAssistant, "done"), now)
	calling := msgEntry(t, "b", "u", agentsdk.Message{Role: agentsdk.RoleAssistant, Content: []agentsdk.Block{
		{Type: agentsdk.BlockToolCall, ToolCall: &agentsdk.ToolCall{ID: "c", Name: "search_notes"}},
	}}, now)
	require.True(t, answers([]*entry{user, answer}, "s1-c00-m1"))
	require.False(t, answers([]*entry{user, answer}, "s1-c00-m2"), "another message")
	require.False(t, answers([]*entry{user, calling}, "s1-c00-m1"), "a tool call is no answer")
	require.False(t, answers([]*entry{user}, "s1-c00-m1"))
}

func TestDescendantsCountsWorkBelowTheLeaf(t *testing.T) {
	es := []*entry{{ID: "r"}, {ID: "a", Parent: "r"}, {ID: "b", Parent: "a"}, {ID: "c", Parent: "b"}, {ID: "x", Parent: "r"}}
	require.Equal(t, 2, descendants("a", es))
	require.Equal(t, 0, descendants("c", es))
}

// TestCheckDeliveryCountsSSEEventsReceivedTwice: an event received twice
// (a resume that repeated it) is chaos_sse_duplicated, one received after
// a higher ID chaos_sse_out_of_order, one never received undelivered.
func TestCheckDeliveryCountsSSEEventsReceivedTwice(t *testing.T) {
	f := &findings{DuplicatedBy: map[string]int{}}
	checkDelivery("x", []int64{1, 2, 3, 4, 5}, map[int64]string{5: "agent.waiting"}, []int64{1, 2, 3, 1, 2, 3, 4}, f)
	require.Equal(t, 3, f.SSEDuplicated)
	require.Equal(t, 3, f.DuplicatedBy["SSE delivery"])
	require.Zero(t, f.SSEOutOfOrder, "a repeat is not also out of order")
	require.Equal(t, 1, f.Undelivered, "event 5")
	require.Contains(t, strings.Join(f.Examples, "\n"), "(5 agent.waiting; the highest received: 4)", "the example names it")

	f = &findings{DuplicatedBy: map[string]int{}}
	checkDelivery("x", []int64{1, 2, 3}, nil, []int64{1, 3, 2}, f)
	require.Zero(t, f.SSEDuplicated)
	require.Equal(t, 1, f.SSEOutOfOrder)
	require.Zero(t, f.Undelivered)

	var out strings.Builder
	(&outcome{found: f}).print(&out)
	require.Contains(t, out.String(), "\nchaos_sse_duplicated=0\n")
	require.Contains(t, out.String(), "\nchaos_sse_out_of_order=1\n")
}

// TestCheckEventsTellsAnInterruptedCallFromARerun: a tool call announced
// failed with its context cancelled and then started again was cut short
// (chaos_interrupted), not ended and run again; a start after its real
// end is a rerun, and an end announced twice a duplicate. An
// interruption never followed by a start is the call's end.
func TestCheckEventsTellsAnInterruptedCallFromARerun(t *testing.T) {
	started := &event.TaskStarted{TaskExecutionID: "c"}
	cut := &event.TaskFailed{TaskExecutionID: "c", Error: interruptedError}
	done := &event.TaskCompleted{TaskExecutionID: "c"}
	seq := func(evs ...event.Event) []storedEvent {
		out := make([]storedEvent, len(evs))
		for i, e := range evs {
			out[i] = storedEvent{id: int64(i + 1), ev: e}
		}
		return out
	}

	f := &findings{DuplicatedBy: map[string]int{}}
	checkEvents("x", seq(started, cut, started, done), f)
	require.Zero(t, f.Rerun)
	require.Zero(t, f.Duplicated)
	require.Equal(t, 1, f.Interrupted)

	f = &findings{DuplicatedBy: map[string]int{}}
	checkEvents("x", seq(started, done, started, done), f)
	require.Equal(t, 1, f.Rerun)
	require.Equal(t, 1, f.Duplicated)
	require.Zero(t, f.Interrupted)

	f = &findings{DuplicatedBy: map[string]int{}}
	checkEvents("x", seq(started, &event.TaskFailed{TaskExecutionID: "c", Error: "boom"}, started, done), f)
	require.Equal(t, 1, f.Rerun, "a failure other than an interruption is an end")
	require.Equal(t, 1, f.Duplicated)

	f = &findings{DuplicatedBy: map[string]int{}}
	checkEvents("x", seq(started, done, cut), f)
	require.Equal(t, 1, f.Duplicated, "a cancel after the call's end is a second end")
	require.Zero(t, f.Interrupted)
}
