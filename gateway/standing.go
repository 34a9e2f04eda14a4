package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// Standing approvals: "always allow" for every execution of a definition
// or of the organization (seed 003 §3), made by a decision with scope
// definition or org, or directly. The worker consults them when the model
// asks for a call whose policy is ask (adapter's standingApproval); the
// operator's policy stays the ceiling, since a forbidden call never
// reaches that question.

// maxArgumentPattern bounds a standing approval's pattern, in bytes.
const maxArgumentPattern = 500

func toStandingApproval(a entrystore.StandingApproval) *pb.StandingApproval {
	out := &pb.StandingApproval{Id: a.ID, AgentDefinitionId: a.DefinitionID, ToolName: a.ToolName,
		ArgumentPattern: a.ArgumentPattern, CreatedBy: a.CreatedBy, CreatedAt: ts(a.CreatedAt), RevokedBy: a.RevokedBy}
	if a.RevokedAt != nil {
		out.RevokedAt = timestamppb.New(*a.RevokedAt)
	}
	return out
}

// orgTool is tool name as the live workers serve it to organization
// orgID: 400 when none does, or the operator forbids it the organization.
func (s *service) orgTool(ctx context.Context, orgID, name string) (entrystore.CapabilityTool, error) {
	var found entrystore.CapabilityTool
	err := s.v.live.check(ctx, func(rows []entrystore.WorkerCapability) error {
		rows, forbidden := forOrg(rows, orgID)
		if forbidden[name] {
			return invalid("%s", agentsdk.ForbiddenMessage(name, true))
		}
		for _, r := range rows {
			for _, t := range r.Tools {
				if t.Name == name {
					found = t
					return nil
				}
			}
		}
		return invalid("no live worker serves tool %q", name)
	})
	if err != nil {
		return found, capError(s.log, err)
	}
	return found, nil
}

// checkEditedArguments checks arguments a person gives a call of tool
// name against the tool's JSON Schema, as live workers record it; a tool
// no live worker describes is checked by the worker that runs the call.
func (s *service) checkEditedArguments(ctx context.Context, orgID, name string, args json.RawMessage) error {
	t, err := s.orgTool(ctx, orgID, name)
	if err != nil || len(t.Parameters) == 0 {
		return nil
	}
	tool := &agentsdk.Tool{Name: name, Parameters: t.Parameters}
	if err := tool.Validate(args); err != nil {
		return invalid("arguments do not fit tool %q: %s", name, strings.TrimPrefix(err.Error(), agentsdk.ErrInvalidInput.Error()+": "))
	}
	return nil
}

// standFor stores the standing approval a decision with scope definition
// or org makes (once per decision: a retry finds the first), nil for
// other decisions.
func (s *service) standFor(ctx context.Context, ex entrystore.Execution, d agentsdk.Decision, toolName, signalID string) (*pb.StandingApproval, error) {
	if d.Scope != agentsdk.ScopeDefinition && d.Scope != agentsdk.ScopeOrg {
		return nil, nil
	}
	a := entrystore.StandingApproval{OrgID: ex.OrgID, ToolName: toolName, CreatedBy: d.DecidedBy, SignalID: signalID}
	if d.Scope == agentsdk.ScopeDefinition {
		a.DefinitionID = ex.DefinitionID
	}
	got, err := s.es.CreateStandingApproval(ctx, a)
	if err != nil {
		return nil, toStatus(s.log, "decide tool call: standing approval", err)
	}
	return toStandingApproval(got), nil
}

func (s *service) CreateStandingApproval(ctx context.Context, req *pb.CreateStandingApprovalRequest) (*pb.StandingApproval, error) {
	org, err := s.authorize(ctx, req.GetOrg())
	if err != nil {
		return nil, err
	}
	key, err := s.caller(ctx)
	if err != nil {
		return nil, err
	}
	name, pattern := req.GetToolName(), req.GetArgumentPattern()
	switch {
	case name == "":
		return nil, invalid("toolName is required")
	case pattern != "" && name != agentsdk.ToolBash:
		return nil, invalid("argumentPattern applies to %s only: a pattern of its commands", agentsdk.ToolBash)
	case len(pattern) > maxArgumentPattern:
		return nil, invalid("argumentPattern is %d bytes, over the %d allowed", len(pattern), maxArgumentPattern)
	}
	if problems := agentsdk.SafeCommandProblems("argumentPattern", []string{pattern}); pattern != "" && len(problems) > 0 {
		return nil, invalid("%s", strings.Join(problems, "; "))
	}
	if _, err := s.orgTool(ctx, org.ID, name); err != nil {
		return nil, err
	}
	a, err := s.es.CreateStandingApproval(ctx, entrystore.StandingApproval{OrgID: org.ID, DefinitionID: req.GetAgentDefinitionId(),
		ToolName: name, ArgumentPattern: pattern, CreatedBy: key.ID})
	switch {
	case errors.Is(err, entrystore.ErrNotFound), errors.Is(err, entrystore.ErrInvalid):
		return nil, invalid("agentDefinitionId %q is not an agent definition of this organization", req.GetAgentDefinitionId())
	case err != nil:
		return nil, toStatus(s.log, "create standing approval", err)
	}
	return toStandingApproval(a), nil
}

func (s *service) ListStandingApprovals(ctx context.Context, req *pb.ListStandingApprovalsRequest) (*pb.ListStandingApprovalsResponse, error) {
	orgID, p, err := s.paged(ctx, req.GetOrg(), req.GetPageSize(), req.GetCursor())
	if err != nil {
		return nil, err
	}
	as, next, err := s.es.ListStandingApprovals(ctx, orgID,
		entrystore.StandingApprovalFilter{DefinitionID: req.GetAgentDefinitionId(), IncludeRevoked: req.GetIncludeRevoked()}, p)
	if err != nil {
		return nil, toStatus(s.log, "list standing approvals", err)
	}
	return &pb.ListStandingApprovalsResponse{StandingApprovals: each(as, toStandingApproval), NextCursor: next}, nil
}

func (s *service) RevokeStandingApproval(ctx context.Context, req *pb.RevokeStandingApprovalRequest) (*pb.StandingApproval, error) {
	org, err := s.authorize(ctx, req.GetOrg())
	if err != nil {
		return nil, err
	}
	key, err := s.caller(ctx)
	if err != nil {
		return nil, err
	}
	a, err := s.es.RevokeStandingApproval(ctx, org.ID, req.GetId(), key.ID)
	if err != nil {
		return nil, s.notFound(err, "standing approval", req.GetId())
	}
	return toStandingApproval(a), nil
}
