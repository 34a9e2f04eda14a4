package research_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/agentsdk/tools/demo"
	agentreev1 "github.com/agentree/agentree/proto/agentree/v1"
	"github.com/agentree/agentree/samples/internal/sampleenv"
	"github.com/agentree/agentree/samples/internal/sampletest"
)

// answerStart is how the note the session should find begins.
const answerStart = "Agentree keeps the conversation in a Postgres side store"

// toolNames lists the names of the conversation's tool results, in order.
func toolNames(msgs []*agentreev1.Message) []string {
	var out []string
	for _, m := range msgs {
		if m.GetRole() == string(agentsdk.RoleToolResult) {
			out = append(out, m.GetToolName())
		}
	}
	return out
}

// TestResearchEndToEnd runs the sample as its worker and starter do: the
// react-agent on a Temporal worker, the conversation in Postgres, the
// execution created and its stream followed through the REST API until it
// completes.
func TestResearchEndToEnd(t *testing.T) {
	env := sampletest.New(t, adapter.Options{
		Agents:    []agentsdk.Agent{react.New(react.Options{})},
		Providers: []agentsdk.Provider{demo.Model()},
		Tools:     demo.Tools(),
	})
	ex, printed := env.Follow(env.Start(react.Kind, demo.Config(), demo.Prompt).GetId(), sampleenv.Ended)
	require.Equal(t, "COMPLETED", ex.GetStatus(), ex.GetError())
	require.EqualValues(t, 4, ex.GetStepCount(), "a step per model call: three with tool calls, and the answer")
	require.Contains(t, printed, "I'll search my notes for that.\n  → search_notes {\"query\":")
	require.Contains(t, printed, "  ← 3 notes match")
	require.Contains(t, printed, "\n"+answerStart)

	text := sampleenv.OutputText(ex)
	require.True(t, strings.HasPrefix(text, answerStart), text)

	msgs := env.Conversation(ex.GetId())
	require.Equal(t, []string{demo.SearchNotesTool, demo.FetchNoteTool, demo.WordCountTool}, toolNames(msgs))
	require.Equal(t, text, sampleenv.Text(msgs[len(msgs)-1]))
}
