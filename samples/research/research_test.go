package research_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/agentsdk/tools/demo"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/samples/internal/sampleenv"
	"github.com/agentree/agentree/samples/internal/sampletest"
)

// answerStart is how the note the session should find begins.
const answerStart = "Agentree keeps the conversation in a Postgres side store"

// toolNames lists the names of the conversation's tool results, in order.
func toolNames(msgs []agentsdk.Message) []string {
	var out []string
	for _, m := range msgs {
		if m.Role == agentsdk.RoleToolResult {
			out = append(out, m.ToolName)
		}
	}
	return out
}

// TestResearchEndToEnd runs the sample as its worker and starter do: the
// react-agent on a Temporal worker, the conversation in Postgres, the
// stream followed until the execution completes.
func TestResearchEndToEnd(t *testing.T) {
	env := sampletest.New(t, adapter.Options{
		Agents:    []agentsdk.Agent{react.New(react.Options{})},
		Providers: []agentsdk.Provider{demo.Model()},
		Tools:     demo.Tools(),
	})
	ex, printed := env.Follow(env.Start(react.Kind, demo.Config(), demo.Prompt).ID, sampleenv.Ended)
	require.Equal(t, entrystore.StatusCompleted, ex.Status, ex.Error)
	require.Equal(t, 4, ex.StepCount, "a step per model call: three with tool calls, and the answer")
	require.Contains(t, printed, "I'll search my notes for that.\n  → search_notes {\"query\":")
	require.Contains(t, printed, "  ← 3 notes match")
	require.Contains(t, printed, "\n"+answerStart)

	res, err := env.Agentree.Wait(env.Context(), ex.ID)
	require.NoError(t, err)
	require.Equal(t, "COMPLETED", res.Status)
	require.True(t, strings.HasPrefix(res.Text, answerStart), res.Text)

	msgs := env.Conversation(ex)
	require.Equal(t, []string{demo.SearchNotesTool, demo.FetchNoteTool, demo.WordCountTool}, toolNames(msgs))
	require.Equal(t, res.Text, msgs[len(msgs)-1].Text())
}
