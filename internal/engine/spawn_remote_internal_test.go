package engine

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/internal/domain"
)

// TestRemoteProblem: a call names only a remote agent the worker has, and
// gives it only a name and a prompt; an address in place of the name is a
// name the worker lacks.
func TestRemoteProblem(t *testing.T) {
	o := &Ops{RemoteAgents: []string{"researcher", "writer"}}
	for _, c := range []struct {
		agent agentsdk.SubAgent
		want  string
	}{
		{agentsdk.SubAgent{Remote: "researcher", Prompt: "go"}, ""},
		{agentsdk.SubAgent{Prompt: "a local one"}, ""},
		{agentsdk.SubAgent{Remote: "coder", Prompt: "go"}, `agents[0].remote: no remote agent "coder" (it has researcher, writer)`},
		{agentsdk.SubAgent{Remote: "https://evil.example/a2a", Prompt: "go"}, `agents[0].remote: no remote agent "https://evil.example/a2a" (it has researcher, writer)`},
		{agentsdk.SubAgent{Remote: "writer", Prompt: "go", Tools: []string{"bash"}}, "agents[0]: a remote agent has its own instructions, tools and budget: give it only name and prompt"},
		{agentsdk.SubAgent{Remote: "writer", Prompt: "go", ResumeRunID: "x"}, "agents[0]: a remote agent has its own instructions, tools and budget: give it only name and prompt"},
		{agentsdk.SubAgent{Remote: "writer", Prompt: " "}, "agents[0].prompt is empty"},
	} {
		require.Equal(t, c.want, o.remoteProblem(agentsdk.SpawnArgs{Agents: []agentsdk.SubAgent{c.agent}}), "%+v", c.agent)
	}
	none := &Ops{}
	require.Equal(t, `agents[0].remote: no remote agent "researcher" (this worker has none)`,
		none.remoteProblem(agentsdk.SpawnArgs{Agents: []agentsdk.SubAgent{{Remote: "researcher", Prompt: "go"}}}))
}

// TestSpawnAnswerNamesARemoteChild: the model reads which remote agent and
// task answered, not an execution that does not exist.
func TestSpawnAnswerNamesARemoteChild(t *testing.T) {
	text := spawnAnswer([]ChildOutcome{{ExecutionID: "c1", Name: "r", Status: string(domain.StatusCompleted), Remote: "researcher",
		RemoteTaskID: "t-1", Text: "the answer"}})
	require.Contains(t, text, "## r (COMPLETED, remote agent researcher, task t-1)\nthe answer")
}
