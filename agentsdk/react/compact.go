package react

import (
	"encoding/json"

	"github.com/agentree/agentree/agentsdk"
)

// manualCompaction is the change that answers compact signals (POST
// …/compact), and lets one wake an agent waiting for input.
const manualCompaction = "react.manual-compaction"

// compactOnRequest answers the pending compact signals: the first with a
// compaction of the context now, written by the built-in compact task and
// appended here (its llm_call entry, then the compaction entry that
// consumes the signal), the others as skipped. A compaction entry whose
// record says skipped is an audit record only.
func compactOnRequest(ctx agentsdk.Context, cfg agentsdk.Config) error {
	done := false
	for _, s := range ctx.Signals() {
		if s.Name != agentsdk.SignalCompact {
			continue
		}
		if ctx.Version(manualCompaction, 1) == agentsdk.DefaultVersion {
			return nil
		}
		var out agentsdk.Compacted
		leaf := ctx.Leaf()
		if !done && leaf != nil && len(cfg.Models) > 0 {
			in := agentsdk.CompactInput{OrgID: ctx.OrgID(), ExecutionID: ctx.ExecutionID(), LeafID: leaf.ID, Model: cfg.Models[0]}
			if err := ctx.RunActivity(agentsdk.CompactActivity, in, &out); err != nil {
				return err
			}
		}
		var rec agentsdk.CompactionRecord
		switch {
		case done:
			rec = agentsdk.CompactionRecord{Trigger: agentsdk.CompactManual, Skipped: "compacted already by an earlier request"}
		case out.Content == nil:
			rec = agentsdk.CompactionRecord{Trigger: agentsdk.CompactManual, Skipped: "nothing to compact: the context is too short to split"}
		}
		if rec.Skipped != "" {
			out.Content, _ = json.Marshal(rec)
		} else if _, err := ctx.Append(agentsdk.NewEntry{Type: agentsdk.EntryLLMCall, Content: json.RawMessage(`{}`), Metadata: out.LLMCall}); err != nil {
			return err
		}
		ref, err := ctx.ConsumeSignal(s, agentsdk.NewEntry{Type: agentsdk.EntryCompaction, Content: out.Content})
		if err != nil {
			return err
		}
		done = true
		_ = json.Unmarshal(out.Content, &rec)
		// The entries are the record; a lost announcement loses nothing.
		_ = ctx.StreamData(map[string]any{"type": "compaction", "phase": "completed", "trigger": agentsdk.CompactManual,
			"entryId": ref.ID, "tokensBefore": rec.TokensBefore, "tokensAfter": rec.TokensAfter,
			"compactedMessages": rec.CompactedMessages, "limit": rec.Limit, "skipped": rec.Skipped})
	}
	return nil
}
