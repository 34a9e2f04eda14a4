package step_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/internal/step"
)

// digestOf is the loop-detection digest step.Ref gives a tool call.
func digestOf(t *testing.T, name, args string) string {
	t.Helper()
	msg := agentsdk.Message{Role: agentsdk.RoleAssistant, Content: []agentsdk.Block{
		{Type: agentsdk.BlockToolCall, ToolCall: &agentsdk.ToolCall{ID: "c1", Name: name, Arguments: json.RawMessage(args)}},
	}}
	content, err := json.Marshal(msg)
	require.NoError(t, err)
	ref, err := step.Ref(agentsdk.Entry{ID: "e1", Type: agentsdk.EntryMessage, Role: agentsdk.RoleAssistant, Content: content})
	require.NoError(t, err)
	require.Len(t, ref.ToolCalls, 1)
	// A call its entry records no policy for is auto.
	require.Equal(t, agentsdk.ToolCallRef{ID: "c1", Name: name, Digest: ref.ToolCalls[0].Digest, Policy: agentsdk.PolicyAuto}, ref.ToolCalls[0])
	return ref.ToolCalls[0].Digest
}

func TestDigestIgnoresHowArgumentsAreSpaced(t *testing.T) {
	want := digestOf(t, "read", `{"path":"a.txt","lines":[1,2]}`)
	require.Len(t, want, 16)
	for _, args := range []string{
		`{ "path" : "a.txt", "lines" : [ 1, 2 ] }`,
		"{\n\t\"path\": \"a.txt\",\n\t\"lines\": [1,\n2]\n}",
		`{"lines":[1,2],"path":"a.txt"}`,
	} {
		require.Equal(t, want, digestOf(t, "read", args), args)
	}
}

func TestDigestTellsCallsApart(t *testing.T) {
	base := digestOf(t, "read", `{"path":"a.txt"}`)
	require.NotEqual(t, base, digestOf(t, "read", `{"path":"b.txt"}`), "other arguments")
	require.NotEqual(t, base, digestOf(t, "write", `{"path":"a.txt"}`), "other tool")
	require.NotEqual(t, digestOf(t, "ab", `{}`), digestOf(t, "a", `"b{}"`), "name and arguments do not run together")
}
