package gateway

import (
	"context"
	"errors"
	"strings"
	"unicode/utf8"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	aclient "github.com/agentree/agentree/adapter/client"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// maxResumeMessage bounds a resume's message, in characters.
const maxResumeMessage = 100_000

// ResumeAgentExecution continues a PAUSED execution as a new one (see
// aclient.Client.Resume).
func (s *service) ResumeAgentExecution(ctx context.Context, req *pb.ResumeAgentExecutionRequest) (*pb.AgentExecution, error) {
	if n := req.GetMaxSteps(); n < 0 || n > agentsdk.MaxTotalSteps {
		return nil, invalid("maxSteps must be a whole number from 0 to %d (0 = the paused run's budget); got %d", agentsdk.MaxTotalSteps, n)
	}
	if n := utf8.RuneCountInString(req.GetMessage()); n > maxResumeMessage {
		return nil, invalid("message is %d characters, over the %d allowed", n, maxResumeMessage)
	}
	if req.GetMessage() != "" && strings.TrimSpace(req.GetMessage()) == "" {
		return nil, invalid("message is blank: leave it out for the default continue message")
	}
	ex, err := s.continued(ctx, req.GetOrg(), req.GetId(), "resumed")
	if err != nil {
		return nil, err
	}
	budget, err := s.resumeBudget(ctx, ex, req.GetBudget())
	if err != nil {
		return nil, err
	}
	// A resume while the day's budget is spent would pause again at its
	// first model call: 429, saying when the budget resets.
	if ex.Status == entrystore.StatusPaused {
		if err := s.withinBudget(ctx, ex.OrgID); err != nil {
			return nil, err
		}
	}
	cctx, cancel := committed(ctx)
	defer cancel()
	out, err := s.ex.Resume(cctx, aclient.ResumeRequest{
		OrgID: ex.OrgID, ExecutionID: ex.ID, MaxSteps: int(req.GetMaxSteps()), Message: req.GetMessage(),
		MaxTotalSteps: s.maxTotalSteps, NewID: effectID(ctx), Budget: budget,
	})
	switch {
	case errors.Is(err, aclient.ErrNotPaused), errors.Is(err, aclient.ErrStepLimit), errors.Is(err, aclient.ErrResumed):
		return nil, status.Error(codes.FailedPrecondition, strings.TrimPrefix(err.Error(), "client: "))
	case err != nil && out.ID != "":
		// Stored, but Temporal was out of reach: the reconciler starts it.
		s.log.Warn("gateway: resume: start workflow", "execution", out.ID, "err", err)
		return toExecution(out), nil
	case err != nil:
		return nil, toStatus(s.log, "resume agent execution", err)
	}
	return toExecution(out), nil
}

// ListChildExecutions lists the executions whose parent is the one named.
func (s *service) ListChildExecutions(ctx context.Context, req *pb.ListChildExecutionsRequest) (*pb.ListAgentExecutionsResponse, error) {
	ex, err := s.execution(ctx, req.GetOrg(), req.GetId())
	if err != nil {
		return nil, err
	}
	return s.ListAgentExecutions(ctx, &pb.ListAgentExecutionsRequest{Org: req.GetOrg(), ParentId: ex.ID,
		PageSize: req.GetPageSize(), Cursor: req.GetCursor()})
}
