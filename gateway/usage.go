package gateway

import (
	"context"
	"time"

	"github.com/agentree/agentree/entrystore"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// defaultUsageRange is how far back GetOrgUsage looks without a from.
const defaultUsageRange = 30 * 24 * time.Hour

// GetExecutionUsage sums the execution's llm_call entries by model.
func (s *service) GetExecutionUsage(ctx context.Context, req *pb.GetExecutionUsageRequest) (*pb.UsageReport, error) {
	ex, cs, err := s.conversation(ctx, req.GetOrg(), req.GetExecutionId())
	if err != nil {
		return nil, err
	}
	lines, err := cs.ExecutionUsage(ctx, ex.OrgID, ex.ID)
	if err != nil {
		return nil, toStatus(s.log, "execution usage", err)
	}
	out := toUsage(lines)
	if out.Budget, err = s.budgetState(ctx, ex); err != nil {
		return nil, err
	}
	return out, nil
}

// GetOrgUsage sums the organization's llm_call entries in [from, to).
func (s *service) GetOrgUsage(ctx context.Context, req *pb.GetOrgUsageRequest) (*pb.UsageReport, error) {
	o, err := s.authorize(ctx, req.GetOrg())
	if err != nil {
		return nil, err
	}
	groupBy := req.GetGroupBy()
	switch groupBy {
	case "":
		groupBy = entrystore.UsageByModel
	case entrystore.UsageByModel, entrystore.UsageByKind, entrystore.UsageByDefinition:
	default:
		return nil, invalid("groupBy must be model, kind or definition; got %q", groupBy)
	}
	to := time.Now()
	if req.GetTo() != nil {
		to = req.GetTo().AsTime()
	}
	from := to.Add(-defaultUsageRange)
	if req.GetFrom() != nil {
		from = req.GetFrom().AsTime()
	}
	if !from.Before(to) {
		return nil, invalid("from (%s) must be before to (%s)", from.Format(time.RFC3339), to.Format(time.RFC3339))
	}
	lines, err := s.es.OrgUsage(ctx, o.ID, from, to, groupBy)
	if err != nil {
		return nil, toStatus(s.log, "org usage", err)
	}
	return toUsage(lines), nil
}

func toUsage(lines []entrystore.UsageLine) *pb.UsageReport {
	out := &pb.UsageReport{Total: &pb.UsageLine{}}
	for _, l := range lines {
		line := &pb.UsageLine{Key: l.Key, Calls: l.Calls, InputTokens: l.Input, OutputTokens: l.Output,
			CacheReadTokens: l.CacheRead, CacheWriteTokens: l.CacheWrite, Cost: l.Cost, Unpriced: l.Unpriced}
		out.Lines = append(out.Lines, line)
		t := out.Total
		t.Calls, t.InputTokens, t.OutputTokens = t.Calls+l.Calls, t.InputTokens+l.Input, t.OutputTokens+l.Output
		t.CacheReadTokens, t.CacheWriteTokens, t.Cost = t.CacheReadTokens+l.CacheRead, t.CacheWriteTokens+l.CacheWrite, t.Cost+l.Cost
		t.Unpriced = t.Unpriced || l.Unpriced
	}
	return out
}
