package step

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/event"
)

// PurposeCompaction marks the llm_call entry of a compaction's summary.
const PurposeCompaction = "compaction"

// compactionSystem is the summariser's instructions: the structured
// summary of seed 003.
const compactionSystem = `You compact the conversation of an AI agent so it can go on without the original messages.
Write a concise structured summary in these sections:
## Goal
## Decisions
## Files and artefacts touched
## Open questions
## Important tool results
Keep exact names, paths, numbers, IDs and error messages. Do not invent anything; leave a section empty if nothing belongs in it.`

// resultPreview bounds each tool result in the transcript the summariser
// reads: the start says what a result was; the tree keeps all of it.
const resultPreview = 2000

// prepare loads the context for a model call and, when it passes the
// compaction threshold, compacts it first. It returns the entry the
// call's entries go under (the leaf, or the compaction entry) and the
// request to send.
func (d Deps) prepare(ctx context.Context, cfg agentsdk.Config, in ModelInput, tools []agentsdk.ToolSpec, ov Overlay) (string, agentsdk.ModelRequest, error) {
	v, path, err := d.contextView(ctx, in.OrgID, in.ExecutionID, in.LeafID)
	if err != nil {
		return "", agentsdk.ModelRequest{}, err
	}
	if v, path, err = ov.overlaid(v, path); err != nil {
		return "", agentsdk.ModelRequest{}, err
	}
	parent := in.LeafID
	if cfg.Compaction.On() {
		window := d.Windows.Of(in.Model)
		if v.Tokens(cfg.SystemPrompt, tools) > int(cfg.Compaction.ThresholdShare()*float64(window)) {
			c, err := d.compact(ctx, compaction{cfg: cfg, org: in.OrgID, execution: in.ExecutionID, model: in.Model,
				key: in.Key + "/compact", turnID: in.TurnID, trigger: agentsdk.CompactAuto, tools: tools, leaf: in.LeafID}, path)
			if err != nil {
				return "", agentsdk.ModelRequest{}, err
			}
			if c != nil {
				parent = c.ID
				if v, err = ViewOf(append(path, *c)); err != nil {
					return "", agentsdk.ModelRequest{}, err
				}
			}
		}
	}
	req, err := requestOf(cfg, in.Model, v, tools)
	return parent, req, err
}

// compaction is one compaction to make.
type compaction struct {
	cfg       agentsdk.Config
	org       string
	execution string
	// model is the model the context is for: its window sets the budget,
	// and it writes the summary unless the configuration names another.
	model   agentsdk.ModelRef
	key     string
	turnID  string
	trigger string
	tools   []agentsdk.ToolSpec
	// leaf is the entry the compaction goes under: the path's last, unless
	// a variant's overlay put an injection after it.
	leaf string
}

// compact summarises the older part of the context at path's leaf and
// appends, under the leaf, the summary call's llm_call entry and the
// compaction entry, which it returns — nil when there is nothing to
// summarise. Keyed by c.key, a retry finds what an earlier attempt wrote.
func (d Deps) compact(ctx context.Context, c compaction, path []agentsdk.Entry) (*agentsdk.Entry, error) {
	if e, err := d.Store.EntryByKey(ctx, c.org, c.execution, c.key); err == nil {
		return &e, nil
	} else if !errors.Is(err, agentsdk.ErrNotFound) {
		return nil, fmt.Errorf("step: compact: find %s: %w", c.key, err)
	}
	out, err := d.summarise(ctx, c, path)
	if err != nil || out.Content == nil {
		return nil, err
	}
	entries, err := d.Store.AppendEntries(ctx, c.org, []agentsdk.Entry{
		{ExecutionID: c.execution, ParentID: c.leaf, Type: agentsdk.EntryLLMCall, Content: json.RawMessage(`{}`),
			Metadata: out.LLMCall, TurnID: c.turnID, IdempotencyKey: c.key + "/llm"},
		{ExecutionID: c.execution, ParentID: agentsdk.PrevEntry, Type: agentsdk.EntryCompaction, Content: out.Content,
			TurnID: c.turnID, IdempotencyKey: c.key},
	})
	if err != nil {
		return nil, fmt.Errorf("step: compact: append: %w", err)
	}
	d.announceDone(ctx, c, entries[1])
	return &entries[1], nil
}

// summarise writes the compaction of the context at path's leaf.
func (d Deps) summarise(ctx context.Context, c compaction, path []agentsdk.Entry) (out agentsdk.Compacted, err error) {
	if d.Compacting != nil {
		var end func(agentsdk.CompactionRecord, error)
		ctx, end = d.Compacting(ctx, c.trigger)
		defer func() {
			var rec agentsdk.CompactionRecord
			if out.Content != nil {
				_ = json.Unmarshal(out.Content, &rec)
			}
			end(rec, err)
		}()
	}
	v, err := ViewOf(path)
	if err != nil {
		return agentsdk.Compacted{}, err
	}
	window := d.Windows.Of(c.model)
	keep := int(c.cfg.Compaction.KeepShare() * float64(window))
	boundary := Boundary(v, keep)
	if boundary <= 0 {
		return agentsdk.Compacted{}, nil
	}
	summariser := c.cfg.Compaction.Summariser(c.model)
	provider, err := d.Endpoints.Resolve(summariser)
	if err != nil {
		return agentsdk.Compacted{}, err
	}
	firstKept := v.Entries[boundary]
	req, err := compactionRequestOf(c.cfg, summariser, v, firstKept.Depth)
	if err != nil {
		return agentsdk.Compacted{}, err
	}
	d.announce(ctx, c, map[string]any{"type": "compaction", "phase": "started", "trigger": c.trigger})
	start := d.now()
	resp, err := provider.Stream(ctx, req, func(agentsdk.StreamEvent) {})
	if err != nil {
		return agentsdk.Compacted{}, modelError(ctx, summariser, err)
	}
	summary := strings.TrimSpace(resp.Message.Text())
	if summary == "" {
		return agentsdk.Compacted{}, &agentsdk.ModelError{Provider: summariser.Provider, Message: "the compaction model wrote an empty summary", Retryable: true}
	}
	usage := agentsdk.Usage{}
	if resp.Message.Usage != nil {
		usage = *resp.Message.Usage
	}
	rec := agentsdk.CompactionRecord{
		Summary: summary, FirstKeptEntryID: firstKept.ID, FirstKeptDepth: firstKept.Depth,
		FromDepth: v.Record.FirstKeptDepth, TokensBefore: v.Tokens(c.cfg.SystemPrompt, c.tools),
		Limit: window, Trigger: c.trigger, Model: summariser,
	}
	if v.Compaction != nil {
		rec.PreviousCompactionID = v.Compaction.ID
		rec.CompactedTokens = v.Compaction.Tokens()
	}
	for _, e := range v.Entries[:boundary] {
		rec.CompactedMessages++
		rec.CompactedTokens += e.Tokens()
	}
	sm, _ := json.Marshal(SummaryMessage(summary))
	rec.SummaryTokens = agentsdk.EstimateTokens(sm)
	rec.TokensAfter = fixedTokens(c.cfg.SystemPrompt, c.tools) + rec.SummaryTokens
	for _, e := range v.Entries[boundary:] {
		rec.TokensAfter += e.Tokens()
	}
	if out.Content, err = json.Marshal(rec); err != nil {
		return agentsdk.Compacted{}, fmt.Errorf("step: compact: encode: %w", err)
	}
	out.LLMCall, _ = json.Marshal(LLMCallMeta{
		Model: summariser, Usage: usage, Cost: usage.Cost, LatencyMs: d.now().Sub(start).Milliseconds(),
		StopReason: resp.Message.StopReason, Purpose: PurposeCompaction, FirstKeptDepth: firstKept.Depth,
	})
	return out, nil
}

// Compact writes a manual compaction of the context at in.LeafID, for
// the caller to append (the llm_call entry, then the compaction entry
// under it). Nothing is appended here, so workflow code that runs it as
// a task keeps the leaf.
func Compact(ctx context.Context, d Deps, in agentsdk.CompactInput) (agentsdk.Compacted, error) {
	cfg, err := d.Store.ExecutionConfig(ctx, in.OrgID, in.ExecutionID)
	if err != nil {
		return agentsdk.Compacted{}, fmt.Errorf("step: compact: config: %w", err)
	}
	cfg = cfg.WithDefaults()
	tools, err := d.offeredSpecs(d.offered(in.OrgID, cfg), cfg)
	if err != nil {
		return agentsdk.Compacted{}, err
	}
	path, err := d.Store.ContextPath(ctx, in.OrgID, in.LeafID)
	if err != nil {
		return agentsdk.Compacted{}, fmt.Errorf("step: compact: path: %w", err)
	}
	ov, err := d.overlay(ctx, in.OrgID, in.ExecutionID)
	if err != nil {
		return agentsdk.Compacted{}, err
	}
	path = ov.Apply(path)
	return d.summarise(ctx, compaction{cfg: cfg, org: in.OrgID, execution: in.ExecutionID, model: in.Model,
		trigger: agentsdk.CompactManual, tools: tools}, path)
}

// AnnounceCompaction publishes the agent.data event of a compaction
// appended (by the caller of Compact).
func AnnounceCompaction(ctx context.Context, d Deps, orgID string, e agentsdk.Entry) {
	d.announceDone(ctx, compaction{org: orgID, execution: e.ExecutionID}, e)
}

func (d Deps) announceDone(ctx context.Context, c compaction, e agentsdk.Entry) {
	rec, err := e.Compaction()
	if err != nil {
		return
	}
	d.announce(ctx, c, map[string]any{"type": "compaction", "phase": "completed", "trigger": rec.Trigger, "entryId": e.ID,
		"tokensBefore": rec.TokensBefore, "tokensAfter": rec.TokensAfter, "compactedMessages": rec.CompactedMessages, "limit": rec.Limit})
}

// announce publishes an agent.data event about a compaction. The entries
// are the record; a failed publish is not the compaction's failure.
func (d Deps) announce(ctx context.Context, c compaction, data map[string]any) {
	p, err := event.Custom(data)
	if err != nil {
		return
	}
	_ = d.Store.Publish(ctx, c.org, c.execution, event.Data{AgentExecutionID: c.execution, Data: p})
}

// Boundary is the index in v.Entries of the first entry to keep verbatim
// when v is compacted so the kept part takes at most keep tokens; 0 or
// less when there is nothing to summarise. It splits where a message
// from the user starts, else where an answer starts — never at a tool
// result, so a tool call and its result are never split — and keeps as
// much as fits: the earliest such point whose tail fits, a user message
// preferred, else the latest point of any kind.
func Boundary(v View, keep int) int {
	n := len(v.Entries)
	tail := make([]int, n+1)
	for i := n - 1; i >= 0; i-- {
		tail[i] = tail[i+1] + v.Entries[i].Tokens()
	}
	userAt, answerAt, last := -1, -1, -1
	for i := 1; i < n; i++ {
		switch v.Entries[i].Role {
		case agentsdk.RoleUser:
			if userAt < 0 && tail[i] <= keep {
				userAt = i
			}
		case agentsdk.RoleAssistant:
			if answerAt < 0 && tail[i] <= keep {
				answerAt = i
			}
		default:
			continue
		}
		last = i
	}
	switch {
	case userAt > 0:
		return userAt
	case answerAt > 0:
		return answerAt
	}
	return last
}

// CompactionRequest is the request that wrote the summary of the
// compaction whose boundary is at firstKeptDepth, with the context at
// path's leaf: what the compaction sent, rebuilt by the same function for
// the time travel view of its llm_call entry.
func CompactionRequest(cfg agentsdk.Config, model agentsdk.ModelRef, path []agentsdk.Entry, firstKeptDepth int) (agentsdk.ModelRequest, error) {
	v, err := ViewOf(path)
	if err != nil {
		return agentsdk.ModelRequest{}, err
	}
	return compactionRequestOf(cfg.WithDefaults(), model, v, firstKeptDepth)
}

// compactionMaxTokens bounds a summary's length.
const compactionMaxTokens = 4096

func compactionRequestOf(cfg agentsdk.Config, model agentsdk.ModelRef, v View, firstKeptDepth int) (agentsdk.ModelRequest, error) {
	var b strings.Builder
	if v.Compaction != nil {
		fmt.Fprintf(&b, "<previous-summary>\n%s\n</previous-summary>\n\n", v.Record.Summary)
	}
	b.WriteString("<conversation>\n")
	for _, e := range v.Entries {
		if e.Depth >= firstKeptDepth {
			break
		}
		m, err := e.Message()
		if err != nil {
			return agentsdk.ModelRequest{}, fmt.Errorf("step: entry %s: %w", e.ID, err)
		}
		writeTranscript(&b, m)
	}
	b.WriteString("</conversation>\n\nSummarise the conversation above")
	if v.Compaction != nil {
		b.WriteString(", folding in the previous summary")
	}
	b.WriteString(".")
	return agentsdk.ModelRequest{
		Model:     model,
		System:    compactionSystem,
		Messages:  []agentsdk.Message{agentsdk.TextMessage(agentsdk.RoleUser, b.String())},
		MaxTokens: min(cfg.MaxTokens, compactionMaxTokens),
	}, nil
}

// writeTranscript writes m as the summariser reads it: plain text, so any
// provider can summarise any provider's conversation.
func writeTranscript(b *strings.Builder, m agentsdk.Message) {
	switch m.Role {
	case agentsdk.RoleToolResult:
		status := "result"
		if m.IsError {
			status = "error"
		}
		text := m.Text()
		if len(text) > resultPreview {
			text = text[:resultPreview] + fmt.Sprintf("… [%d more bytes]", len(text)-resultPreview)
		}
		fmt.Fprintf(b, "[tool %s of %s]\n%s\n\n", status, m.ToolName, text)
		return
	}
	fmt.Fprintf(b, "[%s]\n", m.Role)
	for _, c := range m.Content {
		switch c.Type {
		case agentsdk.BlockText:
			b.WriteString(c.Text)
			b.WriteString("\n")
		case agentsdk.BlockToolCall:
			if c.ToolCall != nil {
				fmt.Fprintf(b, "(calls %s %s)\n", c.ToolCall.Name, c.ToolCall.Arguments)
			}
		case agentsdk.BlockImage:
			b.WriteString("(an image)\n")
		}
	}
	b.WriteString("\n")
}
