package adapter_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/anthropic"
	"github.com/agentree/agentree/agentsdk/providertest"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/entrystore"
)

const fastModel = "claude-sonnet-4-5-20250929"

// slowAnthropic is a fake Anthropic server that streams words one event
// every gap until the answer is done or the client goes away. It counts
// requests, events written and requests the client cancelled, and notes
// when the last cancelled one ended.
type slowAnthropic struct {
	srv                        *httptest.Server
	requests, events, canceled atomic.Int64
	canceledAt                 atomic.Pointer[time.Time]
}

func newSlowAnthropic(t *testing.T, words int, gap time.Duration) *slowAnthropic {
	s := &slowAnthropic{}
	chunks := make([]string, words)
	for i := range chunks {
		chunks[i] = "word "
	}
	stream := providertest.NewAnthropicStream(fastModel, providertest.AnthropicUsage{Input: 12}).
		Text(chunks...).End("end_turn", int64(words))
	events := strings.SplitAfter(stream, "\n\n")
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		s.requests.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range events {
			_, _ = io.WriteString(w, e)
			w.(http.Flusher).Flush()
			s.events.Add(1)
			select {
			case <-time.After(gap):
			case <-r.Context().Done():
				now := time.Now()
				s.canceledAt.Store(&now)
				s.canceled.Add(1)
				return
			}
		}
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *slowAnthropic) provider(t *testing.T) agentsdk.Provider {
	p, err := anthropic.New(anthropic.Options{BaseURL: s.srv.URL, APIKey: "sk-ant-test"})
	require.NoError(t, err)
	return p
}

// modelCalls counts an execution's model calls by how they ran: local
// activities' markers and activities scheduled.
func modelCalls(t *testing.T, h *harness, id string) (local, activities int) {
	for _, run := range h.runs(id) {
		for _, e := range h.history(id, run.RunID).Events {
			switch e.GetEventType() {
			case enumspb.EVENT_TYPE_MARKER_RECORDED:
				if localActivityType(t, e.GetMarkerRecordedEventAttributes()) == adapter.CallModelActivity {
					local++
				}
			case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
				if e.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName() == adapter.CallModelActivity {
					activities++
				}
			}
		}
	}
	return local, activities
}

// TestDefaultModeIsTheFastPath: a plugin given nothing but its agents'
// model and tools runs model calls and tool calls as local activities —
// what make bench measures fastest — and schedules no activity for
// either.
func TestDefaultModeIsTheFastPath(t *testing.T) {
	var runs atomic.Int32
	model := scripted.New(scripted.Turns(
		scripted.Turn{ToolCalls: []agentsdk.ToolCall{{ID: "c1", Name: "echo", Arguments: []byte(`{"text":"hi"}`)}}},
		scripted.Turn{Text: "Done."},
	))
	h := newHarness(t, adapter.Options{Providers: []agentsdk.Provider{model},
		Tools: []*agentsdk.Tool{countingTool("echo", false, &runs)}}, false)
	ex := h.start(agentsdk.Config{Tools: []string{"echo"}}, "go")
	res := h.wait(ex.ID, time.Minute)
	require.Equal(t, "COMPLETED", res.Status, res.Error)
	local, activities := modelCalls(t, h, ex.ID)
	require.Equal(t, 2, local, "both model calls ran as local activities")
	require.Zero(t, activities, "no model call was scheduled as an activity")
	require.Empty(t, toolActivities(t, h, ex.ID), "no tool call was scheduled as an activity")
	require.Equal(t, 1, localToolCalls(t, h, ex.ID), "the tool call ran as a local activity")
	require.Equal(t, int32(1), runs.Load())
}

// localToolCalls counts the tool calls an execution ran as local
// activities, by their markers.
func localToolCalls(t *testing.T, h *harness, id string) int {
	n := 0
	for _, run := range h.runs(id) {
		for _, e := range h.history(id, run.RunID).Events {
			if m := e.GetMarkerRecordedEventAttributes(); m != nil && m.GetMarkerName() == "LocalActivity" {
				if typ := localActivityType(t, m); typ == adapter.RunToolActivity || typ == adapter.ExecuteToolActivity {
					n++
				}
			}
		}
	}
	return n
}

// TestCancelStopsAStreamingCallQuickly: a cancel request stops a model
// call that streams as a local activity without waiting for its workflow
// task's next heartbeat: the worker finds the execution CANCELLING in the
// store and ends the call, the model is asked once, and the execution ends
// CANCELLED.
func TestCancelStopsAStreamingCallQuickly(t *testing.T) {
	srv := newSlowAnthropic(t, 400, 50*time.Millisecond) // 20 s of words
	h := newHarness(t, adapter.Options{Providers: []agentsdk.Provider{srv.provider(t)}, ReconcileInterval: -1}, false)
	ex := h.start(agentsdk.Config{Models: []agentsdk.ModelRef{{Provider: "anthropic", ModelID: fastModel}}}, "Talk.")
	require.Eventually(t, func() bool { return srv.events.Load() > 5 }, time.Minute, 5*time.Millisecond, "the model never streamed")

	asked := time.Now()
	_, err := h.ac.Cancel(context.Background(), h.org.ID, ex.ID)
	require.NoError(t, err)
	// Well before the workflow task's heartbeat (4 s) would carry the
	// cancel request to the call.
	require.Eventually(t, func() bool { return srv.canceled.Load() == 1 }, 3*time.Second, 5*time.Millisecond,
		"the streaming call went on after the cancel request")
	t.Logf("the call stopped %v after the cancel request", srv.canceledAt.Load().Sub(asked))
	h.waitStatus(ex.ID, entrystore.StatusCancelled, time.Minute)
	require.Equal(t, int64(1), srv.requests.Load(), "the cancelled call was not made again")
	local, activities := modelCalls(t, h, ex.ID)
	require.Equal(t, 1, local, "the call ran as a local activity")
	require.Zero(t, activities, "no activity took the cancelled call over")
}

// TestLongCallFallsBackToAnActivity: a model call whose local first
// attempt outlasts LocalCallLimit is made again as an activity, which
// heartbeats, and its answer completes the execution.
func TestLongCallFallsBackToAnActivity(t *testing.T) {
	srv := newSlowAnthropic(t, 30, 100*time.Millisecond) // 3 s of words
	h := newHarness(t, adapter.Options{Providers: []agentsdk.Provider{srv.provider(t)}, LocalCallLimit: time.Second,
		ReconcileInterval: -1}, false)
	ex := h.start(agentsdk.Config{Models: []agentsdk.ModelRef{{Provider: "anthropic", ModelID: fastModel}}}, "Talk.")
	res := h.wait(ex.ID, time.Minute)
	require.Equal(t, "COMPLETED", res.Status, res.Error)
	require.Equal(t, strings.Repeat("word ", 30), res.Text)
	require.Equal(t, int64(2), srv.requests.Load(), "the local attempt, then the activity's")
	require.Equal(t, int64(1), srv.canceled.Load(), "the local attempt was stopped at its limit")
	local, activities := modelCalls(t, h, ex.ID)
	require.Equal(t, 1, local, "one local attempt")
	require.Equal(t, 1, activities, "one activity took the call over")
	// The activity's attempt counted no model failure: the limit is not
	// the model's fault.
	for _, run := range h.runs(ex.ID) {
		for _, e := range h.history(ex.ID, run.RunID).Events {
			if a := e.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == adapter.CallModelActivity {
				require.NotContains(t, string(a.GetInput().GetPayloads()[0].GetData()), `"failures"`)
			}
		}
	}
}
