package customagent_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/samples/customagent"
	"github.com/agentree/agentree/samples/internal/sampleenv"
	"github.com/agentree/agentree/samples/internal/sampletest"
)

// TestReviewEndToEnd registers the custom agent with the plugin and runs
// the starter's review on a Temporal worker through the REST API: a
// draft, a rejection, a revision, an approval.
func TestReviewEndToEnd(t *testing.T) {
	env := sampletest.NewAccepting(t, customagent.Signals, adapter.Options{
		Agents:    []agentsdk.Agent{customagent.New()},
		Providers: []agentsdk.Provider{scripted.New(customagent.DraftScript())},
	})
	ex := env.Start(customagent.Kind, customagent.Config(customagent.Settings{}), customagent.Prompt)

	var seen []string
	reviewer := func(n int, draft string) (string, customagent.Decision) {
		seen = append(seen, draft)
		return customagent.Editor(n, draft)
	}
	var out strings.Builder
	ex, err := customagent.Review(env.Context(), env.API, ex.GetId(), reviewer, &out)
	require.NoError(t, err)
	require.Equal(t, "COMPLETED", ex.GetStatus(), ex.GetError())
	require.Equal(t, customagent.StopApproved, ex.GetStopReason())
	require.Equal(t, customagent.Drafts[:2], seen)

	printed := out.String()
	require.Contains(t, printed, customagent.Drafts[0]+"\n  • {\"draft\":1,")
	require.Contains(t, printed, "ana: reject. Less hype, please: say what it does.\n")
	require.Contains(t, printed, customagent.Drafts[1]+"\n  • {\"draft\":2,")
	require.Contains(t, printed, "ana: approve. Ship it.\n  • {\"by\":\"ana\",\"approved\":", "jsonb orders keys by length")

	require.Equal(t, "Approved by ana. Ship it.", sampleenv.OutputText(ex))
	require.Equal(t, []string{
		"user: " + customagent.Prompt,
		"assistant: " + customagent.Drafts[0],
		"user: Rejected by ana. Less hype, please: say what it does. Please revise the draft.",
		"assistant: " + customagent.Drafts[1],
		"user: Approved by ana. Ship it.",
	}, sampleenv.Texts(env.Conversation(ex.GetId())))
}
