package subagents_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/samples/internal/sampleenv"
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
	ex, team, err := subagents.Run(env.Context(), env.API, &out)
	require.NoError(t, err, out.String())
	require.Equal(t, "COMPLETED", ex.GetStatus(), ex.GetError())
	require.Len(t, team, 3)
	for _, c := range team {
		require.Equal(t, "COMPLETED", c.GetStatus())
		require.Equal(t, ex.GetId(), c.GetParentId())
		require.EqualValues(t, 2, c.GetStepCount(), "a step with its tool call, and the answer's")
	}
	msgs := env.Conversation(ex.GetId())
	answer := sampleenv.Text(msgs[len(msgs)-1])
	require.Equal(t, "What the team found:\n"+
		"- On checkpoints: the note \"Segments and checkpoints\" covers it.\n"+
		"- On continue-as-new: the note \"Continue-as-new\" covers it.\n"+
		"- On large payloads: the note \"Large payloads\" covers it.", answer)
	require.Contains(t, out.String(), "→ spawn_agents")
}
