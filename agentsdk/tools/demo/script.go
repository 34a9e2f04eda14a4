package demo

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
)

// tokenDelay paces the scripted answer's tokens so a terminal shows them
// arrive, as a real model's would.
const tokenDelay = 8 * time.Millisecond

// Script is a scripted research session that reads the conversation the
// way a model would: for the latest question it searches the notes with
// the question's words, fetches the best hit, counts the words of a draft
// made from the note's first paragraph, and answers with that draft. Each
// step is chosen from the messages alone, so a retried or replayed call
// answers the same, and a follow-up question starts a new session.
func Script() scripted.Script {
	return func(turn int, req agentsdk.ModelRequest) scripted.Turn {
		question, since := latestQuestion(req.Messages)
		if !hasTools(req.Tools) {
			return scripted.Turn{Text: "I can only answer from my notes, and this execution has no research tools: configure search_notes, fetch_note and word_count.", TokenDelay: tokenDelay}
		}
		call := func(name string, args any) agentsdk.ToolCall {
			b, _ := json.Marshal(args)
			return agentsdk.ToolCall{ID: fmt.Sprintf("call_%d", turn), Name: name, Arguments: b}
		}
		switch steps := assistantCount(since); {
		case steps == 0:
			return scripted.Turn{
				Text:      "I'll search my notes for that.",
				ToolCalls: []agentsdk.ToolCall{call(SearchNotesTool, SearchNotesArgs{Query: question})},
			}
		case steps == 1:
			id, title, ok := firstHit(lastResult(since))
			if !ok {
				return scripted.Turn{Text: "My notes have nothing on that, so I can't answer it from them.", TokenDelay: tokenDelay}
			}
			return scripted.Turn{
				Text:      fmt.Sprintf("The most relevant note is %q; let me read it.", title),
				ToolCalls: []agentsdk.ToolCall{call(FetchNoteTool, FetchNoteArgs{ID: id})},
			}
		case steps == 2:
			return scripted.Turn{
				Text:      "I'll draft the answer from its first paragraph and check the length.",
				ToolCalls: []agentsdk.ToolCall{call(WordCountTool, WordCountArgs{Text: draft(lastResult(since))})},
			}
		default:
			note := resultOf(since, FetchNoteTool)
			title, _, _ := strings.Cut(note, "\n")
			return scripted.Turn{
				Text: fmt.Sprintf("%s\n\n(Source: the note %q; %s.)",
					draft(note), strings.TrimPrefix(title, "# "), lastResult(since)),
				TokenDelay: tokenDelay,
			}
		}
	}
}

// latestQuestion returns the last user message's text and the messages
// after it.
func latestQuestion(msgs []agentsdk.Message) (string, []agentsdk.Message) {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == agentsdk.RoleUser {
			return msgs[i].Text(), msgs[i+1:]
		}
	}
	return "", msgs
}

func hasTools(specs []agentsdk.ToolSpec) bool {
	for _, name := range []string{SearchNotesTool, FetchNoteTool, WordCountTool} {
		if !slices.ContainsFunc(specs, func(s agentsdk.ToolSpec) bool { return s.Name == name }) {
			return false
		}
	}
	return true
}

func assistantCount(msgs []agentsdk.Message) int {
	n := 0
	for _, m := range msgs {
		if m.Role == agentsdk.RoleAssistant {
			n++
		}
	}
	return n
}

// lastResult is the text of the last tool result in msgs.
func lastResult(msgs []agentsdk.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == agentsdk.RoleToolResult {
			return msgs[i].Text()
		}
	}
	return ""
}

// resultOf is the text of the last result of the named tool in msgs.
func resultOf(msgs []agentsdk.Message, tool string) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == agentsdk.RoleToolResult && msgs[i].ToolName == tool {
			return msgs[i].Text()
		}
	}
	return ""
}

// firstHit reads the best note from a search_notes result.
func firstHit(result string) (id, title string, ok bool) {
	for _, line := range strings.Split(result, "\n")[1:] {
		if id, title, ok := strings.Cut(line, " — "); ok {
			return id, title, true
		}
	}
	return "", "", false
}

// draft is a note's first paragraph on one line.
func draft(note string) string {
	_, body, _ := strings.Cut(note, "\n\n")
	para, _, _ := strings.Cut(body, "\n\n")
	return strings.Join(strings.Fields(para), " ")
}
