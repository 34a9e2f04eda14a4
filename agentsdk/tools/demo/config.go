package demo

import (
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
)

// Prompt is the question the research sample's starter and `make run` ask.
const Prompt = "How does Agentree keep a long agent conversation from hitting Temporal's history limit?"

// SystemPrompt tells a real model how to use the tools; the scripted model
// follows the same plan.
const SystemPrompt = `You are a careful research assistant. Answer from the notes, not from memory:
search the notes with search_notes, read the most relevant one with fetch_note,
check with word_count that your answer is under 120 words, then answer in plain
prose and name the note you used.`

// maxTurns is ample for search, fetch, count and answer, and stops a model
// that wanders.
const maxTurns = 8

// Config is the research demo's configuration: the react-agent, one-shot,
// with the research tools. With no models it uses the scripted one.
func Config(models ...agentsdk.ModelRef) agentsdk.Config {
	if len(models) == 0 {
		models = []agentsdk.ModelRef{scripted.Model("")}
	}
	return agentsdk.Config{
		SystemPrompt: SystemPrompt,
		Models:       models,
		Tools:        []string{SearchNotesTool, FetchNoteTool, WordCountTool},
		Mode:         agentsdk.ModeOneShot,
		MaxTurns:     maxTurns,
	}
}

// ToolSet is the name a worker configuration enables these tools by.
const ToolSet = "demo"

// Model returns the scripted provider that plays the research session,
// provider "scripted", answering any model ID (scripted/scripted-1 is the
// one Config names).
func Model() *scripted.Provider {
	return scripted.New(Script())
}
