package gateway

import (
	"context"
	"strings"
	"time"

	"github.com/agentree/agentree/entrystore"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// CreateApiKey mints a key; its secret is in this answer only (a replay
// with the same Idempotency-Key answers without it: idempotency.go).
func (s *service) CreateApiKey(ctx context.Context, req *pb.CreateApiKeyRequest) (*pb.CreatedApiKey, error) {
	org, err := s.authorize(ctx, req.GetOrg())
	if err != nil {
		return nil, err
	}
	roles, err := entrystore.CheckRoles(req.GetRoles())
	if err != nil {
		return nil, invalid("roles: %s", strings.TrimPrefix(err.Error(), entrystore.ErrInvalid.Error()+": "))
	}
	nk := entrystore.NewAPIKey{Name: req.GetName(), Roles: roles}
	if req.GetExpiresAt() != nil {
		at := req.GetExpiresAt().AsTime()
		if !at.After(time.Now()) {
			return nil, invalid("expiresAt must be in the future; got %s", at.Format(time.RFC3339))
		}
		nk.ExpiresAt = &at
	}
	secret, k, err := s.es.MintAPIKey(ctx, org.ID, nk)
	if err != nil {
		return nil, toStatus(s.log, "create api key", err)
	}
	return &pb.CreatedApiKey{Key: toAPIKey(k), Secret: secret}, nil
}

// ListApiKeys lists the organization's keys, never their secrets.
func (s *service) ListApiKeys(ctx context.Context, req *pb.ListApiKeysRequest) (*pb.ListApiKeysResponse, error) {
	orgID, p, err := s.paged(ctx, req.GetOrg(), req.GetPageSize(), req.GetCursor())
	if err != nil {
		return nil, err
	}
	ks, next, err := s.es.ListAPIKeys(ctx, orgID, p)
	if err != nil {
		return nil, toStatus(s.log, "list api keys", err)
	}
	return &pb.ListApiKeysResponse{ApiKeys: each(ks, toAPIKey), NextCursor: next}, nil
}

// RevokeApiKey revokes a key; this gateway forgets it at once, others
// within their key cache's TTL.
func (s *service) RevokeApiKey(ctx context.Context, req *pb.RevokeApiKeyRequest) (*pb.ApiKey, error) {
	org, err := s.authorize(ctx, req.GetOrg())
	if err != nil {
		return nil, err
	}
	k, err := s.es.RevokeAPIKey(ctx, org.ID, req.GetId())
	if err != nil {
		return nil, s.notFound(err, "API key", req.GetId())
	}
	s.keys.forget(k.ID)
	return toAPIKey(k), nil
}

// ExpireApiKey brings a key's expiry forward (to now when no time is
// given).
func (s *service) ExpireApiKey(ctx context.Context, req *pb.ExpireApiKeyRequest) (*pb.ApiKey, error) {
	org, err := s.authorize(ctx, req.GetOrg())
	if err != nil {
		return nil, err
	}
	var at time.Time
	if req.GetExpireTime() != nil {
		at = req.GetExpireTime().AsTime()
	}
	k, err := s.es.ExpireAPIKey(ctx, org.ID, req.GetId(), at)
	if err != nil {
		return nil, s.notFound(err, "API key", req.GetId())
	}
	s.keys.forget(k.ID)
	return toAPIKey(k), nil
}

func toAPIKey(k entrystore.APIKey) *pb.ApiKey {
	return &pb.ApiKey{
		Id: k.ID, Name: k.Name, Prefix: k.Prefix, Roles: k.Roles, CreatedAt: ts(k.CreatedAt),
		LastUsedAt: tsPtr(k.LastUsedAt), ExpiresAt: tsPtr(k.ExpiresAt), RevokedAt: tsPtr(k.RevokedAt),
	}
}
