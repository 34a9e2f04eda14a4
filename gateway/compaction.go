package gateway

import (
	"context"
	"encoding/json"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/step"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// CompactAgentExecution sends the execution a compact signal: the agent
// compacts its context at its next step (at once, if it waits for input).
func (s *service) CompactAgentExecution(ctx context.Context, req *pb.CompactAgentExecutionRequest) (*pb.SignalAgentExecutionResponse, error) {
	ex, err := s.execution(ctx, req.GetOrg(), req.GetId())
	if err != nil {
		return nil, err
	}
	if ex.LeafEntryID == "" {
		return nil, status.Errorf(codes.FailedPrecondition, "execution %q has no conversation to compact yet", ex.ID)
	}
	cctx, cancel := committed(ctx)
	defer cancel()
	sig, err := s.ex.SignalOnce(cctx, effectID(ctx), ex.OrgID, ex.ID, agentsdk.SignalCompact, nil)
	if err != nil {
		return nil, toStatus(s.log, "compact agent execution", err)
	}
	return &pb.SignalAgentExecutionResponse{SignalId: sig.ID, ExecutionId: ex.ID, SignalName: agentsdk.SignalCompact}, nil
}

// GetCompaction is the compaction audit of one compaction entry: its
// record, and the messages it summarised, read from the path to it.
func (s *service) GetCompaction(ctx context.Context, req *pb.GetCompactionRequest) (*pb.CompactionAudit, error) {
	ex, cs, e, rec, err := s.compaction(ctx, req.GetOrg(), req.GetExecutionId(), req.GetEntryId())
	if err != nil {
		return nil, err
	}
	out := &pb.CompactionAudit{
		EntryId: e.ID, Trigger: rec.Trigger, Summary: rec.Summary, SummaryTokens: int64(rec.SummaryTokens),
		TokensBefore: int64(rec.TokensBefore), TokensAfter: int64(rec.TokensAfter), Limit: int64(rec.Limit),
		FirstKeptEntryId: rec.FirstKeptEntryID, PreviousCompactionId: rec.PreviousCompactionID,
		CompactedTokens: int64(rec.CompactedTokens), CreatedAt: ts(e.CreatedAt),
		Model: &pb.ModelRef{Provider: rec.Model.Provider, ModelId: rec.Model.ModelID, Endpoint: rec.Model.Endpoint},
	}
	err = s.summarised(ctx, cs, ex, e, rec, func(p entrystore.Entry) {
		out.CompactedEntries = append(out.CompactedEntries, &pb.CompactedEntry{EntryId: p.ID, Role: p.Role, Tokens: int64(entryTokens(p))})
	})
	if err != nil {
		return nil, toStatus(s.log, "get compaction: path", err)
	}
	return out, nil
}

// compaction finds the compaction entry id of the execution, on its
// conversation, and reads its record; a 404 for anything else.
func (s *service) compaction(ctx context.Context, org, executionID, id string) (
	ex entrystore.Execution, cs conversationStore, e entrystore.Entry, rec agentsdk.CompactionRecord, err error) {
	ex, cs, err = s.conversation(ctx, org, executionID)
	if err != nil {
		return ex, cs, e, rec, err
	}
	e, err = cs.GetEntry(ctx, ex.OrgID, id)
	if err == nil && e.ExecutionID != ex.ID {
		err = s.onPath(ctx, cs, ex, e)
	}
	if err != nil {
		return ex, cs, e, rec, s.notFound(err, "entry", id)
	}
	if e.Type != string(agentsdk.EntryCompaction) {
		return ex, cs, e, rec, status.Errorf(codes.NotFound, "entry %q is a %s entry, not a compaction", e.ID, e.Type)
	}
	if err := json.Unmarshal(e.Content, &rec); err != nil {
		return ex, cs, e, rec, toStatus(s.log, "get compaction", err)
	}
	return ex, cs, e, rec, nil
}

// summarised calls fn with each message the compaction entry e (record
// rec) summarised, oldest first. They are read a page of the path at a
// time, from the first one summarised: never the whole conversation at
// once.
func (s *service) summarised(ctx context.Context, cs conversationStore, ex entrystore.Execution, e entrystore.Entry,
	rec agentsdk.CompactionRecord, fn func(entrystore.Entry)) error {
	for after := rec.FromDepth - 1; after < rec.FirstKeptDepth-1; {
		page, more, err := cs.PathPage(ctx, ex.OrgID, e.ExecutionID, e.ID, after, entrystore.MaxPageLimit, s.pageBytes, string(agentsdk.EntryMessage))
		if err != nil {
			return err
		}
		for _, p := range page {
			if p.Depth >= rec.FirstKeptDepth {
				return nil
			}
			fn(p)
			after = p.Depth
		}
		if !more || len(page) == 0 {
			return nil
		}
	}
	return nil
}

// entryTokens is a stored entry's size in a model's context.
func entryTokens(e entrystore.Entry) int {
	return step.SDKEntry(e).Tokens()
}
