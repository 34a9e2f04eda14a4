package gateway

import (
	"context"
	"encoding/json"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	aclient "github.com/agentree/agentree/adapter/client"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/step"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// ExplainAgentExecution makes (once) the explanation of the execution at
// its current leaf. The gateway builds the replay (replay.go) and writes
// it on the explanation's row; a worker makes the model call in the
// explain workflow, so it outlives this request and this gateway. A
// second request for the same leaf finds the row and calls nothing; one
// whose row is still pending starts its workflow again, which is
// harmless (client.Explain) and finishes what a crashed gateway began.
func (s *service) ExplainAgentExecution(ctx context.Context, req *pb.ExplainAgentExecutionRequest) (*pb.Explanation, error) {
	ex, cs, err := s.conversation(ctx, req.GetOrg(), req.GetExecutionId())
	if err != nil {
		return nil, err
	}
	if s.explainModel.Provider == "" {
		return nil, invalid("this gateway has no explain model configured, so it cannot explain executions: its operator names one with agentree gateway --explain-model provider/modelId")
	}
	if ex.LeafEntryID == "" {
		return nil, status.Errorf(codes.FailedPrecondition, "execution %q has no conversation to explain yet", ex.ID)
	}
	x, err := s.es.LatestExplanation(ctx, ex.OrgID, ex.ID, ex.LeafEntryID)
	if errors.Is(err, entrystore.ErrNotFound) {
		x, err = s.newExplanation(ctx, cs, ex)
	}
	if err != nil {
		return nil, toStatus(s.log, "explain agent execution", err)
	}
	if x.Status == entrystore.ExplanationPending {
		cctx, cancel := committed(ctx)
		defer cancel()
		if err := s.ex.Explain(cctx, aclient.ExplainInput{OrgID: x.OrgID, ExplanationID: x.ID}); err != nil {
			return nil, toStatus(s.log, "explain agent execution: start", err)
		}
	}
	return toExplanation(x, ex.LeafEntryID), nil
}

// newExplanation builds the replay of the execution and claims its
// leaf's explanation with it: a concurrent request that claimed it first
// wins, and its row is returned.
func (s *service) newExplanation(ctx context.Context, cs conversationStore, ex entrystore.Execution) (entrystore.Explanation, error) {
	r, err := s.replay(ctx, cs, ex)
	if err != nil {
		return entrystore.Explanation{}, err
	}
	model, _ := json.Marshal(s.explainModel)
	x, _, err := s.es.ClaimExplanation(ctx, entrystore.Explanation{
		OrgID: ex.OrgID, ExecutionID: ex.ID, LeafEntryID: ex.LeafEntryID, Model: model,
		Prompt: r.prompt, ReplayTokens: r.tokens, DecisionPoints: r.decisions, Truncated: r.truncated,
	})
	return x, err
}

// GetExplanation returns the execution's latest explanation, or its
// leaf's.
func (s *service) GetExplanation(ctx context.Context, req *pb.GetExplanationRequest) (*pb.Explanation, error) {
	// conversation, not execution: a worker-held execution's row does
	// not name its leaf, which says whether the explanation is current.
	ex, _, err := s.conversation(ctx, req.GetOrg(), req.GetExecutionId())
	if err != nil {
		return nil, err
	}
	x, err := s.es.LatestExplanation(ctx, ex.OrgID, ex.ID, req.GetLeafEntryId())
	if errors.Is(err, entrystore.ErrNotFound) {
		if req.GetLeafEntryId() != "" {
			return nil, status.Errorf(codes.NotFound, "execution %q has no explanation of leaf %q", ex.ID, req.GetLeafEntryId())
		}
		return nil, status.Errorf(codes.NotFound, "execution %q has no explanation yet: POST …/agent-executions/%s/explain makes one", ex.ID, ex.ID)
	}
	if err != nil {
		return nil, toStatus(s.log, "get explanation", err)
	}
	return toExplanation(x, ex.LeafEntryID), nil
}

// toExplanation is an explanation as the API serves it; leaf is the
// execution's leaf now.
func toExplanation(x entrystore.Explanation, leaf string) *pb.Explanation {
	out := &pb.Explanation{
		Id: x.ID, ExecutionId: x.ExecutionID, LeafEntryId: x.LeafEntryID, Status: x.Status, Text: x.Text,
		ErrorMessage: x.Error, ReplayTokens: int64(x.ReplayTokens), DecisionPoints: n32(x.DecisionPoints),
		Truncated: x.Truncated, Current: x.LeafEntryID == leaf, CreatedAt: ts(x.CreatedAt),
	}
	var m agentsdk.ModelRef
	if json.Unmarshal(x.Model, &m) == nil {
		out.Model = &pb.ModelRef{Provider: m.Provider, ModelId: m.ModelID, Endpoint: m.Endpoint}
	}
	if x.CompletedAt != nil {
		out.CompletedAt = ts(*x.CompletedAt)
	}
	var call step.LLMCallMeta
	if len(x.LLMCall) > 0 && json.Unmarshal(x.LLMCall, &call) == nil {
		u := call.Usage
		out.Usage = &pb.UsageLine{Key: m.Provider + "/" + m.ModelID, Calls: 1, InputTokens: u.Input, OutputTokens: u.Output,
			CacheReadTokens: u.CacheRead, CacheWriteTokens: u.CacheWrite, Cost: call.Cost, Unpriced: u.Unpriced}
	}
	return out
}
