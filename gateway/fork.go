package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	aclient "github.com/agentree/agentree/adapter/client"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// ForkAgentExecution forks an execution at an entry (aclient.Client.Fork).
func (s *service) ForkAgentExecution(ctx context.Context, req *pb.ForkAgentExecutionRequest) (*pb.AgentExecution, error) {
	if strings.TrimSpace(req.GetUserPrompt()) == "" {
		return nil, invalid("userPrompt is required: the fork's first message")
	}
	if req.GetEntryId() == "" {
		return nil, invalid("entryId is required: the entry to fork at")
	}
	ex, err := s.continued(ctx, req.GetOrg(), req.GetId(), "forked")
	if err != nil {
		return nil, err
	}
	fr := aclient.ForkRequest{OrgID: ex.OrgID, ExecutionID: ex.ID, EntryID: req.GetEntryId(), UserPrompt: req.GetUserPrompt(),
		NewID: effectID(ctx)}
	if req.GetConfig() != nil {
		var cfg agentsdk.Config
		if err := json.Unmarshal(ex.Config, &cfg); err != nil {
			return nil, toStatus(s.log, "fork: config", err)
		}
		raw, err := fromConfig(req.GetConfig())
		if err != nil {
			return nil, invalid("config: %v", err)
		}
		if err := decodeConfig(raw, &cfg, "config"); err != nil {
			return nil, err
		}
		if err := cfg.Validate(nil, nil); err != nil {
			return nil, invalid("%s", strings.TrimPrefix(err.Error(), "invalid input: "))
		}
		if cfg.Budget, err = s.v.ceiling.apply(cfg.Budget, "config.budget"); err != nil {
			return nil, err
		}
		// A fork's tools are checked as a create's: none the operator
		// forbids the organization.
		err = s.v.live.check(ctx, func(rows []entrystore.WorkerCapability) error {
			if len(rows) == 0 {
				return nil
			}
			return offers(rows, ex.OrgID, "on any task queue", "", cfg)
		})
		if err != nil {
			return nil, capError(s.log, err)
		}
		fr.Config = &cfg
	}
	if err := s.withinBudget(ctx, ex.OrgID); err != nil {
		return nil, err
	}
	cctx, cancel := committed(ctx)
	defer cancel()
	out, err := s.ex.Fork(cctx, fr)
	switch {
	case errors.Is(err, aclient.ErrForkPoint):
		return nil, invalid("%s", strings.TrimPrefix(err.Error(), "client: "))
	case errors.Is(err, entrystore.ErrNotFound):
		return nil, s.notFound(err, "entry", req.GetEntryId())
	case err != nil:
		return nil, toStatus(s.log, "fork agent execution", err)
	}
	return toExecution(out), nil
}

// ListForks lists the executions forked from the one named.
func (s *service) ListForks(ctx context.Context, req *pb.ListChildExecutionsRequest) (*pb.ListAgentExecutionsResponse, error) {
	ex, err := s.execution(ctx, req.GetOrg(), req.GetId())
	if err != nil {
		return nil, err
	}
	p, err := s.page(req.GetPageSize(), req.GetCursor())
	if err != nil {
		return nil, err
	}
	es, next, err := s.es.ListExecutions(ctx, ex.OrgID, entrystore.ExecutionFilter{ForkedFrom: ex.ID}, p)
	if err != nil {
		return nil, toStatus(s.log, "list forks", err)
	}
	return &pb.ListAgentExecutionsResponse{NextCursor: next, AgentExecutions: each(es, toExecution)}, nil
}
