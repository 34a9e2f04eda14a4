package gateway

import (
	"context"
	"encoding/json"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/step"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// GetTokenTimeline walks the execution's conversation and says how large
// its context is after each entry: estimated from the entries' bytes,
// and set to the provider's own count at each llm_call (the input, cache
// reads and writes of that call), against the model's context window.
func (s *service) GetTokenTimeline(ctx context.Context, req *pb.GetTokenTimelineRequest) (*pb.TokenTimeline, error) {
	ex, err := s.conversation(ctx, req.GetOrg(), req.GetExecutionId())
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
	if ex.LeafEntryID == "" {
		return out, nil
	}
	path, err := s.es.Path(ctx, ex.OrgID, ex.LeafEntryID)
	if err != nil {
		return nil, toStatus(s.log, "token timeline", err)
	}
	var running int64
	for _, e := range path {
		p := &pb.TimelinePoint{EntryId: e.ID, Type: e.Type, Role: e.Role, Estimated: true,
			Compaction: e.Type == string(agentsdk.EntryCompaction)}
		switch e.Type {
		case string(agentsdk.EntryMessage):
			p.TokensAdded = int64(entryTokens(e))
			running += p.TokensAdded
		case string(agentsdk.EntryCompaction):
			// The context drops to the summary and the entries kept.
			var rec agentsdk.CompactionRecord
			if json.Unmarshal(e.Content, &rec) == nil && rec.TokensAfter > 0 {
				p.TokensAdded, running = int64(rec.TokensAfter)-running, int64(rec.TokensAfter)
			}
		case string(agentsdk.EntryLLMCall):
			var meta step.LLMCallMeta
			_ = json.Unmarshal(e.Metadata, &meta)
			if meta.Purpose == step.PurposeCompaction {
				// The summary call read a transcript, not the context.
				break
			}
			if read := meta.Usage.Input + meta.Usage.CacheRead + meta.Usage.CacheWrite; read > 0 {
				p.TokensAdded, running, p.Estimated = read-running, read, false
			}
		}
		p.ContextTokens = running
		p.Ratio = float64(running) / float64(out.Limit)
		out.Points = append(out.Points, p)
	}
	return out, nil
}
