package agentsdk

import (
	"context"
	"errors"
)

// ToolSpawnAgents is the built-in tool through which a model starts
// sub-agents (seed 001): each runs as a child execution — its own
// workflow, entries and budget, parentId set — and the call's result is
// their answers. It runs in the agent's workflow, not as an activity: the
// agent (the react agent does) answers it with Context.SpawnAgents.
const ToolSpawnAgents = "spawn_agents"

// Spawn limits.
const (
	// MaxSpawnAgents is the most sub-agents one call starts.
	MaxSpawnAgents = 8
	// DefaultSubAgentSteps is a sub-agent's step budget (config.maxSteps)
	// unless the call gives one.
	DefaultSubAgentSteps = 20
)

// SpawnArgs are spawn_agents' arguments.
type SpawnArgs struct {
	Agents []SubAgent `json:"agents" jsonschema:"the sub-agents to start, at most 8; each works on its own and answers once"`
	// WaitFor is all (the default) or first.
	WaitFor string `json:"waitFor,omitempty" jsonschema:"all (default): the result holds every sub-agent's answer; first: the first answer, the others are cancelled"`
}

// SubAgent is one sub-agent to start.
type SubAgent struct {
	Name         string   `json:"name,omitempty" jsonschema:"a short name for the sub-agent, shown with its answer"`
	Prompt       string   `json:"prompt" jsonschema:"the sub-agent's task: everything it needs to know, it sees nothing else of this conversation"`
	SystemPrompt string   `json:"systemPrompt,omitempty" jsonschema:"its system prompt; default this agent's"`
	Tools        []string `json:"tools,omitempty" jsonschema:"the tools it may use, among this agent's own (spawn_agents excluded); default all of them"`
	MaxSteps     int      `json:"maxSteps,omitempty" jsonschema:"its step budget (tool calls); default 20; a sub-agent that spends it pauses"`
	ResumeRunID  string   `json:"resumeRunId,omitempty" jsonschema:"the execution ID of a paused sub-agent of yours to continue (its conversation goes on; prompt is then its next message, optional) instead of starting a new one"`
	// Remote names an operator-configured remote A2A agent (RemoteAgent)
	// that does the task instead of a local sub-agent: never a URL.
	Remote string `json:"remote,omitempty" jsonschema:"the name of a remote agent (listed in this tool's description, if any) that does this task instead of a local sub-agent; it has its own tools and instructions, so give only prompt"`
}

// errSpawnInWorkflow: spawn_agents is answered by the agent's workflow; a
// call that reaches the activity means the agent does not support it.
var errSpawnInWorkflow = errors.New("spawn_agents is run by the agent itself; this agent does not support sub-agents")

// SpawnAgentsTool is spawn_agents as a worker serves it: its schema for
// the model. The agent answers its calls (Context.SpawnAgents); run as an
// ordinary tool it says so.
func SpawnAgentsTool() *Tool {
	t := NewTool(ToolSpawnAgents, "Starts sub-agents that work on separate tasks in parallel, each with its own "+
		"conversation and tools, and returns their answers. Give each a complete, self-contained prompt.",
		func(context.Context, ToolInvocation, SpawnArgs) (string, error) { return "", errSpawnInWorkflow })
	t.Risk = RiskMedium
	return t
}
