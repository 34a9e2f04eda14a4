package gateway

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/step"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// GetTokenTimeline walks the execution's conversation, a page at a time,
// and says how large
// its context is after each entry: estimated from the entries' bytes,
// and set to the provider's own count at each model call's record (the
// input, cache reads and writes of that call, held by the answer it wrote
// or an llm_call entry), against the model's context window.
func (s *service) GetTokenTimeline(ctx context.Context, req *pb.GetTokenTimelineRequest) (*pb.TokenTimeline, error) {
	ex, cs, err := s.conversation(ctx, req.GetOrg(), req.GetExecutionId())
	if err != nil {
		return nil, err
	}
	var cfg agentsdk.Config
	_ = json.Unmarshal(ex.Config, &cfg)
	model := agentsdk.ModelRef{}
	if len(cfg.Models) > 0 {
		model = cfg.Models[0]
	}
	out := &pb.TokenTimeline{Limit: n32(s.windows.Of(model))}
	p, err := s.page(req.GetPageSize(), "")
	if err != nil {
		return nil, err
	}
	cur, err := decodeCursor(req.GetCursor(), timelineCursor{Leaf: ex.LeafEntryID, Depth: -1}, timelineCursor.valid)
	if err != nil {
		return nil, err
	}
	if cur.Leaf == "" {
		return out, nil
	}
	// A page of the path at a time, never the whole conversation: the
	// cursor carries the running total the next page goes on from.
	path, more, err := cs.PathPage(ctx, ex.OrgID, ex.ID, cur.Leaf, cur.Depth, p.Limit, p.Bytes, "")
	if errors.Is(err, entrystore.ErrNotFound) {
		return nil, invalid("cursor %q is not a nextCursor of this list", req.GetCursor())
	}
	if err != nil {
		return nil, toStatus(s.log, "token timeline", err)
	}
	ov, err := s.overlay(ctx, ex, req.GetVariant())
	if err != nil {
		return nil, err
	}
	running, spent := cur.Running, cur.Cost
	for _, e := range path {
		p := &pb.TimelinePoint{EntryId: e.ID, Type: e.Type, Role: e.Role, Estimated: true,
			Compaction: e.Type == string(agentsdk.EntryCompaction)}
		if ov.Excludes(e.ID) {
			// Left out of the variant's context: it adds nothing.
			p.Excluded, p.ContextTokens, p.Ratio, p.CostTotal = true, running, float64(running)/float64(out.Limit), spent
			out.Points = append(out.Points, p)
			continue
		}
		call, isCall, _ := step.CallOf(step.SDKEntry(e))
		if isCall {
			u := call.Usage
			p.ModelCall, p.Cost = true, callCostOf(call)
			spent += p.Cost
			p.CallInputTokens, p.CallOutputTokens = u.Input+u.CacheRead+u.CacheWrite, u.Output
		}
		p.CostTotal = spent
		if isCall && call.Purpose != step.PurposeCompaction {
			// The provider's count of what the call read replaces the
			// estimate (a compaction's summary call read a transcript,
			// not the context).
			if read := call.Usage.Input + call.Usage.CacheRead + call.Usage.CacheWrite; read > 0 {
				p.TokensAdded, running, p.Estimated = read-running, read, false
			}
		}
		switch e.Type {
		case string(agentsdk.EntryMessage):
			// An answer adds itself after what its call read: as many
			// tokens as the provider counted it.
			n := int64(entryTokens(e))
			if isCall && !p.Estimated && call.Usage.Output > 0 {
				n = call.Usage.Output
			}
			p.TokensAdded += n
			running += n
		case string(agentsdk.EntryCompaction):
			// The context drops to the summary and the entries kept.
			var rec agentsdk.CompactionRecord
			if json.Unmarshal(e.Content, &rec) == nil && rec.TokensAfter > 0 {
				p.TokensAdded, running = int64(rec.TokensAfter)-running, int64(rec.TokensAfter)
			}
		}
		p.ContextTokens = running
		p.Ratio = float64(running) / float64(out.Limit)
		out.Points = append(out.Points, p)
	}
	if more {
		out.NextCursor = encodeCursor(timelineCursor{Leaf: cur.Leaf, Depth: path[len(path)-1].Depth, Running: running, Cost: spent})
	}
	return out, nil
}

// timelineCursor is a position in the token timeline: the leaf whose path
// is walked (pinned, as messagesCursor), the depth of the last point sent
// and the context's size and the calls' cost there.
type timelineCursor struct {
	Leaf    string  `json:"l"`
	Depth   int     `json:"d"`
	Running int64   `json:"r,omitempty"`
	Cost    float64 `json:"c,omitempty"`
}

func (c timelineCursor) valid() bool {
	return c.Leaf != "" && c.Depth >= 0 && c.Running >= 0 && c.Cost >= 0
}
