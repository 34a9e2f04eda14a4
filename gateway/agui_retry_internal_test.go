package gateway

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk/event"
	"github.com/agentree/agentree/entrystore"
)

// TestAGUIRetriedCallTextSentOnce: a model call cut after its first token
// and made again streams its text from the start under the same task; the
// AG-UI stream sends each byte of the message once, in one message.
func TestAGUIRetriedCallTextSentOnce(t *testing.T) {
	m := newAGUIMapper("thread-1")
	tokens := []event.Token{
		{AgentExecutionID: "ex", TaskExecutionID: "0/1", Data: "Survives "},
		{AgentExecutionID: "ex", TaskExecutionID: "0/1", Data: "Survives "},            // the retry, from 0
		{AgentExecutionID: "ex", TaskExecutionID: "0/1", Data: "the kill.", Offset: 9}, // and on
	}
	var text string
	starts := 0
	for i, tok := range tokens {
		data, err := json.Marshal(tok)
		require.NoError(t, err)
		for _, e := range m.mapEvent(entrystore.StreamEvent{ID: int64(i + 1), Event: event.NameToken, Data: data, CreatedAt: time.Now()}) {
			switch e.Type {
			case "TEXT_MESSAGE_START":
				starts++
			case "TEXT_MESSAGE_CONTENT":
				text += e.Delta
			}
		}
	}
	require.Equal(t, "Survives the kill.", text)
	require.Equal(t, 1, starts, "one message")
}

// TestToolCallStartedAgainIsOneStep: a tool call started again (an
// attempt failed, or its worker stopped) under the same ID is one AG-UI
// step and one Responses mcp_call item, not a second one.
func TestToolCallStartedAgainIsOneStep(t *testing.T) {
	started, err := json.Marshal(event.TaskStarted{AgentExecutionID: "ex", TaskExecutionID: "c1", Kind: "search"})
	require.NoError(t, err)
	ended, err := json.Marshal(event.TaskCompleted{AgentExecutionID: "ex", TaskExecutionID: "c1", Kind: "search"})
	require.NoError(t, err)
	evs := []entrystore.StreamEvent{
		{ID: 1, Event: event.NameTaskStarted, Data: started, CreatedAt: time.Now()},
		{ID: 2, Event: event.NameTaskStarted, Data: started, CreatedAt: time.Now()},
		{ID: 3, Event: event.NameTaskCompleted, Data: ended, CreatedAt: time.Now()},
	}

	m := newAGUIMapper("thread-1")
	var types []string
	for _, ev := range evs {
		for _, e := range m.mapEvent(ev) {
			types = append(types, e.Type)
		}
	}
	require.Equal(t, []string{"RUN_STARTED", "STEP_STARTED", "STEP_FINISHED"}, types)

	rec := httptest.NewRecorder()
	o := &oaStream{w: rec, rc: http.NewResponseController(rec), items: map[string]int{}, done: map[string]bool{}, text: map[string]*bytes.Buffer{}}
	for _, ev := range evs {
		require.NoError(t, o.onEvent(ev))
	}
	require.Equal(t, 1, strings.Count(rec.Body.String(), "event: response.output_item.added"), rec.Body.String())
}
