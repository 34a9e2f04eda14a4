package gateway

import (
	"context"
	"errors"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/agentree/agentree/adapter/client"
	"github.com/agentree/agentree/entrystore"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// Follow-up bounds: a message the size a user types, due within a year.
const (
	maxFollowUpText    = 64 << 10
	maxFollowUpHorizon = 366 * 24 * time.Hour
)

func (s *service) ScheduleFollowUp(ctx context.Context, req *pb.ScheduleFollowUpRequest) (*pb.FollowUp, error) {
	ex, err := s.execution(ctx, req.GetOrg(), req.GetExecutionId())
	if err != nil {
		return nil, err
	}
	at, err := followUpTime(req, time.Now())
	if err != nil {
		return nil, err
	}
	switch {
	case req.GetText() == "":
		return nil, invalid("text is required: the message to deliver")
	case len(req.GetText()) > maxFollowUpText:
		return nil, invalid("text is %d bytes, over the %d-byte limit", len(req.GetText()), maxFollowUpText)
	}
	cctx, cancel := committed(ctx)
	defer cancel()
	f, err := s.ex.ScheduleFollowUp(cctx, effectID(ctx), ex.OrgID, ex.ID, req.GetText(), at)
	if err != nil {
		return nil, toStatus(s.log, "schedule follow-up", err)
	}
	return toFollowUp(f), nil
}

// followUpTime is when a follow-up asked for at now is due: at or
// afterSeconds, one of them, in the future and within the horizon.
func followUpTime(req *pb.ScheduleFollowUpRequest, now time.Time) (time.Time, error) {
	after := req.GetAfterSeconds()
	switch {
	case req.GetAt() != nil && after != 0:
		return time.Time{}, invalid("give at or afterSeconds, not both")
	case req.GetAt() != nil:
		if err := req.GetAt().CheckValid(); err != nil {
			return time.Time{}, invalid("at is not a valid time")
		}
		at := req.GetAt().AsTime()
		if !at.After(now) {
			return time.Time{}, invalid("at %s is not in the future", at.Format(time.RFC3339))
		}
		if at.Sub(now) > maxFollowUpHorizon {
			return time.Time{}, invalid("at %s is more than a year away", at.Format(time.RFC3339))
		}
		return at, nil
	case after < 0:
		return time.Time{}, invalid("afterSeconds must be positive")
	case after == 0:
		return time.Time{}, invalid("at or afterSeconds is required: when to deliver the message")
	case after > maxFollowUpHorizon.Seconds():
		return time.Time{}, invalid("afterSeconds %g is more than a year", after)
	}
	return now.Add(time.Duration(after * float64(time.Second))), nil
}

func (s *service) ListFollowUps(ctx context.Context, req *pb.ListFollowUpsRequest) (*pb.ListFollowUpsResponse, error) {
	ex, err := s.execution(ctx, req.GetOrg(), req.GetExecutionId())
	if err != nil {
		return nil, err
	}
	p, err := s.page(req.GetPageSize(), req.GetCursor())
	if err != nil {
		return nil, err
	}
	fs, next, err := s.es.ListFollowUps(ctx, ex.OrgID, ex.ID, p)
	if err != nil {
		return nil, toStatus(s.log, "list follow-ups", err)
	}
	return &pb.ListFollowUpsResponse{FollowUps: each(fs, toFollowUp), NextCursor: next}, nil
}

func (s *service) CancelFollowUp(ctx context.Context, req *pb.CancelFollowUpRequest) (*pb.FollowUp, error) {
	ex, err := s.execution(ctx, req.GetOrg(), req.GetExecutionId())
	if err != nil {
		return nil, err
	}
	cctx, cancel := committed(ctx)
	defer cancel()
	f, err := s.ex.CancelFollowUp(cctx, ex.OrgID, ex.ID, req.GetId())
	switch {
	case errors.Is(err, client.ErrNotScheduled):
		return nil, status.Errorf(codes.FailedPrecondition, "the follow-up is %s, no longer scheduled", f.Status)
	case err != nil:
		return nil, s.notFound(err, "follow-up", req.GetId())
	}
	return toFollowUp(f), nil
}

func toFollowUp(f entrystore.FollowUp) *pb.FollowUp {
	return &pb.FollowUp{Id: f.ID, ExecutionId: f.ExecutionID, Text: f.Text, DeliverAt: ts(f.DeliverAt), Status: f.Status,
		SignalId: f.SignalID, Error: f.Error, CreatedAt: ts(f.CreatedAt), UpdatedAt: ts(f.UpdatedAt)}
}
