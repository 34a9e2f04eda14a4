package gateway

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/step"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// The kinds of decision point (seed 004 §2). A tool selection and its
// arguments are one decision: the model chose both in one call.
const (
	decisionToolCall = "tool_call"
	decisionApproval = "approval"
	decisionSpawn    = "spawn"
	decisionStop     = "stop"
)

// Bounds of what a decision point quotes: enough to tell why and what
// came of it; the entries hold the rest, a GetEntry away.
const (
	maxReasoning = 1000
	maxExcerpt   = 500
)

// decisionsCursor is a position in the decision points of a pinned leaf's
// path: the entries up to depth Depth are done, and Skip decisions of the
// next answer (after filtering) were sent.
type decisionsCursor struct {
	Leaf  string `json:"l"`
	Depth int    `json:"d"`
	Skip  int    `json:"s,omitempty"`
}

func (c decisionsCursor) valid() bool { return c.Leaf != "" && c.Depth >= -1 && c.Skip >= 0 }

// decisionFilter is a request's filters.
type decisionFilter struct{ kind, tool string }

func (f decisionFilter) match(d *pb.DecisionPoint) bool {
	return (f.kind == "" || d.Kind == f.kind) && (f.tool == "" || d.ToolName == f.tool)
}

// ListDecisionPoints walks the active path a page of entries at a time
// and turns each answer a model call wrote into its decision points.
func (s *service) ListDecisionPoints(ctx context.Context, req *pb.ListDecisionPointsRequest) (*pb.ListDecisionPointsResponse, error) {
	switch req.GetKind() {
	case "", decisionToolCall, decisionApproval, decisionSpawn, decisionStop:
	default:
		return nil, invalid("kind must be one of %s, %s, %s or %s; got %q", decisionToolCall, decisionApproval, decisionSpawn, decisionStop, req.GetKind())
	}
	ex, cs, err := s.conversation(ctx, req.GetOrg(), req.GetExecutionId())
	if err != nil {
		return nil, err
	}
	p, err := s.page(req.GetPageSize(), "")
	if err != nil {
		return nil, err
	}
	cur, err := decodeCursor(req.GetCursor(), decisionsCursor{Leaf: ex.LeafEntryID, Depth: -1}, decisionsCursor.valid)
	if err != nil {
		return nil, err
	}
	out := &pb.ListDecisionPointsResponse{LeafEntryId: cur.Leaf}
	if cur.Leaf == "" {
		return out, nil
	}
	limit := min(cmp.Or(p.Limit, entrystore.DefaultPageLimit), entrystore.MaxPageLimit)
	f := decisionFilter{kind: req.GetKind(), tool: req.GetToolName()}
	budget := s.newPageBudget()
	err = s.walkDecisions(ctx, cs, ex, cur, func(e entrystore.Entry, i int, d *pb.DecisionPoint) bool {
		if i < cur.Skip && e.Depth == cur.Depth+1 {
			return true
		}
		if len(out.DecisionPoints) == limit || !budget.take(d) {
			out.NextCursor = encodeCursor(decisionsCursor{Leaf: cur.Leaf, Depth: e.Depth - 1, Skip: i})
			return false
		}
		out.DecisionPoints = append(out.DecisionPoints, d)
		return true
	}, f)
	if errors.Is(err, entrystore.ErrNotFound) {
		return nil, invalid("cursor %q is not a nextCursor of this list", req.GetCursor())
	}
	if err != nil {
		return nil, toStatus(s.log, "list decision points", err)
	}
	return out, nil
}

// walkDecisions calls fn with each decision point on the path to cur.Leaf
// past cur.Depth, root first, with the answer that made it and its index
// among that answer's decisions that pass f, until fn returns false.
func (s *service) walkDecisions(ctx context.Context, cs conversationStore, ex entrystore.Execution, cur decisionsCursor,
	fn func(e entrystore.Entry, i int, d *pb.DecisionPoint) bool, f decisionFilter) error {
	for after := cur.Depth; ; {
		page, more, err := cs.PathPage(ctx, ex.OrgID, ex.ID, cur.Leaf, after, entrystore.DefaultPageLimit, s.pageBytes, string(agentsdk.EntryMessage))
		if err != nil {
			return err
		}
		for _, e := range page {
			after = e.Depth
			if e.Role != string(agentsdk.RoleAssistant) {
				continue
			}
			ds, err := s.decisionsOf(ctx, cs, ex, e)
			if err != nil {
				return err
			}
			i := 0
			for _, d := range ds {
				if !f.match(d) {
					continue
				}
				if !fn(e, i, d) {
					return nil
				}
				i++
			}
		}
		if !more || len(page) == 0 {
			return nil
		}
	}
}

// decisionsOf are the decision points of one answer: a tool_call (or
// spawn) per tool it called, an approval after each call that needed one,
// or a stop when it called none.
func (s *service) decisionsOf(ctx context.Context, cs conversationStore, ex entrystore.Execution, e entrystore.Entry) ([]*pb.DecisionPoint, error) {
	var m agentsdk.Message
	if err := json.Unmarshal(e.Content, &m); err != nil {
		return nil, err
	}
	meta, isCall, err := step.CallOf(step.SDKEntry(e))
	if err != nil {
		return nil, err
	}
	base := func(kind string) *pb.DecisionPoint {
		d := &pb.DecisionPoint{Kind: kind, EntryId: e.ID, Step: n32(e.Step), CreatedAt: ts(e.CreatedAt),
			StopReason: string(cmp.Or(m.StopReason, meta.StopReason)), Context: &pb.DecisionContext{EntryId: e.ID, Estimated: true}}
		d.Reasoning, d.ReasoningSource, d.ReasoningTruncated = reasoningOf(m)
		model := meta.Model
		if !isCall {
			model = agentsdk.ModelRef{Provider: m.Provider, ModelID: m.Model}
		}
		d.Model = &pb.ModelRef{Provider: model.Provider, ModelId: model.ModelID, Endpoint: model.Endpoint}
		if read := meta.Usage.Input + meta.Usage.CacheRead + meta.Usage.CacheWrite; read > 0 {
			d.Context.Tokens, d.Context.Estimated = read, false
		}
		return d
	}
	calls := m.ToolCalls()
	if len(calls) == 0 {
		return []*pb.DecisionPoint{base(decisionStop)}, nil
	}
	var out []*pb.DecisionPoint
	for _, c := range calls {
		kind := decisionToolCall
		if c.Name == agentsdk.ToolSpawnAgents {
			kind = decisionSpawn
		}
		d := base(kind)
		d.ToolCallId, d.ToolName, d.Arguments = c.ID, c.Name, toValue(c.Arguments)
		rec, err := cs.LatestToolCall(ctx, ex.OrgID, e.ExecutionID, c.ID)
		if errors.Is(err, entrystore.ErrNotFound) {
			// Not run yet: the agent has not reached it.
			d.Outcome = &pb.DecisionOutcome{Status: entrystore.ToolCallRunning}
			out = append(out, d)
			continue
		}
		if err != nil {
			return nil, err
		}
		d.Outcome = &pb.DecisionOutcome{Status: rec.Status, ResultEntryId: rec.ResultEntryID}
		d.Outcome.Excerpt, d.Outcome.ExcerptTruncated = excerptOf(rec.Output)
		if kind == decisionSpawn && rec.ResultEntryID != "" {
			if d.ChildExecutionIds, err = s.spawned(ctx, cs, ex, e, rec.ResultEntryID); err != nil {
				return nil, err
			}
		}
		out = append(out, d)
		if approval := toApproval(rec); approval != nil {
			a := base(decisionApproval)
			a.ToolCallId, a.ToolName, a.Arguments = c.ID, c.Name, d.Arguments
			a.Outcome = &pb.DecisionOutcome{Status: approvalStatus(rec.Decision), Approval: approval}
			if rec.Decision != "" {
				a.Outcome.ResultEntryId = rec.ResultEntryID
			}
			out = append(out, a)
		}
	}
	return out, nil
}

// approvalStatus is a person's decision as an outcome.
func approvalStatus(decision string) string {
	switch decision {
	case agentsdk.DecisionApprove:
		return "approved"
	case agentsdk.DecisionReject:
		return "rejected"
	}
	return "pending"
}

// spawned are the sub-agents a spawn_agents call started: the agent_result
// entries between its answer and its result.
func (s *service) spawned(ctx context.Context, cs conversationStore, ex entrystore.Execution, answer entrystore.Entry, resultID string) ([]string, error) {
	rs, _, err := cs.PathPage(ctx, ex.OrgID, answer.ExecutionID, resultID, answer.Depth, entrystore.MaxPageLimit, 0, string(agentsdk.EntryAgentResult))
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, r := range rs {
		var c struct {
			ExecutionID string `json:"executionId"`
		}
		if json.Unmarshal(r.Content, &c) == nil && c.ExecutionID != "" {
			ids = append(ids, c.ExecutionID)
		}
	}
	return ids, nil
}

// reasoningOf is what an answer wrote before deciding: its thinking, else
// its text, bounded.
func reasoningOf(m agentsdk.Message) (text, source string, truncated bool) {
	var thinking, plain []string
	for _, b := range m.Content {
		switch b.Type {
		case agentsdk.BlockThinking:
			thinking = append(thinking, b.Thinking)
		case agentsdk.BlockText:
			plain = append(plain, b.Text)
		}
	}
	if t := strings.TrimSpace(strings.Join(thinking, "\n")); t != "" {
		text, truncated = bounded(t, maxReasoning)
		return text, "thinking", truncated
	}
	if t := strings.TrimSpace(strings.Join(plain, "")); t != "" {
		text, truncated = bounded(t, maxReasoning)
		return text, "text", truncated
	}
	return "", "", false
}

// excerptOf is the start of a tool call's output ({text, isError}, or any
// JSON) as the model read it.
func excerptOf(output json.RawMessage) (string, bool) {
	if len(output) == 0 {
		return "", false
	}
	var o struct {
		Text *string `json:"text"`
	}
	if json.Unmarshal(output, &o) == nil && o.Text != nil {
		return bounded(*o.Text, maxExcerpt)
	}
	return bounded(string(output), maxExcerpt)
}

// bounded is s cut to at most n characters.
func bounded(s string, n int) (string, bool) {
	if utf8.RuneCountInString(s) <= n {
		return s, false
	}
	return string([]rune(s)[:n]), true
}
