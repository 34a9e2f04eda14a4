package gateway

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/protobuf/encoding/protojson"

	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// newHTTPHandler serves REST (grpc-gateway, in process), the SSE streams,
// /healthz and /openapi.json.
func newHTTPHandler(svc *service, bodyLimit int64) (http.Handler, error) {
	gw := runtime.NewServeMux(
		runtime.WithErrorHandler(errorHandler),
		runtime.WithRoutingErrorHandler(routingErrorHandler),
		runtime.WithMarshalerOption(runtime.MIMEWildcard, &runtime.HTTPBodyMarshaler{Marshaler: &runtime.JSONPb{
			// Scalars and lists are always present ("", 0, []), so
			// clients see one shape; unset objects are left out. An
			// unknown field is a 400, not silently ignored.
			MarshalOptions:   protojson.MarshalOptions{EmitDefaultValues: true},
			UnmarshalOptions: protojson.UnmarshalOptions{DiscardUnknown: false},
		}}),
	)
	if err := pb.RegisterAgentServiceHandlerServer(context.Background(), gw, svc); err != nil {
		return nil, fmt.Errorf("gateway: register REST handlers: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/", gw)
	mux.Handle("GET /api/orgs/{org}/agent-executions/{id}/stream", svc.serveStream(false))
	mux.Handle("GET /api/orgs/{org}/agent-executions/{id}/stream/consolidated", svc.serveStream(true))
	mux.HandleFunc("GET /healthz", svc.health)
	mux.HandleFunc("GET /openapi.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(pb.OpenAPI)
	})
	return svc.requireKey(limitBody(bodyLimit, mux)), nil
}

// limitBody reads the body up front, up to limit: a larger one is a 413
// with the usual error body, before any handler decodes it (grpc-gateway
// would report a cut body as a 400 syntax error).
func limitBody(limit int64, next http.Handler) http.Handler {
	tooLarge := fmt.Sprintf("the request body is larger than %d bytes", limit)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		if r.ContentLength > limit {
			writeError(w, http.StatusRequestEntityTooLarge, "payload_too_large", tooLarge)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeError(w, http.StatusRequestEntityTooLarge, "payload_too_large", tooLarge)
			return
		}
		if err != nil {
			writeError(w, http.StatusBadRequest, "invalid_argument", "reading the request body: "+err.Error())
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		next.ServeHTTP(w, r)
	})
}

// health answers 200 while the store answers, else 503.
func (s *service) health(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.es.Pool().Ping(ctx); err != nil {
		writeError(w, http.StatusServiceUnavailable, "unavailable", "the database does not answer")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"status":"ok"}`+"\n")
}
