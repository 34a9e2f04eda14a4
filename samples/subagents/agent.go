package subagents

import (
	"encoding/json"
	"strings"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/agentsdk/tools/demo"
)

// TaskQueue is the sample's task queue.
const TaskQueue = "agentree-subagents"

// Question is the lead agent's task.
const Question = "How does Agentree keep long agent conversations durable?"

// Aspects are what the lead asks one sub-agent each about.
var Aspects = []string{"checkpoints", "continue-as-new", "large payloads"}

// SystemPrompt is for a real model; the scripted lead follows it.
const SystemPrompt = `You lead a research team. Split the question into independent parts, give each
to a sub-agent with spawn_agents (a complete prompt each: they see nothing else),
then answer from their findings.`

// Tools are the lead's tools: spawn_agents and the demo's note tools, which
// it hands on to its sub-agents.
var Tools = []string{agentsdk.ToolSpawnAgents, demo.SearchNotesTool, demo.FetchNoteTool}

// Config is the lead's configuration; with no models it uses the scripted
// one.
func Config(models ...agentsdk.ModelRef) agentsdk.Config {
	if len(models) == 0 {
		models = []agentsdk.ModelRef{scripted.Model("")}
	}
	return agentsdk.Config{SystemPrompt: SystemPrompt, Models: models, Tools: Tools, Mode: agentsdk.ModeOneShot}
}

// WorkerTools are what the sample's worker serves.
func WorkerTools() []*agentsdk.Tool { return append(demo.Tools(), agentsdk.SpawnAgentsTool()) }

// subPrompt is the prompt the lead gives the sub-agent on aspect.
func subPrompt(aspect string) string {
	return "Search the notes for what they say about " + aspect + " and answer in one sentence."
}

// Script is the scripted model of the lead and its sub-agents, telling
// them apart by their first message: the lead spawns one sub-agent per
// aspect and then writes the answer from theirs; a sub-agent searches the
// notes for its aspect and answers in one sentence.
func Script() scripted.Script {
	return func(_ int, req agentsdk.ModelRequest) scripted.Turn {
		first := req.Messages[0].Text()
		last := req.Messages[len(req.Messages)-1]
		answered := last.Role == agentsdk.RoleToolResult
		if first == Question {
			if !answered {
				var agents []agentsdk.SubAgent
				for _, a := range Aspects {
					agents = append(agents, agentsdk.SubAgent{Name: a, Prompt: subPrompt(a),
						Tools: []string{demo.SearchNotesTool}, MaxSteps: 4})
				}
				args, _ := json.Marshal(agentsdk.SpawnArgs{Agents: agents})
				return scripted.Turn{Text: "Three parts; one sub-agent each.",
					ToolCalls: []agentsdk.ToolCall{{ID: "call_team", Name: agentsdk.ToolSpawnAgents, Arguments: args}}}
			}
			return scripted.Turn{Text: Answer(last.Text())}
		}
		for _, a := range Aspects {
			if first != subPrompt(a) {
				continue
			}
			if !answered {
				args, _ := json.Marshal(map[string]string{"query": a})
				return scripted.Turn{ToolCalls: []agentsdk.ToolCall{{ID: "call_search", Name: demo.SearchNotesTool, Arguments: args}}}
			}
			return scripted.Turn{Text: "On " + a + ": the note \"" + topNote(last.Text()) + "\" covers it."}
		}
		return scripted.Turn{Text: "I have no script for that."}
	}
}

// Answer is the lead's final answer from its team's findings: one line
// per sub-agent answer.
func Answer(findings string) string {
	var lines []string
	for l := range strings.Lines(findings) {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "On ") {
			lines = append(lines, "- "+l)
		}
	}
	return "What the team found:\n" + strings.Join(lines, "\n")
}

// topNote is the title of the first note a search_notes result lists.
func topNote(result string) string {
	lines := strings.Split(strings.TrimSpace(result), "\n")
	if len(lines) < 2 {
		return "none"
	}
	_, title, _ := strings.Cut(lines[1], " — ")
	return title
}
