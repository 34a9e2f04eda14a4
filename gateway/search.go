package gateway

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/agentree/agentree/entrystore"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// Cross-run search, statistics per definition and failure clusters (seed
// 004 §9) read entrystore's per-execution summaries.

// SearchAgentExecutions finds executions across runs.
func (s *service) SearchAgentExecutions(ctx context.Context, req *pb.SearchAgentExecutionsRequest) (*pb.SearchAgentExecutionsResponse, error) {
	orgID, p, err := s.paged(ctx, req.GetOrg(), req.GetPageSize(), req.GetCursor())
	if err != nil {
		return nil, err
	}
	f := entrystore.SearchFilter{
		ToolName: req.GetToolName(), ToolArguments: req.GetToolArguments(), Model: req.GetModel(),
		Status: entrystore.Status(req.GetStatus()), StopReason: req.GetStopReason(), ErrorClass: req.GetErrorClass(),
		DefinitionID: req.GetAgentDefinitionId(),
	}
	if f.Status != "" && !f.Status.Valid() {
		return nil, invalid("status %q is not a status: PENDING, RUNNING, WAITING, CANCELLING, COMPLETED, FAILED, CANCELLED or PAUSED", req.GetStatus())
	}
	if f.From, f.To, err = timeRange(req.GetFrom(), req.GetTo()); err != nil {
		return nil, err
	}
	if req.MinCost != nil {
		f.MinCost = req.MinCost
	}
	if req.MaxCost != nil {
		f.MaxCost = req.MaxCost
	}
	if (f.MinCost != nil && *f.MinCost < 0) || (f.MaxCost != nil && *f.MaxCost < 0) {
		return nil, invalid("minCost and maxCost must not be negative")
	}
	if f.MinCost != nil && f.MaxCost != nil && *f.MinCost > *f.MaxCost {
		return nil, invalid("minCost %g is more than maxCost %g", *f.MinCost, *f.MaxCost)
	}
	if f.DefinitionID != "" && !isUUID(f.DefinitionID) {
		return nil, invalid("agentDefinitionId %q is not a definition ID", f.DefinitionID)
	}
	hits, next, err := s.es.SearchExecutions(ctx, orgID, f, p)
	if err != nil {
		return nil, toStatus(s.log, "search executions", err)
	}
	out := &pb.SearchAgentExecutionsResponse{NextCursor: next}
	for _, h := range hits {
		out.Matches = append(out.Matches, &pb.ExecutionMatch{Execution: toExecution(h.Execution), Summary: toSummary(h.Summary)})
	}
	return out, nil
}

func toSummary(s entrystore.Summary) *pb.ExecutionSummary {
	return &pb.ExecutionSummary{Turns: s.Turns, ToolCalls: s.ToolCalls, InputTokens: s.InputTokens, OutputTokens: s.OutputTokens,
		Cost: s.Cost, Models: s.Models, Tools: s.Tools, LastToolName: s.LastToolName, LastToolStatus: s.LastToolStatus,
		ErrorClass: s.ErrorClass}
}

// timeRange parses a request's from and to (RFC 3339; "" is unbounded).
func timeRange(from, to string) (time.Time, time.Time, error) {
	var out [2]time.Time
	for i, v := range []struct{ name, value string }{{"from", from}, {"to", to}} {
		if v.value == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, v.value)
		if err != nil {
			return out[0], out[1], invalid("%s %q is not an RFC 3339 time, such as 2026-01-02T15:04:05Z", v.name, v.value)
		}
		out[i] = t
	}
	if !out[0].IsZero() && !out[1].IsZero() && !out[0].Before(out[1]) {
		return out[0], out[1], invalid("from must be before to")
	}
	return out[0], out[1], nil
}

// GetDefinitionStats spreads a definition's executions.
func (s *service) GetDefinitionStats(ctx context.Context, req *pb.GetDefinitionStatsRequest) (*pb.DefinitionStats, error) {
	o, err := s.authorize(ctx, req.GetOrg())
	if err != nil {
		return nil, err
	}
	from, to, err := timeRange(req.GetFrom(), req.GetTo())
	if err != nil {
		return nil, err
	}
	st, err := s.es.StatsOfDefinition(ctx, o.ID, req.GetId(), from, to)
	if err != nil {
		return nil, s.notFound(err, "agent definition", req.GetId())
	}
	dist := func(d entrystore.Distribution) *pb.Distribution {
		return &pb.Distribution{Count: d.Count, P50: d.P50, P90: d.P90, P99: d.P99, Max: d.Max}
	}
	return &pb.DefinitionStats{AgentDefinitionId: req.GetId(), Executions: st.Executions, ByStatus: st.ByStatus,
		Turns: dist(st.Turns), ToolCalls: dist(st.ToolCalls), Cost: dist(st.Cost), DurationMs: dist(st.DurationMs)}, nil
}

// ListFailureClusters groups failed executions.
func (s *service) ListFailureClusters(ctx context.Context, req *pb.ListFailureClustersRequest) (*pb.ListFailureClustersResponse, error) {
	orgID, p, err := s.paged(ctx, req.GetOrg(), req.GetPageSize(), req.GetCursor())
	if err != nil {
		return nil, err
	}
	f := entrystore.ClusterFilter{DefinitionID: req.GetAgentDefinitionId()}
	if f.DefinitionID != "" && !isUUID(f.DefinitionID) {
		return nil, invalid("agentDefinitionId %q is not a definition ID", f.DefinitionID)
	}
	if f.From, f.To, err = timeRange(req.GetFrom(), req.GetTo()); err != nil {
		return nil, err
	}
	cs, next, err := s.es.FailureClusters(ctx, orgID, f, p)
	if err != nil {
		return nil, toStatus(s.log, "failure clusters", err)
	}
	out := &pb.ListFailureClustersResponse{NextCursor: next}
	for _, c := range cs {
		out.FailureClusters = append(out.FailureClusters, &pb.FailureCluster{ErrorClass: c.ErrorClass, LastToolName: c.LastToolName,
			LastToolStatus: c.LastToolStatus, Count: c.Count, ExampleExecutionIds: c.Examples})
	}
	return out, nil
}

// isUUID reports whether id is an ID as the store writes them.
func isUUID(id string) bool {
	_, err := uuid.Parse(id)
	return err == nil
}
