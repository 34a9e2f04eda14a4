package gateway

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/step"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// GetEntryContext is time travel (seed 004): the model request at an
// entry, built by step.Request, the function the model step uses. An
// entry that holds a model call's record (an answer the call wrote, or a
// compaction's llm_call entry) gives the request of that call: the
// conversation up to the leaf the call answered, the model it called and
// the tools it offered (both recorded with it). Any other entry gives what
// a call at that entry would send: the conversation up to and including
// it, the execution's first model and the tools its configuration offers.
func (s *service) GetEntryContext(ctx context.Context, req *pb.GetEntryContextRequest) (*pb.ModelContext, error) {
	ex, cs, err := s.conversation(ctx, req.GetOrg(), req.GetExecutionId())
	if err != nil {
		return nil, err
	}
	e, err := cs.GetEntry(ctx, ex.OrgID, req.GetEntryId())
	if answer, ok := flipLLMCallID(req.GetEntryId()); errors.Is(err, entrystore.ErrNotFound) && ok {
		// An answer's llm_call entry (llmcall.go): its call's request is
		// its answer's.
		if a, aerr := cs.GetEntry(ctx, ex.OrgID, answer); aerr == nil {
			if _, isCall := llmCallEntry(a); isCall {
				e, err = a, nil
			}
		}
	}
	if err == nil && e.ExecutionID != ex.ID {
		err = s.onPath(ctx, cs, ex, e)
	}
	if err != nil {
		return nil, s.notFound(err, "entry", req.GetEntryId())
	}
	var cfg agentsdk.Config
	if err := json.Unmarshal(ex.Config, &cfg); err != nil {
		return nil, toStatus(s.log, "entry context: config", err)
	}
	cfg = cfg.WithDefaults()
	out := &pb.ModelContext{EntryId: req.GetEntryId()}
	leaf, model, tools := e.ID, agentsdk.ModelRef{}, cfg.OfferedTools()
	if len(cfg.Models) > 0 {
		model = cfg.Models[0]
	}
	meta, sent, err := step.CallOf(step.SDKEntry(e))
	if err != nil {
		return nil, toStatus(s.log, "entry context: call record", err)
	}
	if sent {
		leaf, model, out.Sent = e.ParentID, meta.Model, true
		u := meta.Usage
		out.CallInputTokens, out.CallOutputTokens, out.Cost = u.Input+u.CacheRead+u.CacheWrite, u.Output, callCostOf(meta)
		if meta.Tools != nil {
			tools = meta.Tools
		}
	}
	p, err := s.page(req.GetPageSize(), "")
	if err != nil {
		return nil, err
	}
	cur, err := decodeCursor(req.GetCursor(), contextCursor{}, contextCursor.valid)
	if err != nil {
		return nil, err
	}
	// The context path, as the model step reads it: from what the latest
	// compaction kept, never the whole conversation.
	var path []agentsdk.Entry
	if leaf != "" {
		stored, err := cs.ContextPath(ctx, ex.OrgID, leaf)
		if err != nil {
			return nil, toStatus(s.log, "entry context: path", err)
		}
		for _, p := range stored {
			path = append(path, step.SDKEntry(p))
		}
	}
	// The variant's view: its exclusions left out, its injections in.
	ov, err := s.overlay(ctx, ex, req.GetVariant())
	if err != nil {
		return nil, err
	}
	path = ov.Apply(path)
	specs, err := s.toolSpecs(ctx, tools)
	if err != nil {
		return nil, err
	}
	specs = append(specs, cfg.ClientTools...) // offered after the worker's, as the model step does
	view, err := step.ViewOf(path)
	if err != nil {
		return nil, toStatus(s.log, "entry context", err)
	}
	var r agentsdk.ModelRequest
	if meta.Purpose == step.PurposeCompaction {
		// The call that wrote a compaction's summary: what it read.
		r, err = step.CompactionRequest(cfg, model, path, meta.FirstKeptDepth)
	} else {
		r, err = step.Request(cfg, model, path, specs)
		out.Tokens = int64(view.Tokens(r.System, r.Tools))
		if view.Compaction != nil {
			out.CompactionEntryId = view.Compaction.ID
		}
	}
	if err != nil {
		return nil, toStatus(s.log, "entry context", err)
	}
	out.Model = &pb.ModelRef{Provider: r.Model.Provider, ModelId: r.Model.ModelID, Endpoint: r.Model.Endpoint}
	out.System, out.MaxTokens, out.Temperature, out.ThinkingBudget = r.System, int32(r.MaxTokens), r.Temperature, int32(r.ThinkingBudget)
	for _, t := range r.Tools {
		out.Tools = append(out.Tools, &pb.ContextTool{Name: t.Name, Description: t.Description, Parameters: toValue(t.Parameters)})
	}
	// The messages are paged (pageSize, and the byte budget); the rest of
	// the request comes with every page.
	limit := min(cmp.Or(p.Limit, entrystore.DefaultPageLimit), entrystore.MaxPageLimit)
	budget := s.newPageBudget()
	for i := cur.Skip; i < len(r.Messages); i++ {
		b, err := json.Marshal(r.Messages[i])
		if err != nil {
			return nil, toStatus(s.log, "entry context", err)
		}
		m := toValue(b)
		if len(out.Messages) == limit || !budget.take(m) {
			out.NextCursor = encodeCursor(contextCursor{Skip: i})
			break
		}
		out.Messages = append(out.Messages, m)
	}
	return out, nil
}

// contextCursor is a position in an entry's context: how many of its
// messages were sent. The request is built again for each page, from
// immutable entries, so the same position names the same message.
type contextCursor struct {
	Skip int `json:"s"`
}

func (c contextCursor) valid() bool { return c.Skip >= 0 }

// onPath is nil when e is on the execution's conversation (an entry of
// the run it resumes), else ErrNotFound. A path holds one entry per
// depth, so it reads the one at e's depth, not the whole path.
func (s *service) onPath(ctx context.Context, cs conversationStore, ex entrystore.Execution, e entrystore.Entry) error {
	if ex.LeafEntryID == "" {
		return entrystore.ErrNotFound
	}
	at, _, err := cs.PathPage(ctx, ex.OrgID, ex.ID, ex.LeafEntryID, e.Depth-1, 1, 0, "")
	if err != nil {
		return err
	}
	if len(at) == 0 || at[0].ID != e.ID {
		return entrystore.ErrNotFound
	}
	return nil
}

// toolSpecs describes the named tools as the live workers do; a tool no
// live worker serves is named without a schema.
func (s *service) toolSpecs(ctx context.Context, names []string) ([]agentsdk.ToolSpec, error) {
	caps, err := s.es.LiveCapabilities(ctx)
	if err != nil {
		return nil, toStatus(s.log, "entry context: capabilities", err)
	}
	known := map[string]entrystore.CapabilityTool{}
	for _, c := range caps {
		for _, t := range c.Tools {
			known[t.Name] = t
		}
	}
	specs := make([]agentsdk.ToolSpec, len(names))
	for i, n := range names {
		t := known[n]
		specs[i] = agentsdk.ToolSpec{Name: n, Description: t.Description, Parameters: t.Parameters}
	}
	return specs, nil
}
