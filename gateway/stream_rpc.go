package gateway

import (
	"google.golang.org/grpc"

	"github.com/agentree/agentree/entrystore"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// StreamAgentExecution is the gRPC form of the SSE stream: the same
// replay-then-follow, one message per event, its payload typed.
func (s *service) StreamAgentExecution(req *pb.StreamAgentExecutionRequest, stream grpc.ServerStreamingServer[pb.StreamEvent]) error {
	ctx := stream.Context()
	ex, err := s.execution(ctx, req.GetOrg(), req.GetExecutionId())
	if err != nil {
		return err
	}
	if req.GetLastEventId() < 0 {
		return invalid("lastEventId must not be negative")
	}
	release, err := s.streamSlot(ctx, ex.OrgID)
	if err != nil {
		return err
	}
	defer release()
	noop := func() error { return nil }
	err = s.streams.follow(ctx, followRequest{
		Org: ex.OrgID, Execution: ex.ID, After: req.GetLastEventId(), Consolidated: req.GetConsolidated(),
		Emit: func(ev entrystore.StreamEvent) error {
			msg, err := toStreamEvent(ev)
			if err != nil {
				// Sent without a payload: the client still learns the
				// event's name and can resume past it.
				s.log.Warn("gateway: stream event payload", "execution", ex.ID, "event", ev.ID, "err", err)
			}
			return stream.Send(msg)
		},
		Flush: noop, Ping: noop,
	})
	return toStatus(s.log, "stream agent execution", err)
}
