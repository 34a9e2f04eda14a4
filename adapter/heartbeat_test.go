package adapter_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/anthropic"
	"github.com/agentree/agentree/agentsdk/providertest"
)

// A model that thinks in silence for longer than the model-call heartbeat
// timeout, its connection open, is not taken for a dead worker: the call
// heartbeats on a timer, not on tokens, so it is made once and answers.
// Run as a local activity (the default), the workflow task that runs it
// heartbeats instead, past its own timeout; as an activity
// (Options.ActivityModelCalls), the activity does.
func TestSilentModelIsNotRetried(t *testing.T) {
	for _, remote := range []bool{false, true} {
		t.Run(map[bool]string{false: "local", true: "activity"}[remote], func(t *testing.T) { silentModel(t, remote) })
	}
}

func silentModel(t *testing.T, remote bool) {
	const (
		heartbeatTimeout = 2 * time.Second
		// silence outlasts the workflow task timeout (5 s) too.
		silence = 6 * time.Second
		modelID = "claude-sonnet-4-5-20250929"
	)
	head := providertest.NewAnthropicStream(modelID, providertest.AnthropicUsage{Input: 12}).String()
	answer := providertest.NewAnthropicStream(modelID, providertest.AnthropicUsage{Input: 12}).
		Text("Thought ", "it through.").End("end_turn", 4)
	answer = answer[len(head):] // the same stream, after its opening events
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		requests.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, head)
		w.(http.Flusher).Flush()
		// The model thinks: the connection stays open, nothing is sent.
		select {
		case <-time.After(silence):
		case <-r.Context().Done():
			return
		}
		_, _ = io.WriteString(w, answer)
	}))
	t.Cleanup(srv.Close)
	p, err := anthropic.New(anthropic.Options{BaseURL: srv.URL, APIKey: "sk-ant-test"})
	require.NoError(t, err)

	h := newHarness(t, adapter.Options{Providers: []agentsdk.Provider{p}, ModelHeartbeatTimeout: heartbeatTimeout, ActivityModelCalls: remote}, false)
	ex := h.start(agentsdk.Config{Models: []agentsdk.ModelRef{{Provider: "anthropic", ModelID: modelID}}}, "Think hard.")
	res := h.wait(ex.ID, 2*time.Minute)
	require.Equal(t, "COMPLETED", res.Status)
	require.Equal(t, "Thought it through.", res.Text)
	require.Equal(t, int64(1), requests.Load(), "the model was called once")

	// The history: one model-call activity, with the short heartbeat
	// timeout, that completed on its first attempt — or none, and no
	// workflow task timed out.
	var scheduled, started int
	for _, run := range h.runs(ex.ID) {
		for _, e := range h.history(ex.ID, run.RunID).Events {
			switch e.GetEventType() {
			case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
				a := e.GetActivityTaskScheduledEventAttributes()
				if a.GetActivityType().GetName() == adapter.CallModelActivity {
					scheduled++
					require.Equal(t, heartbeatTimeout, a.GetHeartbeatTimeout().AsDuration())
				}
			case enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
				started++
				require.Equal(t, int32(1), e.GetActivityTaskStartedEventAttributes().GetAttempt(), "no activity was retried")
			case enumspb.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT:
				t.Fatalf("an activity timed out: %v", e.GetActivityTaskTimedOutEventAttributes())
			case enumspb.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT, enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED:
				t.Fatalf("a workflow task failed: %v", e)
			}
		}
	}
	if !remote {
		require.Zero(t, scheduled, "the model call was a local activity")
		return
	}
	require.Equal(t, 1, scheduled, "one model call")
	require.NotZero(t, started)
}
