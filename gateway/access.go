package gateway

import (
	"context"
	"net/http"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/agentree/agentree/entrystore"
)

// routeKey is the context key of the Route a REST request matched.
type routeKey struct{}

// routeOf is the route permit matched, if any.
func routeOf(ctx context.Context) (Route, []string, bool) {
	m, ok := ctx.Value(routeKey{}).(matched)
	return m.route, m.segs, ok
}

type matched struct {
	route Route
	segs  []string
}

// permit checks the authenticated key's roles against the route's
// declaration before anything reads the body, and hands the route on to
// the Idempotency-Key handling. A path no rule matches goes on to
// grpc-gateway, which answers 404 or 405.
func (s *service) permit(t *routeTable) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			key, authed := r.Context().Value(authenticatedKey{}).(entrystore.APIKey)
			rt, segs, ok := t.match(r.Method, r.URL.Path)
			if !authed || !ok {
				next.ServeHTTP(w, r)
				return
			}
			if err := rt.allowed(key, rt.Method+" "+rt.Template); err != nil {
				writeError(w, http.StatusForbidden, "permission_denied", err.Error())
				return
			}
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), routeKey{}, matched{rt, segs})))
		})
	}
}

// grpcAccess authenticates a gRPC call once, from its metadata, and checks
// the key's roles against the RPC's declaration; the service's methods then
// find the organization in the context as they do for REST.
func (s *service) grpcAccess(ctx context.Context, t *routeTable, fullMethod string) (context.Context, error) {
	rt, ok := t.byRPC[fullMethod]
	if !ok {
		return ctx, nil // not ours: gRPC answers UNIMPLEMENTED
	}
	md, _ := metadata.FromIncomingContext(ctx)
	vals := md.Get("authorization")
	if len(vals) != 1 {
		return ctx, errUnauthenticated
	}
	o, k, err := s.authenticate(ctx, vals[0], peerAddr(ctx))
	if err != nil {
		return ctx, err
	}
	if err := rt.allowed(k, rt.RPCName()); err != nil {
		return ctx, status.Error(codes.PermissionDenied, err.Error())
	}
	return context.WithValue(context.WithValue(ctx, authenticatedOrg{}, o), authenticatedKey{}, k), nil
}

// grpcInterceptors are grpcAccess for unary and streaming calls.
func (s *service) grpcInterceptors(t *routeTable) []grpc.ServerOption {
	unary := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		ctx, err := s.grpcAccess(ctx, t, info.FullMethod)
		if err != nil {
			return nil, err
		}
		return h(ctx, req)
	}
	stream := func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		ctx, err := s.grpcAccess(ss.Context(), t, info.FullMethod)
		if err != nil {
			return err
		}
		return h(srv, ctxStream{ss, ctx})
	}
	return []grpc.ServerOption{grpc.ChainUnaryInterceptor(unary), grpc.ChainStreamInterceptor(stream)}
}

// ctxStream is a server stream with the context grpcAccess made.
type ctxStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (c ctxStream) Context() context.Context { return c.ctx }

// callerRoles are the roles of the key that made the request.
func (s *service) callerRoles(ctx context.Context) []string {
	k, err := s.caller(ctx)
	if err != nil {
		return nil
	}
	return k.Roles
}
