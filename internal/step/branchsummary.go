package step

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/agentree/agentree/agentsdk"
)

// PurposeBranchSummary marks the llm_call entry of a branch's summary.
const PurposeBranchSummary = "branch_summary"

// branchSummarySystem is the summariser's instructions for a path a
// branch leaves behind.
const branchSummarySystem = `You summarise a branch of an AI agent's conversation that was abandoned: the conversation went back to an earlier point and goes on from there.
Write a short summary of what was tried on the abandoned branch and what came of it, so the agent can use what was learnt without repeating it.
Keep exact names, paths, numbers and error messages. Do not invent anything.`

// branchSummaryPreamble introduces a branch's summary to the model.
const branchSummaryPreamble = "An earlier attempt from this point was abandoned. Its summary:\n\n"

// BranchSummaryInput asks for the summary of the path from EntryID to
// AbandonedLeafID (internal/wire.BranchSummaryInput, which clients send).
type BranchSummaryInput struct {
	OrgID, ExecutionID, EntryID, AbandonedLeafID string
	Model                                        agentsdk.ModelRef
	Key                                          string
}

// SummariseBranch writes the summary of the entries on the path to
// in.AbandonedLeafID below the point where it leaves the path to
// in.EntryID, with in.Model, and appends under in.EntryID the call's
// llm_call entry and the branch_summary entry (a user message the next
// context includes), which it returns. Keyed by in.Key, a retry finds what
// an earlier attempt wrote.
func SummariseBranch(ctx context.Context, d Deps, in BranchSummaryInput) (agentsdk.Entry, error) {
	if e, err := d.Store.EntryByKey(ctx, in.OrgID, in.ExecutionID, in.Key); err == nil {
		return e, nil
	} else if !errors.Is(err, agentsdk.ErrNotFound) {
		return agentsdk.Entry{}, fmt.Errorf("step: branch summary: find %s: %w", in.Key, err)
	}
	abandoned, err := d.Store.Path(ctx, in.OrgID, in.AbandonedLeafID)
	if err != nil {
		return agentsdk.Entry{}, fmt.Errorf("step: branch summary: path: %w", err)
	}
	kept, err := d.Store.Path(ctx, in.OrgID, in.EntryID)
	if err != nil {
		return agentsdk.Entry{}, fmt.Errorf("step: branch summary: path: %w", err)
	}
	// The abandoned part is what the old path has below where the two
	// paths part.
	n := 0
	for n < len(kept) && n < len(abandoned) && kept[n].ID == abandoned[n].ID {
		n++
	}
	var b strings.Builder
	b.WriteString("<abandoned-branch>\n")
	for _, e := range abandoned[n:] {
		if !e.InContext() {
			continue
		}
		m, err := e.Message()
		if err != nil {
			return agentsdk.Entry{}, fmt.Errorf("step: entry %s: %w", e.ID, err)
		}
		writeTranscript(&b, m)
	}
	b.WriteString("</abandoned-branch>\n\nSummarise the abandoned branch above.")
	cfg, err := d.Store.ExecutionConfig(ctx, in.OrgID, in.ExecutionID)
	if err != nil {
		return agentsdk.Entry{}, fmt.Errorf("step: branch summary: config: %w", err)
	}
	provider, err := d.Endpoints.Resolve(in.Model)
	if err != nil {
		return agentsdk.Entry{}, err
	}
	start := d.now()
	resp, err := provider.Stream(ctx, agentsdk.ModelRequest{
		Model: in.Model, System: branchSummarySystem, MaxTokens: min(cfg.WithDefaults().MaxTokens, compactionMaxTokens),
		Messages: []agentsdk.Message{agentsdk.TextMessage(agentsdk.RoleUser, b.String())},
	}, func(agentsdk.StreamEvent) {})
	if err != nil {
		return agentsdk.Entry{}, modelError(ctx, in.Model, err)
	}
	summary := strings.TrimSpace(resp.Message.Text())
	if summary == "" {
		return agentsdk.Entry{}, &agentsdk.ModelError{Provider: in.Model.Provider, Message: "the model wrote an empty branch summary", Retryable: true}
	}
	usage := agentsdk.Usage{}
	if resp.Message.Usage != nil {
		usage = *resp.Message.Usage
	}
	call, _ := json.Marshal(LLMCallMeta{Model: in.Model, Usage: usage, Cost: usage.Cost, LatencyMs: d.now().Sub(start).Milliseconds(),
		StopReason: resp.Message.StopReason, Purpose: PurposeBranchSummary})
	content, _ := json.Marshal(agentsdk.TextMessage(agentsdk.RoleUser, branchSummaryPreamble+summary))
	entries, err := d.Store.AppendEntries(ctx, in.OrgID, []agentsdk.Entry{
		{ExecutionID: in.ExecutionID, ParentID: in.EntryID, Type: agentsdk.EntryLLMCall, Content: json.RawMessage(`{}`),
			Metadata: call, IdempotencyKey: in.Key + "/llm"},
		{ExecutionID: in.ExecutionID, ParentID: agentsdk.PrevEntry, Type: agentsdk.EntryBranchSummary, Role: agentsdk.RoleUser,
			Content: content, IdempotencyKey: in.Key},
	})
	if err != nil {
		return agentsdk.Entry{}, fmt.Errorf("step: branch summary: append: %w", err)
	}
	return entries[1], nil
}
