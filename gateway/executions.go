package gateway

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

func (s *service) CreateAgentExecution(ctx context.Context, req *pb.CreateAgentExecutionRequest) (*pb.AgentExecution, error) {
	org, err := s.authorize(ctx, req.GetOrg())
	if err != nil {
		return nil, err
	}
	var def *entrystore.Definition
	if id := req.GetAgentDefinitionId(); id != "" {
		d, err := s.es.GetDefinition(ctx, org.ID, id)
		if errors.Is(err, entrystore.ErrNotFound) {
			return nil, invalid("agentDefinitionId %q: no such agent definition", id)
		}
		if err != nil {
			return nil, toStatus(s.log, "get agent definition", err)
		}
		def = &d
	}
	start, err := s.v.startRequest(ctx, s.log, org.ID, req, def)
	if err != nil {
		return nil, err
	}
	// With an Idempotency-Key the execution's ID is the key's, so a retry
	// of a create that died halfway finds the same execution.
	start.ExecutionID = effectID(ctx)
	start.WithinQuota = true
	if err := s.withinBudget(ctx, org.ID); err != nil {
		return nil, err
	}
	cctx, cancel := committed(ctx)
	defer cancel()
	ex, err := s.ex.Start(cctx, start)
	if err != nil {
		return nil, toStatus(s.log, "start agent execution", err)
	}
	return toExecution(ex), nil
}

func (s *service) ListAgentExecutions(ctx context.Context, req *pb.ListAgentExecutionsRequest) (*pb.ListAgentExecutionsResponse, error) {
	orgID, p, err := s.paged(ctx, req.GetOrg(), req.GetPageSize(), req.GetCursor())
	if err != nil {
		return nil, err
	}
	f := entrystore.ExecutionFilter{
		Status: entrystore.Status(req.GetStatus()), Kind: req.GetKind(),
		DefinitionID: req.GetAgentDefinitionId(), ParentID: req.GetParentId(),
		PersistenceMode: req.GetPersistenceMode(),
	}
	switch f.PersistenceMode {
	case "", entrystore.PersistenceRemote, entrystore.PersistenceWorkerHeld:
	default:
		return nil, invalid("persistenceMode %q is not remote or local", f.PersistenceMode)
	}
	es, next, err := s.es.ListExecutions(ctx, orgID, f, p)
	if err != nil {
		return nil, toStatus(s.log, "list agent executions", err)
	}
	return &pb.ListAgentExecutionsResponse{NextCursor: next, AgentExecutions: each(es, toExecution)}, nil
}

func (s *service) GetAgentExecution(ctx context.Context, req *pb.GetAgentExecutionRequest) (*pb.AgentExecution, error) {
	ex, err := s.execution(ctx, req.GetOrg(), req.GetId())
	if err != nil {
		return nil, err
	}
	out := s.withWaiting(ctx, ex, toExecution(ex))
	if out.Budget, err = s.budgetState(ctx, ex); err != nil {
		return nil, err
	}
	return out, nil
}

func (s *service) CancelAgentExecution(ctx context.Context, req *pb.CancelAgentExecutionRequest) (*pb.AgentExecution, error) {
	ex, err := s.execution(ctx, req.GetOrg(), req.GetId())
	if err != nil {
		return nil, err
	}
	if ex.Status.Terminal() {
		return nil, status.Errorf(codes.FailedPrecondition, "the execution has ended (%s)", ex.Status)
	}
	cctx, cancel := committed(ctx)
	defer cancel()
	ex, err = s.ex.Cancel(cctx, ex.OrgID, ex.ID)
	if err != nil {
		return nil, toStatus(s.log, "cancel agent execution", err)
	}
	return toExecution(ex), nil
}

func (s *service) SignalAgentExecution(ctx context.Context, req *pb.SignalAgentExecutionRequest) (*pb.SignalAgentExecutionResponse, error) {
	ex, err := s.execution(ctx, req.GetOrg(), req.GetId())
	if err != nil {
		return nil, err
	}
	if req.GetSignalName() == agentsdk.SignalToolResult {
		return s.signalToolResult(ctx, ex, req)
	}
	value, err := s.v.signalValue(req)
	if err != nil {
		return nil, err
	}
	cctx, cancel := committed(ctx)
	defer cancel()
	sig, err := s.ex.SignalOnce(cctx, effectID(ctx), ex.OrgID, ex.ID, req.GetSignalName(), value)
	if err != nil {
		return nil, toStatus(s.log, "signal agent execution", err)
	}
	return &pb.SignalAgentExecutionResponse{SignalId: sig.ID, ExecutionId: req.GetId(), SignalName: req.GetSignalName()}, nil
}
