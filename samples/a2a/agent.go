package a2a

import (
	"encoding/json"
	"strings"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
)

// The two deployments' task queues: each has its own worker and gateway
// (the specialist's program is samples/a2a/specialist: sampleenv's
// WorkerCommand reads it after the dot).
const (
	TaskQueue           = "agentree-a2a"
	SpecialistTaskQueue = "agentree-a2a.specialist"
)

// SpecialistSlug is the slug of the specialist's definition, and so the
// last part of its A2A URL (/a2a/{org}/{slug}).
const SpecialistSlug = "specialist"

// RemoteName is what the lead's worker calls the specialist, and what
// spawn_agents names: a call names a configured agent, never a URL.
const RemoteName = "specialist"

// Question is the lead's task; SubQuestion is what it asks the
// specialist.
const (
	Question    = "Should our agents keep their conversations in Postgres or in Temporal's history?"
	SubQuestion = "Where should a durable agent keep a long conversation, and why?"
)

// SpecialistAnswer is what the specialist's scripted model answers.
const SpecialistAnswer = "In Postgres, one row per entry: Temporal's history then holds only " +
	"references, so it stays small however long the conversation grows."

// LeadSystemPrompt is for a real model; the scripted lead follows it.
const LeadSystemPrompt = `You lead. For questions on storage, ask the remote agent "specialist" with
spawn_agents ({"remote": "specialist"}), then answer from what it says.`

// LeadConfig is the lead's configuration: spawn_agents, the scripted
// model unless models are given.
func LeadConfig(models ...agentsdk.ModelRef) agentsdk.Config {
	if len(models) == 0 {
		models = []agentsdk.ModelRef{scripted.Model("")}
	}
	return agentsdk.Config{SystemPrompt: LeadSystemPrompt, Models: models,
		Tools: []string{agentsdk.ToolSpawnAgents}, Mode: agentsdk.ModeOneShot}
}

// LeadScript is the lead's scripted model: it asks the specialist, then
// answers with what the specialist said.
func LeadScript() scripted.Script {
	return func(_ int, req agentsdk.ModelRequest) scripted.Turn {
		last := req.Messages[len(req.Messages)-1]
		if last.Role == agentsdk.RoleToolResult {
			return scripted.Turn{Text: LeadAnswer(last.Text())}
		}
		args, _ := json.Marshal(agentsdk.SpawnArgs{Agents: []agentsdk.SubAgent{
			{Name: "storage", Remote: RemoteName, Prompt: SubQuestion}}})
		return scripted.Turn{Text: "A storage question: the specialist's.",
			ToolCalls: []agentsdk.ToolCall{{ID: "call_specialist", Name: agentsdk.ToolSpawnAgents, Arguments: args}}}
	}
}

// LeadAnswer is the lead's answer from spawn_agents' result: the
// specialist's answer, the lines after its "## storage (…)" heading.
func LeadAnswer(result string) string {
	_, rest, ok := strings.Cut(result, "## storage (")
	if !ok {
		return "The specialist did not answer: " + result
	}
	_, answer, _ := strings.Cut(rest, "\n")
	return "The specialist says: " + strings.TrimSpace(answer)
}

// SpecialistScript is the specialist's scripted model: one answer.
func SpecialistScript() scripted.Script {
	return func(int, agentsdk.ModelRequest) scripted.Turn { return scripted.Turn{Text: SpecialistAnswer} }
}

// SpecialistDefinition is the specialist's agent definition, exposed over
// A2A, as POST …/agent-definitions takes it.
func SpecialistDefinition() map[string]any {
	return map[string]any{
		"name": "Storage specialist", "slug": SpecialistSlug,
		"description": "Answers questions on where durable agents keep their state.",
		"models":      []any{map[string]any{"provider": scripted.Name, "modelId": "specialist"}},
		"config":      map[string]any{"mode": string(agentsdk.ModeOneShot)},
		"expose":      map[string]any{"a2a": true},
	}
}
