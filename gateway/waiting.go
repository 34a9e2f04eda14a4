package gateway

import (
	"context"
	"encoding/json"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/agentree/agentree/entrystore"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// withWaiting adds what a WAITING execution waits for (waitingFor, and
// wakeAt for a timer) to out. The engine records both in the metadata of
// the checkpoint that began the wait (engine.WaitMeta): the execution row
// stays as it is, and what a wait is for is read only when one is shown.
// A checkpoint that cannot be read (a store hiccup, a local execution
// whose checkpoints its worker holds) leaves them unset: the status says
// WAITING either way.
func (s *service) withWaiting(ctx context.Context, ex entrystore.Execution, out *pb.AgentExecution) *pb.AgentExecution {
	if ex.Status != entrystore.StatusWaiting {
		return out
	}
	cp, err := s.es.LatestCheckpoint(ctx, ex.OrgID, ex.ID)
	if err != nil {
		return out
	}
	var meta struct {
		WaitingFor string     `json:"waitingFor"`
		WakeAt     *time.Time `json:"wakeAt"`
	}
	if json.Unmarshal(cp.Metadata, &meta) != nil {
		return out
	}
	out.WaitingFor = meta.WaitingFor
	if meta.WakeAt != nil {
		out.WakeAt = timestamppb.New(*meta.WakeAt)
	}
	return out
}
