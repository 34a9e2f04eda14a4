package customagent

import (
	"encoding/json"
	"time"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
)

// TaskQueue is the custom-agent sample's task queue.
const TaskQueue = "agentree-customagent"

// Prompt is the request the starter makes.
const Prompt = "Draft a two-sentence announcement of Agentree's durable agents for our blog."

// Config is the approval agent's configuration, with its own settings in
// Config.Agent. With no models it uses the scripted one.
func Config(set Settings, models ...agentsdk.ModelRef) agentsdk.Config {
	if len(models) == 0 {
		models = []agentsdk.ModelRef{scripted.Model("")}
	}
	agent, _ := json.Marshal(set)
	return agentsdk.Config{
		SystemPrompt: "You write short, plain announcements. When a draft is rejected, revise it following the reviewer's note.",
		Models:       models,
		Agent:        agent,
	}
}

// Drafts are the scripted model's drafts, in order; past the last it
// repeats it.
var Drafts = []string{
	"Agentree is here! Our revolutionary, game-changing platform lets your LLM agents run durably, " +
		"survive crashes, checkpoint every turn, keep weeks-long conversations, stream tokens live, " +
		"and so much more, all without you writing a single line of retry logic.",
	"Agentree runs LLM agents as Temporal workflows that checkpoint every turn to Postgres. " +
		"A crashed worker costs nothing, and a conversation can go on for weeks without its history growing.",
	"Agentree: durable LLM agents on Temporal, checkpointed to Postgres after every turn.",
}

// tokenDelay paces the drafts' tokens, as a real model's arrive.
const tokenDelay = 10 * time.Millisecond

// DraftScript is the scripted model: draft n (counting from 0) is Drafts[n].
func DraftScript() scripted.Script {
	return func(turn int, _ agentsdk.ModelRequest) scripted.Turn {
		return scripted.Turn{Text: Drafts[min(turn, len(Drafts)-1)], TokenDelay: tokenDelay}
	}
}
