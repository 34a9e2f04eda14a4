package step

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk/event"
)

// Only adjacent deltas of one kind are merged under backpressure: text
// of one call, thinking of one call, argument fragments of one tool call.
func TestMergeJoinsOnlyDeltasOfOneKind(t *testing.T) {
	tok := func(task, s string) event.Event {
		return event.Token{AgentExecutionID: "x", TaskExecutionID: task, Data: s}
	}
	data := func(task, typ, id, s string) event.Event {
		p := event.Payload{Type: typ}
		if id != "" {
			p.ToolCall = &event.ToolCall{ID: id}
		}
		if typ == event.TypeThinkingDelta {
			p.Text = s
		} else {
			p.Delta = s
		}
		return event.Data{AgentExecutionID: "x", TaskExecutionID: task, Data: p}
	}
	for name, c := range map[string]struct {
		a, b, want event.Event
	}{
		"tokens of a call":    {tok("k", "Hel"), tok("k", "lo"), tok("k", "Hello")},
		"tokens of two calls": {tok("k", "a"), tok("j", "b"), nil},
		"thinking":            {data("k", event.TypeThinkingDelta, "", "hm"), data("k", event.TypeThinkingDelta, "", "m"), data("k", event.TypeThinkingDelta, "", "hmm")},
		"arguments of a call": {data("k", event.TypeToolCallDelta, "c1", `{"a"`), data("k", event.TypeToolCallDelta, "c1", `:1}`), data("k", event.TypeToolCallDelta, "c1", `{"a":1}`)},
		"arguments of two":    {data("k", event.TypeToolCallDelta, "c1", `{}`), data("k", event.TypeToolCallDelta, "c2", `{}`), nil},
		"a tool call's start": {data("k", event.TypeToolCallStart, "c1", ""), data("k", event.TypeToolCallStart, "c2", ""), nil},
		"a tool call's end":   {data("k", event.TypeToolCallDelta, "c1", `{}`), data("k", event.TypeToolCallEnd, "c1", ""), nil},
		"a token then data":   {tok("k", "a"), data("k", event.TypeThinkingDelta, "", "b"), nil},
	} {
		got, ok := merge(c.a, c.b)
		require.Equal(t, c.want != nil, ok, name)
		require.Equal(t, c.want, got, name)
	}
}
