package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// maxDecisionReason bounds a decision's reason, in characters.
const maxDecisionReason = 2000

// findToolCall finds the execution's tool call by the model's call ID
// (its latest record) or by the record's own ID; a 404 otherwise.
func (s *service) findToolCall(ctx context.Context, cs conversationStore, orgID, executionID, id string) (entrystore.ToolCall, error) {
	tc, err := cs.LatestToolCall(ctx, orgID, executionID, id)
	if errors.Is(err, entrystore.ErrNotFound) {
		if tc, err = cs.GetToolCall(ctx, orgID, id); err == nil && tc.ExecutionID != executionID {
			err = entrystore.ErrNotFound
		}
	}
	if err != nil {
		return tc, s.notFound(err, "tool call", id)
	}
	return tc, nil
}

// DecideToolCall approves or rejects a tool call waiting for approval. The
// call is named by the model's ID (what agent.waiting lists) or by its
// record's ID. The decision goes through the inbox as a toolApproval
// signal; the store refuses a second one on the call while the first is
// pending, and the record, which holds the first once applied, afterwards.
func (s *service) DecideToolCall(ctx context.Context, req *pb.DecideToolCallRequest) (*pb.DecideToolCallResponse, error) {
	d, err := decisionOf(req)
	if err != nil {
		return nil, err
	}
	ex, err := s.execution(ctx, req.GetOrg(), req.GetExecutionId())
	if err != nil {
		return nil, err
	}
	key, err := s.caller(ctx)
	if err != nil {
		return nil, err
	}
	if id := effectID(ctx); id != "" {
		// The re-run of a keyed decision whose first attempt stored it:
		// the call no longer waits, so answer from the stored signal.
		if _, err := s.es.GetSignal(ctx, ex.OrgID, id); err == nil {
			cctx, cancel := committed(ctx)
			defer cancel()
			// SignalOnce finds the row and sends it on if not consumed.
			sig, err := s.ex.SignalOnce(cctx, id, ex.OrgID, ex.ID, agentsdk.SignalToolApproval, nil)
			if err != nil {
				return nil, toStatus(s.log, "decide tool call", err)
			}
			tc, err := s.findToolCall(ctx, s.es, ex.OrgID, ex.ID, req.GetToolCallId())
			if err != nil {
				return nil, err
			}
			d.DecidedBy = key.ID
			standing, err := s.standFor(ctx, ex, d, tc.ToolName, sig.ID)
			if err != nil {
				return nil, err
			}
			return &pb.DecideToolCallResponse{SignalId: sig.ID, ToolCall: toToolCall(tc), StandingApproval: standing}, nil
		}
	}
	tc, err := s.waitingCall(ctx, ex, req.GetToolCallId())
	if err != nil {
		return nil, err
	}
	if err := escalationAllows(ex, tc, key.Roles, time.Now()); err != nil {
		return nil, err
	}
	if d.Scope == agentsdk.ScopeDefinition && ex.DefinitionID == "" {
		return nil, invalid("scope %q needs an execution started from an agent definition; this one was not", agentsdk.ScopeDefinition)
	}
	if len(d.Arguments) > 0 {
		if err := s.checkEditedArguments(ctx, ex.OrgID, tc.ToolName, d.Arguments); err != nil {
			return nil, err
		}
	}
	now := time.Now().UTC()
	d.ToolCallID, d.DecidedBy, d.DecidedAt = tc.ToolCallID, key.ID, &now
	value, err := json.Marshal(d)
	if err != nil {
		return nil, toStatus(s.log, "decide tool call", err)
	}
	cctx, cancel := committed(ctx)
	defer cancel()
	sig, err := s.ex.SignalOnce(cctx, effectID(ctx), ex.OrgID, ex.ID, agentsdk.SignalToolApproval, value)
	if errors.Is(err, entrystore.ErrConflict) && !errors.Is(err, entrystore.ErrExecutionEnded) {
		return nil, status.Errorf(codes.FailedPrecondition, "tool call %q has a decision already", tc.ToolCallID)
	}
	if err != nil {
		return nil, toStatus(s.log, "decide tool call", err)
	}
	// Stored after the decision, keyed by it: a retry that finds the
	// decision stored makes it then (above), and never twice.
	standing, err := s.standFor(ctx, ex, d, tc.ToolName, sig.ID)
	if err != nil {
		return nil, err
	}
	return &pb.DecideToolCallResponse{SignalId: sig.ID, ToolCall: toToolCall(tc), StandingApproval: standing}, nil
}

// decisionOf checks a decision request's own fields. A scope wider than
// the call approves the tool for the rest of the execution too (Always).
func decisionOf(req *pb.DecideToolCallRequest) (agentsdk.Decision, error) {
	d := agentsdk.Decision{Decision: req.GetDecision(), Reason: req.GetReason(), Always: req.GetAlways(), Scope: req.GetScope()}
	approve := d.Decision == agentsdk.DecisionApprove
	switch d.Scope {
	case "":
	case agentsdk.ScopeExecution, agentsdk.ScopeDefinition, agentsdk.ScopeOrg:
		if !approve {
			return d, invalid("scope applies to approvals only")
		}
		d.Always = true
	default:
		return d, invalid("scope must be %q, %q or %q; got %q", agentsdk.ScopeExecution, agentsdk.ScopeDefinition, agentsdk.ScopeOrg, d.Scope)
	}
	if req.GetArguments() != nil {
		if !approve {
			return d, invalid("arguments apply to approvals only: a rejected call does not run")
		}
		args, err := fromStruct(req.GetArguments())
		if err != nil {
			return d, invalid("arguments: %v", err)
		}
		d.Arguments = args
	}
	switch {
	case req.GetToolCallId() == "":
		return d, invalid("toolCallId is required")
	case d.Decision != agentsdk.DecisionApprove && d.Decision != agentsdk.DecisionReject:
		return d, invalid("decision must be %q or %q; got %q", agentsdk.DecisionApprove, agentsdk.DecisionReject, d.Decision)
	case d.Always && d.Decision != agentsdk.DecisionApprove:
		return d, invalid("always applies to approvals only")
	case utf8.RuneCountInString(d.Reason) > maxDecisionReason:
		return d, invalid("reason is %d characters, over the %d allowed", utf8.RuneCountInString(d.Reason), maxDecisionReason)
	}
	return d, nil
}

// waitingCall finds the call id names (the model's ID, else the record's)
// in the execution and checks that it waits for a decision.
func (s *service) waitingCall(ctx context.Context, ex entrystore.Execution, id string) (entrystore.ToolCall, error) {
	tc, err := s.findToolCall(ctx, s.es, ex.OrgID, ex.ID, id)
	if err != nil {
		return tc, err
	}
	switch {
	case tc.Decision != "":
		return tc, status.Errorf(codes.FailedPrecondition, "tool call %q was decided already (%s)", tc.ToolCallID, tc.Decision)
	case tc.Status != entrystore.ToolCallAwaitingApproval:
		return tc, status.Errorf(codes.FailedPrecondition, "tool call %q is not waiting for approval (status %s)", tc.ToolCallID, tc.Status)
	}
	return tc, nil
}

// escalationAllows refuses (403) a decision on a call whose escalating
// approval timeout has passed by a key without the role it escalated to.
func escalationAllows(ex entrystore.Execution, tc entrystore.ToolCall, roles []string, now time.Time) error {
	var cfg agentsdk.Config
	if json.Unmarshal(ex.Config, &cfg) != nil || tc.ApprovalRequestedAt == nil {
		return nil
	}
	role := cfg.ApprovalTimeout.EscalatedTo(*tc.ApprovalRequestedAt, now)
	if role == "" || slices.Contains(roles, role) {
		return nil
	}
	return status.Error(codes.PermissionDenied, (&permissionDenied{role: role,
		what: fmt.Sprintf("deciding tool call %q, escalated when its approval timed out,", tc.ToolCallID)}).Error())
}
