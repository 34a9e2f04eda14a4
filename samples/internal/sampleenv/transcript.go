package sampleenv

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/apiclient"
	agentreev1 "github.com/agentree/agentree/proto/agentree/v1"
)

// Conversation is the execution's conversation as the API lists it
// (GET …/messages, every page): the messages of its active path, up to
// the entry it has reached — what the model saw, without bookkeeping
// entries.
func Conversation(ctx context.Context, c *apiclient.Client, id string) ([]*agentreev1.Message, error) {
	msgs, err := c.Messages(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("sampleenv: conversation of %s: %w", id, err)
	}
	return msgs, nil
}

// Text is a message's text: its text blocks, joined.
func Text(m *agentreev1.Message) string {
	var b strings.Builder
	for _, c := range m.GetContent() {
		if c.GetType() == string(agentsdk.BlockText) {
			b.WriteString(c.GetText())
		}
	}
	return b.String()
}

// Texts is each message as "role: text", tool calls and empty texts left
// out: the shape a test compares a conversation with.
func Texts(msgs []*agentreev1.Message) []string {
	var out []string
	for _, m := range msgs {
		if t := Text(m); t != "" {
			out = append(out, m.GetRole()+": "+t)
		}
	}
	return out
}

// Fprint writes msgs as a transcript: a line per message, its tool calls
// and tool results indented under it.
func Fprint(w io.Writer, msgs []*agentreev1.Message) {
	for _, m := range msgs {
		switch m.GetRole() {
		case string(agentsdk.RoleToolResult):
			mark := "←"
			if m.GetIsError() {
				mark = "✗"
			}
			fmt.Fprintf(w, "  %s %s: %s\n", mark, m.GetToolName(), oneLine(Text(m), 100))
		default:
			if text := strings.TrimSpace(Text(m)); text != "" {
				fmt.Fprintf(w, "%s: %s\n", m.GetRole(), strings.ReplaceAll(text, "\n", "\n    "))
			}
			for _, b := range m.GetContent() {
				if tc := b.GetToolCall(); b.GetType() == string(agentsdk.BlockToolCall) && tc != nil {
					args, _ := json.Marshal(tc.GetArguments().AsInterface())
					fmt.Fprintf(w, "  → %s %s\n", tc.GetName(), oneLine(string(args), 100))
				}
			}
		}
	}
}
