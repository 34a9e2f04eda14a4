package agentsdk

import (
	"encoding/json"
	"fmt"
	"math"
)

// Compaction configures how an execution's context is kept under the
// model's window (seed 003): before a model call whose context would pass
// Threshold of the window, the older part of the conversation is replaced
// by a model-written summary and the most recent KeepRecent stays
// verbatim. The full history stays in the tree. The zero value is the
// default: on, at 70%, keeping 30%, summarised by the execution's model.
type Compaction struct {
	// Enabled turns compaction off with false; nil = on.
	Enabled *bool `json:"enabled,omitempty"`
	// Threshold is the share of the model's context window past which
	// the context is compacted before a call; 0 = the default, 0.7.
	Threshold float64 `json:"threshold,omitempty"`
	// KeepRecent is the share of the window the most recent messages
	// kept verbatim may take; 0 = the default, 0.3. Less than Threshold.
	KeepRecent float64 `json:"keepRecent,omitempty"`
	// Model writes the summaries; nil = the model about to be called.
	Model *ModelRef `json:"model,omitempty"`
}

// Compaction defaults.
const (
	DefaultCompactionThreshold  = 0.7
	DefaultCompactionKeepRecent = 0.3
)

// On reports whether compaction is enabled (a nil c is the default: on).
func (c *Compaction) On() bool { return c == nil || c.Enabled == nil || *c.Enabled }

// ThresholdShare is Threshold or its default.
func (c *Compaction) ThresholdShare() float64 {
	if c == nil || c.Threshold == 0 {
		return DefaultCompactionThreshold
	}
	return c.Threshold
}

// KeepShare is KeepRecent or its default (never more than the threshold).
func (c *Compaction) KeepShare() float64 {
	keep := DefaultCompactionKeepRecent
	if c != nil && c.KeepRecent != 0 {
		keep = c.KeepRecent
	}
	return math.Min(keep, c.ThresholdShare())
}

// Summariser is the model that writes summaries of a context for model.
func (c *Compaction) Summariser(model ModelRef) ModelRef {
	if c == nil || c.Model == nil {
		return model
	}
	return *c.Model
}

// Problems lists what is wrong with c, naming its fields under field.
func (c *Compaction) Problems(field string) []string {
	if c == nil {
		return nil
	}
	var problems []string
	if t := c.Threshold; math.IsNaN(t) || t < 0 || t > 1 {
		problems = append(problems, fmt.Sprintf("%s.threshold must be a share of the context window from 0 to 1 (0 = the default, 0.7); got %g", field, t))
	}
	if k := c.KeepRecent; math.IsNaN(k) || k < 0 || k >= 1 {
		problems = append(problems, fmt.Sprintf("%s.keepRecent must be a share of the context window from 0 to under 1 (0 = the default, 0.3); got %g", field, k))
	} else if len(problems) == 0 && c.KeepRecent > 0 && c.KeepRecent >= c.ThresholdShare() {
		problems = append(problems, fmt.Sprintf("%s.keepRecent (%g) must be less than threshold (%g): the kept part alone would trigger compaction again", field, c.KeepRecent, c.ThresholdShare()))
	}
	if m := c.Model; m != nil && (m.Provider == "" || m.ModelID == "") {
		problems = append(problems, field+".model needs provider and modelId")
	}
	return problems
}

// CompactionRecord is a compaction entry's content: the summary that
// stands for the entries before FirstKeptEntryID from then on, and the
// figures of the compaction audit (seed 004 §5).
type CompactionRecord struct {
	Summary string `json:"summary"`
	// FirstKeptEntryID is the first entry after the summary the model
	// sees, at FirstKeptDepth on the path; everything from there to the
	// compaction entry stays verbatim.
	FirstKeptEntryID string `json:"firstKeptEntryId"`
	FirstKeptDepth   int    `json:"firstKeptDepth"`
	// FromDepth is the depth of the first entry this compaction
	// summarised: the previous compaction's FirstKeptDepth, or 0. With
	// the previous summary, entries from FromDepth up to FirstKeptDepth
	// are what the summary replaces.
	FromDepth int `json:"fromDepth"`
	// PreviousCompactionID is the compaction whose summary this one
	// folded in, if any.
	PreviousCompactionID string `json:"previousCompactionId,omitempty"`
	// CompactedMessages and CompactedTokens are the messages summarised
	// and their tokens (with the previous summary's).
	CompactedMessages int `json:"compactedMessages"`
	CompactedTokens   int `json:"compactedTokens"`
	SummaryTokens     int `json:"summaryTokens"`
	// TokensBefore and TokensAfter are the context's size just before and
	// just after the compaction.
	TokensBefore int `json:"tokensBefore"`
	TokensAfter  int `json:"tokensAfter"`
	// Limit is the context window it was measured against.
	Limit int `json:"limit"`
	// Trigger is "auto" (the threshold was passed) or "manual".
	Trigger string   `json:"trigger"`
	Model   ModelRef `json:"model"`
	// Skipped, when set, says why a manual compaction changed nothing
	// (there was nothing to summarise): the entry is an audit record
	// only, and the context is as it was.
	Skipped string `json:"skipped,omitempty"`
}

// Compaction triggers.
const (
	CompactAuto   = "auto"
	CompactManual = "manual"
)

// Compaction decodes a compaction entry's content.
func (e Entry) Compaction() (CompactionRecord, error) {
	var r CompactionRecord
	if e.Type != EntryCompaction {
		return r, fmt.Errorf("%w: entry %s is a %s entry, not a compaction", ErrInvalidInput, e.ID, e.Type)
	}
	err := json.Unmarshal(e.Content, &r)
	return r, err
}

// Tokens is the entry's size in the model's context: estimated from its
// bytes, or an assistant message's output tokens as its provider counted
// them where that is more (the larger, so a context is never taken for
// smaller than it is); a compaction's is its summary's.
func (e Entry) Tokens() int {
	est := EstimateTokens(e.Content)
	switch {
	case e.Type == EntryMessage && e.Role == RoleAssistant:
		var m struct {
			Usage *Usage `json:"usage"`
		}
		if json.Unmarshal(e.Content, &m) == nil && m.Usage != nil && int(m.Usage.Output) > est {
			return int(m.Usage.Output)
		}
	case e.Type == EntryCompaction:
		if r, err := e.Compaction(); err == nil {
			return r.SummaryTokens
		}
	}
	return est
}

// CompactActivity is the built-in activity (Context.RunActivity) that
// writes a manual compaction: CompactInput in, Compacted out.
const CompactActivity = "agentree.Compact"

// CompactInput asks for the context at LeafID to be compacted now,
// whatever its size (a manual compaction), for Model's window.
type CompactInput struct {
	OrgID       string   `json:"orgId"`
	ExecutionID string   `json:"executionId"`
	LeafID      string   `json:"leafId"`
	Model       ModelRef `json:"model"`
}

// Compacted is a compaction written and not yet appended: the metadata
// of its summary call's llm_call entry and its compaction entry's
// content; both nil when there was nothing to summarise.
type Compacted struct {
	LLMCall json.RawMessage `json:"llmCall,omitempty"`
	Content json.RawMessage `json:"content,omitempty"`
}
