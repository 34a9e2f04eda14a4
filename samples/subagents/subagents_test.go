package subagents_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/samples/internal/sampletest"
	"github.com/agentree/agentree/samples/subagents"
)

// TestLeadAndTeam runs the sample on the dev server: the lead spawns three
// sub-agents, each searches the notes, and the lead answers from theirs.
func TestLeadAndTeam(t *testing.T) {
	env := sampletest.New(t, adapter.Options{
		Agents:    []agentsdk.Agent{react.New(react.Options{})},
		Providers: []agentsdk.Provider{scripted.New(subagents.Script())},
		Tools:     subagents.WorkerTools(),
	})
	var out strings.Builder
	ex, team, err := subagents.Run(env.Context(), env.Agentree, env.Store, env.Org.ID, &out)
	require.NoError(t, err, out.String())
	require.Equal(t, entrystore.StatusCompleted, ex.Status, ex.Error)
	require.Len(t, team, 3)
	for _, c := range team {
		require.Equal(t, entrystore.StatusCompleted, c.Status)
		require.Equal(t, ex.ID, c.ParentID)
		require.Equal(t, 2, c.StepCount, "a step with its tool call, and the answer's")
	}
	msgs := env.Conversation(ex)
	answer := msgs[len(msgs)-1].Text()
	require.Equal(t, "What the team found:\n"+
		"- On checkpoints: the note \"Segments and checkpoints\" covers it.\n"+
		"- On continue-as-new: the note \"Continue-as-new\" covers it.\n"+
		"- On large payloads: the note \"Large payloads\" covers it.", answer)
	require.Contains(t, out.String(), "→ spawn_agents")
}
