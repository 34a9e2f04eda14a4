package gateway

import (
	"encoding/json"
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
