package engine

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/internal/domain"
)

// TestSpawnAnswerSaysWhyAChildPaused: the model reads whether a sub-agent
// paused at its step budget or because its organization's daily budget is
// spent (and then why), since only the first is its own doing.
func TestSpawnAnswerSaysWhyAChildPaused(t *testing.T) {
	text := spawnAnswer([]ChildOutcome{
		{ExecutionID: "c1", Name: "steps", Status: string(domain.StatusPaused), StopReason: "max_steps"},
		{ExecutionID: "c2", Name: "budget", Status: string(domain.StatusPaused), StopReason: agentsdk.StopBudget,
			Error: "the organization's tokensPerDay quota is spent"},
	})
	require.Contains(t, text, "## steps (PAUSED, execution c1)\nIt spent its step budget before answering")
	require.Contains(t, text, "## budget (PAUSED, execution c2)\nIt paused before answering: the organization's tokensPerDay quota is spent. It can be resumed once its budget allows.")
}
