package gateway

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strconv"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/agentree/agentree/entrystore"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// maxRunningLimit bounds a quota's maxRunning: past it the number means no
// limit, which 0 says already.
const maxRunningLimit = 1_000_000

// GetOrgQuota returns the organization's quotas and today's spend.
func (s *service) GetOrgQuota(ctx context.Context, req *pb.GetOrgQuotaRequest) (*pb.OrgQuota, error) {
	o, err := s.authorize(ctx, req.GetOrg())
	if err != nil {
		return nil, err
	}
	q, err := s.es.GetQuota(ctx, o.ID)
	isDefault := errors.Is(err, entrystore.ErrNotFound)
	if err != nil && !isDefault {
		return nil, toStatus(s.log, "get quota", err)
	}
	return s.orgQuota(ctx, o.ID, q, isDefault)
}

// SetOrgQuota sets the organization's quotas.
func (s *service) SetOrgQuota(ctx context.Context, req *pb.SetOrgQuotaRequest) (*pb.OrgQuota, error) {
	o, err := s.authorize(ctx, req.GetOrg())
	if err != nil {
		return nil, err
	}
	if n := req.GetMaxRunning(); n < 0 || n > maxRunningLimit {
		return nil, invalid("maxRunning must be a whole number from 0 (no limit) to %d; got %d", maxRunningLimit, n)
	}
	if n := req.GetTokensPerDay(); n < 0 {
		return nil, invalid("tokensPerDay must be 0 (no limit) or more; got %d", n)
	}
	if c := req.GetCostPerDay(); c < 0 || math.IsNaN(c) || math.IsInf(c, 0) {
		return nil, invalid("costPerDay must be a number of USD, 0 (no limit) or more; got %v", c)
	}
	q, err := s.es.SetQuota(ctx, entrystore.Quota{OrgID: o.ID, MaxRunning: int(req.GetMaxRunning()),
		TokensPerDay: req.GetTokensPerDay(), CostPerDay: req.GetCostPerDay()})
	if err != nil {
		return nil, toStatus(s.log, "set quota", err)
	}
	return s.orgQuota(ctx, o.ID, q, false)
}

// orgQuota is q with the organization's executions not ended and today's
// spend.
func (s *service) orgQuota(ctx context.Context, orgID string, q entrystore.Quota, isDefault bool) (*pb.OrgQuota, error) {
	now := time.Now().UTC()
	sp, err := s.es.SpendOn(ctx, orgID, now)
	if err != nil {
		return nil, toStatus(s.log, "get quota: spend", err)
	}
	running, err := s.es.CountLive(ctx, orgID)
	if err != nil {
		return nil, toStatus(s.log, "get quota: running", err)
	}
	out := &pb.OrgQuota{MaxRunning: int32(q.MaxRunning), TokensPerDay: q.TokensPerDay, CostPerDay: q.CostPerDay,
		IsDefault: isDefault, Running: int32(running), TokensToday: sp.Tokens, CostToday: sp.Cost,
		ResetsAt: ts(entrystore.DayResets(now))}
	if !isDefault {
		out.UpdatedAt = ts(q.UpdatedAt)
	}
	return out, nil
}

// withinBudget refuses, with 429 quota_exceeded, a request that would start
// model calls while the organization's daily budget is spent: the
// execution would only pause at its first call.
func (s *service) withinBudget(ctx context.Context, orgID string) error {
	return toStatus(s.log, "check budget", s.es.CheckBudget(ctx, orgID, time.Now()))
}

// quotaStatus is a refused quota as a gRPC status: RESOURCE_EXHAUSTED with
// a QuotaFailure detail (what the HTTP side answers 429 quota_exceeded
// for) and, for a daily quota, a RetryInfo until it resets.
func quotaStatus(qe *entrystore.QuotaError) error {
	st := status.New(codes.ResourceExhausted, qe.Error())
	fail := &errdetails.QuotaFailure{Violations: []*errdetails.QuotaFailure_Violation{{
		Subject: "organization", Description: qe.Quota,
	}}}
	with, err := st.WithDetails(fail)
	if !qe.ResetAt.IsZero() {
		with, err = st.WithDetails(fail, &errdetails.RetryInfo{RetryDelay: durationpb.New(time.Until(qe.ResetAt).Round(time.Second))})
	}
	if err != nil {
		return st.Err()
	}
	return with.Err()
}

// quotaRefusal reports whether st is a refused quota (quotaStatus) and how
// many seconds until it may pass ("" when that depends on other
// executions ending).
func quotaRefusal(st *status.Status) (retryAfter string, ok bool) {
	if st.Code() != codes.ResourceExhausted {
		return "", false
	}
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.QuotaFailure:
			ok = true
		case *errdetails.RetryInfo:
			retryAfter = strconv.Itoa(max(1, int(math.Ceil(d.GetRetryDelay().AsDuration().Seconds()))))
		}
	}
	return retryAfter, ok
}

// writeQuotaRefused answers st as 429 quota_exceeded if it is a refused
// quota.
func writeQuotaRefused(w http.ResponseWriter, st *status.Status) bool {
	retryAfter, ok := quotaRefusal(st)
	if !ok {
		return false
	}
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	writeError(w, http.StatusTooManyRequests, "quota_exceeded", st.Message())
	return true
}
