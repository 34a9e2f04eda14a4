package gateway

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	aclient "github.com/agentree/agentree/adapter/client"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
)

// branchSummary has the execution's model (its configuration's first:
// the definition's) summarise the path a branch to entryID abandons, in
// one durable model call on a worker (aclient.Client.SummariseBranch),
// and returns the branch_summary entry written under entryID.
func (s *service) branchSummary(ctx context.Context, ex entrystore.Execution, entryID string) (entrystore.Entry, error) {
	if _, err := s.es.GetEntry(ctx, ex.OrgID, entryID); err != nil {
		return entrystore.Entry{}, s.notFound(err, "entry", entryID)
	}
	if ex.LeafEntryID == "" || ex.LeafEntryID == entryID {
		return entrystore.Entry{}, invalid("there is nothing to summarise: the execution's leaf is at entry %s already", entryID)
	}
	var cfg agentsdk.Config
	if err := json.Unmarshal(ex.Config, &cfg); err != nil {
		return entrystore.Entry{}, toStatus(s.log, "branch: config", err)
	}
	if len(cfg.Models) == 0 {
		return entrystore.Entry{}, status.Error(codes.FailedPrecondition, "the execution names no model to write the summary")
	}
	// The entry must be on the execution's tree before a model is paid to
	// summarise anything: the move checks it again, with the row locked.
	if _, err := s.es.TreeEntry(ctx, ex, entryID); err != nil {
		return entrystore.Entry{}, s.variantStatus("branch", err)
	}
	key := effectID(ctx)
	if key == "" {
		key = uuid.NewString()
	}
	// The request's context: a client gone before the summary is written
	// leaves it to its workflow, which a retry with the same key joins.
	id, err := s.ex.SummariseBranch(ctx, ex, aclient.BranchSummaryInput{
		OrgID: ex.OrgID, ExecutionID: ex.ID, EntryID: entryID, AbandonedLeafID: ex.LeafEntryID, Model: cfg.Models[0],
		Key: "branch/" + key,
	})
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return entrystore.Entry{}, toStatus(s.log, "branch summary", err)
		}
		s.log.Warn("gateway: branch summary", "execution", ex.ID, "err", err)
		return entrystore.Entry{}, status.Error(codes.Unavailable, "the branch summary could not be written; retry with the same Idempotency-Key")
	}
	e, err := s.es.GetEntry(ctx, ex.OrgID, id)
	if err != nil {
		return e, toStatus(s.log, "branch summary", err)
	}
	return e, nil
}
