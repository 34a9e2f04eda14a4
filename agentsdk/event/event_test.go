package event_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk/event"
)

// Every named event decodes into its own type and back to the same JSON.
func TestRoundTrip(t *testing.T) {
	evs := []event.Event{
		event.Started{AgentExecutionID: "x", Status: "RUNNING"},
		event.Waiting{AgentExecutionID: "x", Status: "WAITING", Reason: "input"},
		event.Checkpoint{AgentExecutionID: "x", Sequence: 3},
		event.Token{AgentExecutionID: "x", TaskExecutionID: "t", Data: "Hel"},
		event.Data{AgentExecutionID: "x", Data: event.Payload{Type: event.TypeToolCallStart, ToolCall: &event.ToolCall{ID: "c1", Name: "bash"}}},
		event.TaskStarted{AgentExecutionID: "x", TaskExecutionID: "c1", Kind: "bash", Arguments: json.RawMessage(`{"cmd":"ls"}`)},
		event.Failed{AgentExecutionID: "x", Status: "FAILED", Error: "boom"},
		event.StreamError{Code: "unavailable", Message: "database unreachable", LastEventID: "12", RetryAfterMs: 1000},
	}
	for _, ev := range evs {
		b, err := json.Marshal(ev)
		require.NoError(t, err)
		got, err := event.Decode(ev.Name(), b)
		require.NoError(t, err, ev.Name())
		b2, err := json.Marshal(got)
		require.NoError(t, err)
		require.JSONEq(t, string(b), string(b2))
		require.Equal(t, ev.Name(), got.Name())
	}
}

func TestDecodeRefusesDrift(t *testing.T) {
	_, err := event.Decode(event.NameToken, []byte(`{"agentExecutionId":"x","text":"old shape"}`))
	require.ErrorContains(t, err, "text")
	_, err = event.Decode("agent.exploded", []byte(`{}`))
	require.ErrorContains(t, err, "unknown event")
}

func TestCustomWrapsValues(t *testing.T) {
	p, err := event.Custom(map[string]int{"done": 2})
	require.NoError(t, err)
	require.Equal(t, event.TypeCustom, p.Type)
	require.JSONEq(t, `{"done":2}`, string(p.Value))
	p, err = event.Custom(event.Payload{Type: event.TypeTerminal, Stream: "stdout", Output: "hi"})
	require.NoError(t, err)
	require.Equal(t, "hi", p.Output)
}

// TestTokenUnseen: a reader that has shown n bytes of a call's text gets
// all of a token that starts there or later, and only the unshown end of
// one a retried call streams again from its start, cut on a rune.
func TestTokenUnseen(t *testing.T) {
	tok := func(offset int, data string) event.Token { return event.Token{Offset: offset, Data: data} }
	require.Equal(t, "Survives ", tok(0, "Survives ").Unseen(0))
	require.Equal(t, "the kill.", tok(9, "the kill.").Unseen(9))
	require.Equal(t, "", tok(0, "Survives ").Unseen(9), "the retry's first token: shown already")
	require.Equal(t, "kill.", tok(0, "Survives the kill.").Unseen(13), "a merged retry token: only its end")
	require.Equal(t, "é!", tok(0, "café!").Unseen(3))
	require.Equal(t, "!", tok(0, "café!").Unseen(4), "a cut inside a rune moves to the next rune")
	require.Equal(t, "late", tok(20, "late").Unseen(5), "a gap: the token is sent whole")
}
