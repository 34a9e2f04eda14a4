package gateway

import (
	"context"
	"errors"

	"github.com/agentree/agentree/entrystore"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// GetRetentionPolicy returns the organization's retention, or the
// defaults when it set none.
func (s *service) GetRetentionPolicy(ctx context.Context, req *pb.GetRetentionPolicyRequest) (*pb.RetentionPolicy, error) {
	o, err := s.authorize(ctx, req.GetOrg())
	if err != nil {
		return nil, err
	}
	p, err := s.es.GetRetention(ctx, o.ID)
	if errors.Is(err, entrystore.ErrNotFound) {
		d := entrystore.DefaultRetention
		return &pb.RetentionPolicy{KeepDays: int32(d.KeepDays), KeepFailedDays: int32(d.KeepFailedDays), IsDefault: true}, nil
	}
	if err != nil {
		return nil, toStatus(s.log, "get retention", err)
	}
	return toRetention(p), nil
}

// SetRetentionPolicy sets the organization's retention.
func (s *service) SetRetentionPolicy(ctx context.Context, req *pb.SetRetentionPolicyRequest) (*pb.RetentionPolicy, error) {
	o, err := s.authorize(ctx, req.GetOrg())
	if err != nil {
		return nil, err
	}
	for _, f := range []struct {
		name string
		v    int32
	}{{"keepDays", req.GetKeepDays()}, {"keepFailedDays", req.GetKeepFailedDays()}} {
		if f.v < 0 || f.v > entrystore.MaxRetentionDays {
			return nil, invalid("%s must be a whole number of days from 0 to %d; got %d", f.name, entrystore.MaxRetentionDays, f.v)
		}
	}
	p, err := s.es.SetRetention(ctx, entrystore.RetentionPolicy{OrgID: o.ID, KeepDays: int(req.GetKeepDays()), KeepFailedDays: int(req.GetKeepFailedDays())})
	if err != nil {
		return nil, toStatus(s.log, "set retention", err)
	}
	return toRetention(p), nil
}

func toRetention(p entrystore.RetentionPolicy) *pb.RetentionPolicy {
	return &pb.RetentionPolicy{KeepDays: int32(p.KeepDays), KeepFailedDays: int32(p.KeepFailedDays), UpdatedAt: ts(p.UpdatedAt)}
}
