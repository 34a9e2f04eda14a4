package adapter_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/worker"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/entrystore"
)

// sleepCall is a sleep tool call with its arguments as JSON.
func sleepCall(id, args string) agentsdk.ToolCall {
	return agentsdk.ToolCall{ID: id, Name: agentsdk.ToolSleep, Arguments: []byte(args)}
}

// waitMeta is what a waiting checkpoint's metadata says it waits for.
type waitMeta struct {
	WaitingFor string     `json:"waitingFor"`
	WakeAt     *time.Time `json:"wakeAt"`
}

// TestAgentSleepsAndWakesOnATimer: a model's sleep call ends the segment
// WAITING on a Temporal timer, with the deadline shown; the run has no
// workflow task while it sleeps; the worker that started the sleep stops
// and a new one wakes it on time; a user message sent meanwhile does not
// wake it early (the call did not ask) and joins after the wake; the next
// model call reads that it woke on time.
func TestAgentSleepsAndWakesOnATimer(t *testing.T) {
	var sawResult string
	model := scripted.New(func(turn int, req agentsdk.ModelRequest) scripted.Turn {
		switch turn {
		case 0:
			// Long enough that the message below, sent after a worker
			// stops on a loaded machine, still comes while it sleeps.
			return scripted.Turn{ToolCalls: []agentsdk.ToolCall{sleepCall("nap", `{"seconds":8}`)}}
		case 1:
			for _, m := range req.Messages {
				if m.Role == agentsdk.RoleToolResult {
					sawResult = m.Text()
				}
			}
			return scripted.Turn{Text: "awake, and no news"}
		}
		return scripted.Turn{Text: "nothing more"}
	})
	opts := adapter.Options{Providers: []agentsdk.Provider{model}, Tools: []*agentsdk.Tool{agentsdk.SleepTool(time.Minute)}}
	h := newHarness(t, opts, true)
	first := worker.New(h.tc, h.taskQueue, worker.Options{})
	require.NoError(t, first.Start())

	ex := h.start(agentsdk.Config{Tools: []string{agentsdk.ToolSleep}}, "check again in eight seconds")
	waiting := h.waitStatus(ex.ID, entrystore.StatusWaiting, 30*time.Second)
	cp, err := h.es.GetCheckpoint(context.Background(), h.org.ID, ex.ID, waiting.CheckpointSeq)
	require.NoError(t, err)
	var meta waitMeta
	require.NoError(t, json.Unmarshal(cp.Metadata, &meta))
	require.Equal(t, agentsdk.WaitTimer, meta.WaitingFor)
	require.NotNil(t, meta.WakeAt, "the waiting checkpoint shows when it wakes")
	require.WithinDuration(t, time.Now().Add(8*time.Second), *meta.WakeAt, 4*time.Second)

	// The worker that began the sleep goes away; a message comes while
	// nobody runs the execution; another worker takes over.
	first.Stop()
	_, err = h.ac.Signal(context.Background(), h.org.ID, ex.ID, agentsdk.SignalUserMessage, []byte(`{"text":"any news?"}`))
	require.NoError(t, err)
	second := worker.New(h.tc, h.taskQueue, worker.Options{})
	require.NoError(t, second.Start())
	t.Cleanup(second.Stop)

	done := h.waitStatus(ex.ID, entrystore.StatusCompleted, time.Minute)
	require.NotNil(t, done.CompletedAt)
	require.False(t, done.CompletedAt.Before(*meta.WakeAt), "it woke at %s, before its deadline %s", done.CompletedAt, meta.WakeAt)
	require.Contains(t, sawResult, "woke on time")

	msgs := h.path(done.LeafEntryID)
	require.Equal(t, "user,assistant,tool_result,user,assistant", roleList(msgs),
		"the message joined after the wake, the sleep's result before it")
	require.Equal(t, "any news?", msgs[3].Text())

	// No workflow task between a timer's start and its end but the one
	// the message woke (it re-arms the timer for the time left): the
	// execution held nothing while it slept.
	started, canceled, fired, tasks, signals := 0, 0, 0, 0, 0
	for _, r := range h.runs(ex.ID) {
		inSleep := false
		for _, e := range h.history(ex.ID, r.RunID).Events {
			switch e.GetEventType() {
			case enumspb.EVENT_TYPE_TIMER_STARTED:
				started++
				inSleep = true
			case enumspb.EVENT_TYPE_TIMER_CANCELED:
				canceled++
			case enumspb.EVENT_TYPE_TIMER_FIRED:
				fired++
				inSleep = false
			case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
				if inSleep {
					signals++
				}
			case enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
				if inSleep {
					tasks++
				}
			}
		}
	}
	require.Equal(t, 1, fired, "the timer fired once")
	require.Equal(t, started-1, canceled, "a timer re-armed after the message, the first canceled")
	require.Equal(t, 1, signals, "the message came while it slept")
	require.Equal(t, signals, tasks, "workflow tasks scheduled while the execution slept, besides the message's")
}

// TestSleepBeyondTheLimitIsAToolError: a sleep longer than the worker's
// longest, a negative one and a bad until are answered with errors the
// model reads; the execution never waits on a timer for them.
func TestSleepBeyondTheLimitIsAToolError(t *testing.T) {
	model := scripted.New(scripted.Turns(
		scripted.Turn{ToolCalls: []agentsdk.ToolCall{sleepCall("long", `{"seconds":3600}`)}},
		scripted.Turn{ToolCalls: []agentsdk.ToolCall{sleepCall("neg", `{"seconds":-5}`)}},
		scripted.Turn{ToolCalls: []agentsdk.ToolCall{sleepCall("bad", `{"until":"tomorrow"}`)}},
		scripted.Turn{Text: "fine, no nap"},
	))
	opts := adapter.Options{Providers: []agentsdk.Provider{model}, Tools: []*agentsdk.Tool{agentsdk.SleepTool(time.Minute)}, MaxSleep: time.Minute}
	h := newHarness(t, opts, false)
	ex := h.start(agentsdk.Config{Tools: []string{agentsdk.ToolSleep}}, "nap")
	res := h.wait(ex.ID, time.Minute)
	require.Equal(t, "COMPLETED", res.Status)
	var results []string
	for _, m := range h.path(res.LeafID) {
		if m.Role == agentsdk.RoleToolResult {
			results = append(results, m.Text())
		}
	}
	require.Len(t, results, 3)
	require.Contains(t, results[0], "longer than the longest sleep allowed, 1m0s")
	require.Contains(t, results[1], "negative")
	require.Contains(t, results[2], "not an RFC 3339 time")
	for _, r := range results {
		require.True(t, strings.HasPrefix(r, "error: "), r)
	}
}

// TestSleepReArmsInTheNextRun: a run that ends as its execution begins
// to sleep (RunEvents 1: a new run at every checkpoint) hands the wake
// time to the next run, which waits on its own timer and wakes on time.
func TestSleepReArmsInTheNextRun(t *testing.T) {
	model := scripted.New(scripted.Turns(
		scripted.Turn{ToolCalls: []agentsdk.ToolCall{sleepCall("nap", `{"seconds":1}`)}},
		scripted.Turn{Text: "awake"},
	))
	opts := adapter.Options{Providers: []agentsdk.Provider{model}, Tools: []*agentsdk.Tool{agentsdk.SleepTool(0)}, RunEvents: 1}
	h := newHarness(t, opts, false)
	ex := h.start(agentsdk.Config{Tools: []string{agentsdk.ToolSleep}}, "nap a second")
	res := h.wait(ex.ID, time.Minute)
	require.Equal(t, "COMPLETED", res.Status)
	msgs := h.path(res.LeafID)
	require.Equal(t, "user,assistant,tool_result,assistant", roleList(msgs))
	require.Contains(t, msgs[2].Text(), "woke on time")
	require.Greater(t, len(h.runs(ex.ID)), 1, "the sleep spanned runs")
}

// TestMessageWakesASleepThatAsked: a sleep with wakeOnMessage ends when a
// user message arrives, long before its deadline: the call's result says
// it woke early, the message follows it, and the timer is cancelled.
func TestMessageWakesASleepThatAsked(t *testing.T) {
	model := scripted.New(scripted.Turns(
		scripted.Turn{ToolCalls: []agentsdk.ToolCall{sleepCall("nap", `{"seconds":600,"wakeOnMessage":true}`)}},
		scripted.Turn{Text: "you woke me"},
	))
	opts := adapter.Options{Providers: []agentsdk.Provider{model}, Tools: []*agentsdk.Tool{agentsdk.SleepTool(time.Hour)}}
	h := newHarness(t, opts, false)
	ex := h.start(agentsdk.Config{Tools: []string{agentsdk.ToolSleep}}, "nap until I call")
	h.waitStatus(ex.ID, entrystore.StatusWaiting, 30*time.Second)
	_, err := h.ac.Signal(context.Background(), h.org.ID, ex.ID, agentsdk.SignalUserMessage, []byte(`{"text":"wake up"}`))
	require.NoError(t, err)
	res := h.wait(ex.ID, time.Minute)
	require.Equal(t, "COMPLETED", res.Status)
	msgs := h.path(res.LeafID)
	require.Equal(t, "user,assistant,tool_result,user,assistant", roleList(msgs))
	require.Contains(t, msgs[2].Text(), "woke early")
	require.Equal(t, "wake up", msgs[3].Text())
	canceled := 0
	for _, r := range h.runs(ex.ID) {
		for _, e := range h.history(ex.ID, r.RunID).Events {
			if e.GetEventType() == enumspb.EVENT_TYPE_TIMER_CANCELED {
				canceled++
			}
		}
	}
	require.Equal(t, 1, canceled, "the sleep's timer was cancelled, not left to fire")
}
