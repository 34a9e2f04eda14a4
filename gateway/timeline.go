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
	if ex.LeafEntryID == "" {
		return out, nil
	}
	path, err := cs.Path(ctx, ex.OrgID, ex.LeafEntryID)
	if err != nil {
		return nil, toStatus(s.log, "token timeline", err)
	}
	var running int64
	for _, e := range path {
		p := &pb.TimelinePoint{EntryId: e.ID, Type: e.Type, Role: e.Role, Estimated: true,
			Compaction: e.Type == string(agentsdk.EntryCompaction)}
		call, isCall, _ := step.CallOf(sdkEntry(e))
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
	return out, nil
}
