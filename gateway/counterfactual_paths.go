package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"slices"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/step"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// GetCounterfactual returns a counterfactual beside its original.
func (s *service) GetCounterfactual(ctx context.Context, req *pb.GetCounterfactualRequest) (*pb.Counterfactual, error) {
	ex, err := s.execution(ctx, req.GetOrg(), req.GetId())
	if err != nil {
		return nil, err
	}
	cf, err := s.es.GetExecution(ctx, ex.OrgID, req.GetCounterfactualId())
	if err != nil {
		return nil, s.notFound(err, "counterfactual", req.GetCounterfactualId())
	}
	if counterfactualOf(cf) == nil || counterfactualOf(cf).Of != ex.ID {
		return nil, s.notFound(entrystore.ErrNotFound, "counterfactual", req.GetCounterfactualId())
	}
	return s.counterfactual(ctx, ex, cf)
}

// counterfactualOf is what a branch's configuration says it questions (nil
// for an execution that is none).
func counterfactualOf(ex entrystore.Execution) *agentsdk.Counterfactual {
	var cfg struct {
		Counterfactual *agentsdk.Counterfactual `json:"counterfactual"`
	}
	_ = json.Unmarshal(ex.Config, &cfg)
	return cfg.Counterfactual
}

// counterfactual lays the two paths side by side: the original's from the
// entry the alternative replaces, the branch's own entries.
func (s *service) counterfactual(ctx context.Context, original, cf entrystore.Execution) (*pb.Counterfactual, error) {
	of := counterfactualOf(cf)
	out := &pb.Counterfactual{Id: cf.ID, OriginalId: original.ID, EntryId: of.Entry}
	origPath, err := s.path(ctx, original)
	if err != nil {
		return nil, err
	}
	cfPath, err := s.path(ctx, cf)
	if err != nil {
		return nil, err
	}
	recordedUpTo := origPath
	if k := slices.IndexFunc(origPath, func(e agentsdk.Entry) bool { return e.ID == of.Leaf }); k >= 0 {
		recordedUpTo = origPath[:k+1]
	}
	rec := step.RecordedIn(recordedUpTo)
	if k := slices.IndexFunc(origPath, func(e agentsdk.Entry) bool { return e.ID == of.Entry }); k >= 0 {
		origPath = origPath[k:]
	}
	own := slices.DeleteFunc(slices.Clone(cfPath), func(e agentsdk.Entry) bool { return e.ExecutionID != cf.ID })
	out.Change = changeOf(original, cf, origPath, own)
	if out.Original, err = s.sidePath(ctx, original, origPath, nil); err != nil {
		return nil, err
	}
	if out.Counterfactual, err = s.sidePath(ctx, cf, own, &rec); err != nil {
		return nil, err
	}
	return out, nil
}

// changeOf names the branch's change from its first entry.
func changeOf(original, cf entrystore.Execution, origPath, own []agentsdk.Entry) string {
	if len(own) == 0 || len(origPath) == 0 {
		return ""
	}
	switch {
	case own[0].Role == agentsdk.RoleAssistant:
		return changeAction
	case origPath[0].Role == agentsdk.RoleUser && own[0].Role == agentsdk.RoleUser && string(own[0].Content) != string(origPath[0].Content):
		return changeMessage
	}
	return changeModel
}

// path is the execution's conversation, root first (none before its first
// entry).
func (s *service) path(ctx context.Context, ex entrystore.Execution) ([]agentsdk.Entry, error) {
	if ex.LeafEntryID == "" {
		return nil, nil
	}
	p, err := s.es.Path(ctx, ex.OrgID, ex.LeafEntryID)
	if err != nil && !errors.Is(err, entrystore.ErrNotFound) {
		return nil, toStatus(s.log, "counterfactual: path", err)
	}
	return sdkEntries(p), nil
}

// sidePath sums one side: its answers, tool calls with their records'
// outcomes, steps, tokens and cost. With rec (the branch's side), a call
// the original recorded is marked replayed.
func (s *service) sidePath(ctx context.Context, ex entrystore.Execution, path []agentsdk.Entry, rec *step.Recorded) (*pb.CounterfactualPath, error) {
	out := &pb.CounterfactualPath{ExecutionId: ex.ID, Status: string(ex.Status), StopReason: ex.StopReason}
	for _, e := range path {
		if e.Type != agentsdk.EntryMessage || e.Role != agentsdk.RoleAssistant {
			continue
		}
		m, err := e.Message()
		if err != nil {
			continue
		}
		out.Steps++
		if t := m.Text(); t != "" {
			out.Answers = append(out.Answers, t)
		}
		if call, ok, _ := step.CallOf(e); ok {
			out.InputTokens += call.Usage.Input
			out.OutputTokens += call.Usage.Output
			out.Cost += max(call.Cost, call.Usage.Cost)
		}
		for _, tc := range m.ToolCalls() {
			d := &pb.CounterfactualDecision{ToolCallId: tc.ID, ToolName: tc.Name, Arguments: toStruct(tc.Arguments)}
			r, err := s.es.ToolCallOf(ctx, ex.OrgID, e.ExecutionID, e.ID, tc.ID)
			switch {
			case err == nil:
				d.Status = r.Status
				var o struct {
					Text string `json:"text"`
				}
				_ = json.Unmarshal(r.Output, &o)
				d.OutputPreview = agentsdk.Preview(o.Text)
			case !errors.Is(err, entrystore.ErrNotFound):
				return nil, toStatus(s.log, "counterfactual: tool call", err)
			}
			if rec != nil {
				_, _, d.Replayed = rec.Answer(tc)
			}
			out.Decisions = append(out.Decisions, d)
		}
	}
	return out, nil
}
