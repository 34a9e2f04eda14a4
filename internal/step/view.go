package step

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/agentree/agentree/agentsdk"
)

// View is what a model sees of a conversation path: the latest
// compaction's summary, if any, and the message entries from its
// boundary on. Entries before the boundary stay in the tree; they are
// just not sent.
type View struct {
	// Compaction is the latest compaction entry on the path (nil if none)
	// and Record its content.
	Compaction *agentsdk.Entry
	Record     agentsdk.CompactionRecord
	// Entries are the message entries sent verbatim, root-most first.
	Entries []agentsdk.Entry
	// known is set on a Cache's views, whose entries' tokens were counted
	// once, as they came: tokens is their sum. A short view's messages
	// are decoded when asked for, not held: a worker serving many
	// conversations would hold each message twice, raw and decoded, for
	// a decode of tens of microseconds. From heldMessagesFrom entries on,
	// a decode at every call would grow with the conversation, and msgs
	// holds them (the summary first, when compacted), decoded as they
	// came.
	known  bool
	tokens int
	msgs   []agentsdk.Message
}

// heldMessagesFrom is the length from which a Cache's view holds its
// messages decoded: past it, decoding the context at every call costs
// more than a fraction of a millisecond.
const heldMessagesFrom = 64

// held is v with msgs covering its Entries when it has heldMessagesFrom
// or more, the entries not yet decoded decoded; msgs grows in place, as
// Entries do.
func (v View) held() (View, error) {
	if len(v.Entries) < heldMessagesFrom {
		v.msgs = nil
		return v, nil
	}
	summary := 0
	if v.Compaction != nil {
		summary = 1
	}
	if v.msgs == nil && summary == 1 {
		v.msgs = append(v.msgs, SummaryMessage(v.Record.Summary))
	}
	for _, e := range v.Entries[len(v.msgs)-summary:] {
		m, err := e.Message()
		if err != nil {
			return v, fmt.Errorf("step: entry %s: %w", e.ID, err)
		}
		v.msgs = append(v.msgs, m)
	}
	return v, nil
}

// ViewOf is the view of path (root-most first; it may start anywhere at
// or above the latest compaction's boundary, as Store.ContextPath's does).
func ViewOf(path []agentsdk.Entry) (View, error) { return viewWith(path, nil) }

// viewWith is ViewOf with path's entries' tokens, index by index, if
// counted.
func viewWith(path []agentsdk.Entry, tokens []int) (View, error) {
	var v View
	from := 0
	for i := len(path) - 1; i >= 0; i-- {
		if path[i].Type != agentsdk.EntryCompaction {
			continue
		}
		rec, err := path[i].Compaction()
		if err != nil {
			return v, fmt.Errorf("step: compaction entry %s: %w", path[i].ID, err)
		}
		if rec.Skipped != "" {
			continue
		}
		v.Compaction, v.Record, from = &path[i], rec, rec.FirstKeptDepth
		break
	}
	v.known = tokens != nil
	return v.extended(path, tokens, from), nil
}

// extended is v with the message entries of more (which continue its
// path, none of them a compaction) at or below depth from, and their
// tokens when v counts them (index by index). Its Entries grow in place
// when they can: see Cache.grown for who may.
func (v View) extended(more []agentsdk.Entry, tokens []int, from int) View {
	for i, e := range more {
		if e.InContext() && e.Depth >= from {
			v.Entries = append(v.Entries, e)
			if v.known {
				v.tokens += tokens[i]
			}
		}
	}
	return v
}

// clipped is v with its Entries clipped: whoever appends to them copies
// them, and never writes where a Cache's record grows.
func (v View) clipped() View {
	v.Entries, v.msgs = slices.Clip(v.Entries), slices.Clip(v.msgs)
	return v
}

// Messages are the view's messages as sent: the summary first, as a user
// message, then the kept entries.
func (v View) Messages() ([]agentsdk.Message, error) {
	if v.msgs != nil {
		return slices.Clip(v.msgs), nil
	}
	msgs := make([]agentsdk.Message, 0, len(v.Entries)+1)
	if v.Compaction != nil {
		msgs = append(msgs, SummaryMessage(v.Record.Summary))
	}
	for _, e := range v.Entries {
		m, err := e.Message()
		if err != nil {
			return nil, fmt.Errorf("step: entry %s: %w", e.ID, err)
		}
		msgs = append(msgs, m)
	}
	return msgs, nil
}

// Tokens is the view's size in the model's context, with the request's
// system prompt and tools: what the compaction threshold is compared to.
func (v View) Tokens(system string, tools []agentsdk.ToolSpec) int {
	n := fixedTokens(system, tools)
	if v.Compaction != nil {
		n += v.Compaction.Tokens()
	}
	if v.known {
		return n + v.tokens
	}
	for _, e := range v.Entries {
		n += e.Tokens()
	}
	return n
}

// fixedTokens is the size of what every request carries: the system
// prompt and the tools' specs.
func fixedTokens(system string, tools []agentsdk.ToolSpec) int {
	n := agentsdk.EstimateTokens([]byte(system))
	if len(tools) > 0 {
		b, _ := json.Marshal(tools)
		n += agentsdk.EstimateTokens(b)
	}
	return n
}

// summaryPreamble introduces a compaction's summary to the model.
const summaryPreamble = "The conversation before this point was compacted to save context. Its summary:\n\n"

// SummaryMessage is how a compaction's summary is sent: a user message
// ahead of the kept entries, which every provider accepts before either
// role (consecutive user messages are joined by providers that need it).
func SummaryMessage(summary string) agentsdk.Message {
	return agentsdk.TextMessage(agentsdk.RoleUser, summaryPreamble+summary)
}
