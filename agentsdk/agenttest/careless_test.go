package agenttest_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/agenttest"
	"github.com/agentree/agentree/agentsdk/scripted"
)

// carelessAgent runs every call its model makes, asking no one: the agent
// a bug (or an author who skipped RequestApproval) makes. The runtime's
// own checks are all that stands between it and the tools.
type carelessAgent struct{}

func (carelessAgent) Kind() string { return "careless" }

func (carelessAgent) RunSegment(ctx agentsdk.Context) (agentsdk.Outcome, error) {
	res, err := ctx.CallModel(agentsdk.ModelCall{})
	if err != nil {
		return agentsdk.Outcome{}, err
	}
	for _, tc := range res.Entry.ToolCalls {
		run := ctx.RunTool
		if tc.Name == agentsdk.ToolSpawnAgents {
			run = ctx.SpawnAgents
		}
		if _, err := run(res.Entry.ID, tc); err != nil {
			return agentsdk.Outcome{}, err
		}
	}
	return agentsdk.Complete("done"), nil
}

// TestCarelessAgentCannotRunUnapprovedCalls: calls whose policy is ask
// (the tool's own, or the operator's for spawn_agents) and forbid, run by
// an agent that never asked for approval, are answered with error results;
// the tool never runs and no sub-agent starts.
func TestCarelessAgentCannotRunUnapprovedCalls(t *testing.T) {
	var runs atomic.Int32
	deploy := agentsdk.NewTool("deploy", "Deploys.", func(context.Context, agentsdk.ToolInvocation, struct{}) (string, error) {
		runs.Add(1)
		return "deployed", nil
	})
	deploy.Policy = agentsdk.PolicyAsk
	wipe := agentsdk.NewTool("wipe", "Wipes.", func(context.Context, agentsdk.ToolInvocation, struct{}) (string, error) {
		runs.Add(1)
		return "wiped", nil
	})
	x, err := agenttest.Start(agenttest.Options{
		Agent: carelessAgent{},
		Providers: []agentsdk.Provider{scripted.New(scripted.Turns(scripted.Turn{ToolCalls: []agentsdk.ToolCall{
			{ID: "c1", Name: "deploy", Arguments: []byte(`{}`)},
			{ID: "c2", Name: "wipe", Arguments: []byte(`{}`)},
			{ID: "c3", Name: agentsdk.ToolSpawnAgents, Arguments: []byte(`{"agents":[{"prompt":"deploy it"}]}`)},
		}}))},
		Tools:      []*agentsdk.Tool{deploy, wipe, agentsdk.SpawnAgentsTool()},
		ToolPolicy: agentsdk.Policies{"wipe": agentsdk.PolicyForbid, agentsdk.ToolSpawnAgents: agentsdk.PolicyAsk},
		Config: agentsdk.Config{Models: []agentsdk.ModelRef{scripted.Model("")}, Tools: []string{"deploy", "wipe", agentsdk.ToolSpawnAgents},
			ToolPolicy: agentsdk.Policies{"*": agentsdk.PolicyAuto}},
		UserPrompt: "ship it",
	})
	require.NoError(t, err)
	require.NoError(t, x.Run(context.Background()))
	require.Equal(t, agenttest.StatusCompleted, x.Status, x.Reason)
	require.Zero(t, runs.Load(), "no tool ran")

	msgs, err := x.Messages()
	require.NoError(t, err)
	results := map[string]agentsdk.Message{}
	for _, m := range msgs {
		if m.Role == agentsdk.RoleToolResult {
			results[m.ToolCallID] = m
		}
	}
	require.Len(t, results, 3)
	for id, want := range map[string]string{
		"c1": `tool "deploy" needs a person's approval`,
		"c2": `tool "wipe" is forbidden by the operator's policy`,
		"c3": `tool "spawn_agents" needs a person's approval`,
	} {
		require.True(t, results[id].IsError, id)
		require.Contains(t, results[id].Text(), want, id)
	}
}
