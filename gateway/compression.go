package gateway

import (
	"context"
	"strings"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/step"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// GetCompressionAnalysis is the checkpoint diff of seed 004 §5 for one
// compaction: the contexts either side of it, by reference, and for each
// entry it summarised the distinctive terms (terms.go) its summary kept
// and missed. The context before is the one at the entry the compaction
// was made under (GetEntryContext there is what a call would have sent
// without it); the context after is the one at the compaction entry.
func (s *service) GetCompressionAnalysis(ctx context.Context, req *pb.GetCompressionAnalysisRequest) (*pb.CompressionAnalysis, error) {
	ex, cs, e, rec, err := s.compaction(ctx, req.GetOrg(), req.GetExecutionId(), req.GetEntryId())
	if err != nil {
		return nil, err
	}
	out := &pb.CompressionAnalysis{
		EntryId: e.ID, Trigger: rec.Trigger, Summary: rec.Summary,
		ContextAfter: &pb.ContextReference{EntryId: e.ID, Tokens: int64(rec.TokensAfter)},
		TokensSaved:  int64(rec.TokensBefore - rec.TokensAfter),
	}
	// The compaction hangs under its summary call's llm_call entry, which
	// hangs under the leaf it compacted.
	before := e.ParentID
	p, err := cs.GetEntry(ctx, ex.OrgID, e.ParentID)
	if err != nil {
		return nil, toStatus(s.log, "compression analysis: parent", err)
	}
	if p.Type == string(agentsdk.EntryLLMCall) {
		before = p.ParentID
	}
	out.ContextBefore = &pb.ContextReference{EntryId: before, Tokens: int64(rec.TokensBefore)}
	summary := strings.ToLower(rec.Summary)
	var bad error
	err = s.summarised(ctx, cs, ex, e, rec, func(p entrystore.Entry) {
		m, err := step.SDKEntry(p).Message()
		if err != nil {
			bad = err
			return
		}
		ce := &pb.CompressedEntry{EntryId: p.ID, Role: p.Role, Tokens: int64(entryTokens(p)), Terms: distinctiveTerms(entryText(m))}
		for _, t := range ce.Terms {
			if holdsTerm(summary, strings.ToLower(t)) {
				ce.KeptTerms = append(ce.KeptTerms, t)
			} else {
				ce.MissingTerms = append(ce.MissingTerms, t)
			}
		}
		if ce.PossiblyLost = 2*len(ce.MissingTerms) > len(ce.Terms); ce.PossiblyLost {
			out.PossiblyLost++
		}
		out.Entries = append(out.Entries, ce)
	})
	if err == nil {
		err = bad
	}
	if err != nil {
		return nil, toStatus(s.log, "compression analysis", err)
	}
	return out, nil
}
