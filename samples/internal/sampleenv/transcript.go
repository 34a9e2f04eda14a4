package sampleenv

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
)

// Leaf is the entry an execution has reached: its output entry once it has
// completed, else the leaf of its latest checkpoint.
func Leaf(ctx context.Context, store *entrystore.Store, ex entrystore.Execution) (string, error) {
	var out struct {
		EntryID string `json:"entryId"`
	}
	if len(ex.Output) > 0 && json.Unmarshal(ex.Output, &out) == nil && out.EntryID != "" {
		return out.EntryID, nil
	}
	cp, err := store.LatestCheckpoint(ctx, ex.OrgID, ex.ID)
	if err != nil {
		return "", fmt.Errorf("sampleenv: leaf of %s: %w", ex.ID, err)
	}
	return cp.LeafEntryID, nil
}

// ConversationOf is the execution's conversation up to the entry it has
// reached (see Leaf).
func ConversationOf(ctx context.Context, store *entrystore.Store, ex entrystore.Execution) ([]agentsdk.Message, error) {
	leaf, err := Leaf(ctx, store, ex)
	if err != nil {
		return nil, err
	}
	return Conversation(ctx, store, ex.OrgID, leaf)
}

// Conversation returns the messages on the path from the root to leafID:
// what the model saw, without bookkeeping entries (a compaction's llm_call).
func Conversation(ctx context.Context, store *entrystore.Store, orgID, leafID string) ([]agentsdk.Message, error) {
	path, err := store.Path(ctx, orgID, leafID)
	if err != nil {
		return nil, fmt.Errorf("sampleenv: conversation: %w", err)
	}
	var msgs []agentsdk.Message
	for _, e := range path {
		if e.Type != string(agentsdk.EntryMessage) {
			continue
		}
		var m agentsdk.Message
		if err := json.Unmarshal(e.Content, &m); err != nil {
			return nil, fmt.Errorf("sampleenv: conversation: entry %s: %w", e.ID, err)
		}
		msgs = append(msgs, m)
	}
	return msgs, nil
}

// Fprint writes msgs as a transcript: a line per message, its tool calls
// and tool results indented under it.
func Fprint(w io.Writer, msgs []agentsdk.Message) {
	for _, m := range msgs {
		switch m.Role {
		case agentsdk.RoleToolResult:
			mark := "←"
			if m.IsError {
				mark = "✗"
			}
			fmt.Fprintf(w, "  %s %s: %s\n", mark, m.ToolName, oneLine(m.Text(), 100))
		default:
			if text := strings.TrimSpace(m.Text()); text != "" {
				fmt.Fprintf(w, "%s: %s\n", m.Role, strings.ReplaceAll(text, "\n", "\n    "))
			}
			for _, tc := range m.ToolCalls() {
				fmt.Fprintf(w, "  → %s %s\n", tc.Name, oneLine(compact(tc.Arguments), 100))
			}
		}
	}
}
