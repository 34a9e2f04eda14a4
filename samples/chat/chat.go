package chat

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
)

// TaskQueue is the chat sample's task queue.
const TaskQueue = "agentree-chat"

// Messages are what the starter says, one per turn: the first starts the
// execution, the others are userMessage signals.
var Messages = []string{
	"Hi! My name is Ada.",
	"I like hiking and green tea.",
	"What do you remember about me?",
}

// SystemPrompt is for a real model; the scripted one behaves the same way.
const SystemPrompt = "You are a friendly assistant. Keep replies short and remember what the user tells you."

// Config is the chat's configuration: multi-turn, no tools. With no models
// it uses the scripted one.
func Config(models ...agentsdk.ModelRef) agentsdk.Config {
	if len(models) == 0 {
		models = []agentsdk.ModelRef{scripted.Model("")}
	}
	return agentsdk.Config{SystemPrompt: SystemPrompt, Models: models, Mode: agentsdk.ModeMultiTurn}
}

// tokenDelay paces the scripted replies' tokens, as a real model's arrive.
const tokenDelay = 10 * time.Millisecond

// Script is a scripted chat partner with a memory: it answers the latest
// user message from the whole conversation it is sent, so what it
// remembers is exactly what the store holds.
func Script() scripted.Script {
	return func(_ int, req agentsdk.ModelRequest) scripted.Turn {
		var said []string
		for _, m := range req.Messages {
			if m.Role == agentsdk.RoleUser {
				said = append(said, m.Text())
			}
		}
		return scripted.Turn{Text: reply(said), TokenDelay: tokenDelay}
	}
}

// nameRE finds a name the user gives.
var nameRE = regexp.MustCompile(`(?i)\bmy name is\s+([\p{L}'-]+)`)

// reply answers the last of the user's messages, said.
func reply(said []string) string {
	if len(said) == 0 {
		return "Hello! What shall we talk about?"
	}
	last, earlier := said[len(said)-1], said[:len(said)-1]
	switch {
	case strings.Contains(strings.ToLower(last), "remember"):
		if len(earlier) == 0 {
			return "Nothing yet: this is the first thing you've told me."
		}
		return fmt.Sprintf("You've told me %d things: %s", len(earlier), quoteAll(earlier))
	case nameRE.MatchString(last):
		name := nameRE.FindStringSubmatch(last)[1]
		return fmt.Sprintf("Nice to meet you, %s! Tell me something about yourself and I'll remember it.", name)
	default:
		return fmt.Sprintf("Noted: %s. Ask me what I remember whenever you like.", quote(last))
	}
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = quote(s)
	}
	return strings.Join(q, " and ") + "."
}

// quote quotes what the user said, without its closing punctuation.
func quote(s string) string {
	return fmt.Sprintf("%q", strings.TrimRight(strings.TrimSpace(s), ".!?"))
}
