package gateway

import (
	"context"
	"net/http"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/agentree/agentree/entrystore"
)

// errUnauthenticated is the one answer to a missing, malformed or unknown
// key: which of them it was is no business of the caller's.
var errUnauthenticated = status.Error(codes.Unauthenticated, "a valid organization API key is required: Authorization: Bearer <key>")

// authenticatedOrg and authenticatedKey are the context keys of the
// organization and the API key requireKey authenticated.
type (
	authenticatedOrg struct{}
	authenticatedKey struct{}
)

// caller is the API key that made the request: the one requireKey
// authenticated, else the gRPC metadata's.
func (s *service) caller(ctx context.Context) (entrystore.APIKey, error) {
	if k, ok := ctx.Value(authenticatedKey{}).(entrystore.APIKey); ok {
		return k, nil
	}
	md, _ := metadata.FromIncomingContext(ctx)
	vals := md.Get("authorization")
	if len(vals) != 1 {
		return entrystore.APIKey{}, errUnauthenticated
	}
	_, k, err := s.authenticate(ctx, vals[0], peerAddr(ctx))
	return k, err
}

// requireKey authenticates every /api/ request before anything else looks
// at it (grpc-gateway decodes the body before calling the service), so an
// unauthenticated caller learns nothing, not even whether its body parses.
func (s *service) requireKey(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/api/") {
			next.ServeHTTP(w, r)
			return
		}
		if r, ok := s.withCaller(w, r); ok {
			next.ServeHTTP(w, r)
		}
	})
}

// withCaller authenticates r's key and returns r with the caller's
// organization and key in its context; a request it refuses (401, 429) it
// has answered itself.
func (s *service) withCaller(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	o, k, err := s.authenticate(r.Context(), r.Header.Get("Authorization"), clientAddr(r.RemoteAddr))
	if s.writeRateLimited(w, r, err) {
		return r, false
	}
	if err != nil {
		writeStatus(w, err)
		return r, false
	}
	ctx := context.WithValue(context.WithValue(r.Context(), authenticatedOrg{}, o), authenticatedKey{}, k)
	return r.WithContext(ctx), true
}

// authorize returns the caller's organization — the one requireKey
// authenticated for REST and SSE, else the key in the gRPC metadata — and checks
// that it is the one the request names (by slug or ID). Another
// organization is a 404, exactly as if nothing were there.
func (s *service) authorize(ctx context.Context, org string) (entrystore.Org, error) {
	o, ok := ctx.Value(authenticatedOrg{}).(entrystore.Org)
	if !ok {
		md, _ := metadata.FromIncomingContext(ctx)
		vals := md.Get("authorization")
		if len(vals) != 1 {
			return entrystore.Org{}, errUnauthenticated
		}
		var err error
		if o, _, err = s.authenticate(ctx, vals[0], peerAddr(ctx)); err != nil {
			return entrystore.Org{}, err
		}
	}
	if org != o.Slug && !strings.EqualFold(org, o.ID) {
		return entrystore.Org{}, status.Errorf(codes.NotFound, "organization %q not found", org)
	}
	return o, nil
}

// peerAddr is a gRPC caller's IP.
func peerAddr(ctx context.Context) string {
	p, ok := peer.FromContext(ctx)
	if !ok || p.Addr == nil {
		return ""
	}
	return clientAddr(p.Addr.String())
}

// bearer extracts the token of an "Authorization: Bearer <token>" header;
// the scheme is case-insensitive (RFC 9110).
func bearer(header string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(header), " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return "", false
	}
	return token, true
}
