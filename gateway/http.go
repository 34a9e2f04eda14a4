package gateway

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/agentree/agentree/gateway/ui"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// newHTTPHandler serves REST (grpc-gateway, in process), the SSE streams,
// /healthz, /readyz, /openapi.json (OpenAPI 3) and /swagger.json (the same
// in Swagger 2.0). /metrics is not here: it has a listener of its own.
func newHTTPHandler(svc *service, bodyLimit int64) (http.Handler, error) {
	gw := runtime.NewServeMux(
		runtime.WithErrorHandler(errorHandler),
		runtime.WithRoutingErrorHandler(routingErrorHandler),
		runtime.WithMarshalerOption(runtime.MIMEWildcard, &runtime.HTTPBodyMarshaler{Marshaler: bodyMarshaler{&runtime.JSONPb{
			// Scalars and lists are always present ("", 0, []), so
			// clients see one shape; unset objects are left out. An
			// unknown field is a 400, not silently ignored.
			MarshalOptions:   protojson.MarshalOptions{EmitDefaultValues: true},
			UnmarshalOptions: protojson.UnmarshalOptions{DiscardUnknown: false},
		}}}),
		// NOTE: grpc-gateway keeps the query parser in a package
		// variable; every gateway sets the same one.
		runtime.SetQueryParameterParser(queryParser{}),
	)
	if err := pb.RegisterAgentServiceHandlerServer(context.Background(), gw, svc); err != nil {
		return nil, fmt.Errorf("gateway: register REST handlers: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/", gw)
	mux.Handle("GET /api/orgs/{org}/agent-executions/{id}/stream", svc.serveStream(false))
	mux.Handle("GET /api/orgs/{org}/agent-executions/{id}/stream/consolidated", svc.serveStream(true))
	mux.HandleFunc("GET /api/orgs/{org}/agent-executions/{id}/ag-ui", svc.serveAGUI)
	mux.HandleFunc("POST /api/orgs/{org}/agent-definitions/{id}/ag-ui", svc.serveAGUIRun)
	mux.Handle("/v1/", svc.openAIHandler())
	mux.Handle("/a2a/", svc.a2aHandler())
	mux.Handle("/mcp/", svc.mcpHandler())
	mux.HandleFunc("GET /healthz", live)
	mux.HandleFunc("GET /readyz", svc.readyz)
	page := ui.Handler(svc.log)
	mux.Handle("GET /{$}", page)
	mux.Handle("GET /ui/", page)
	mux.Handle("POST "+ui.ReportPath, page)
	mux.HandleFunc("GET /openapi.json", serveDocument(pb.OpenAPI))
	mux.HandleFunc("GET /swagger.json", serveDocument(pb.Swagger))
	routes, err := loadRoutes()
	if err != nil {
		return nil, err
	}
	return svc.requireKey(svc.permit(routes)(limitBody(bodyLimit, requireJSON(svc.idempotent(mux))))), nil
}

// serveDocument serves a fixed JSON document.
func serveDocument(doc []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(doc)
	}
}

// requireJSON refuses a request body in any media type but JSON with a
// 415, on every route: a body sent as text/plain (or curl's default,
// form-encoded) was not meant as this API's JSON. A body without a
// Content-Type is taken as JSON. It runs after limitBody, so the length is
// known.
func requireJSON(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ct := r.Header.Get("Content-Type")
		if r.ContentLength == 0 || ct == "" || !strings.HasPrefix(r.URL.Path, "/api/") {
			next.ServeHTTP(w, r)
			return
		}
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			writeError(w, http.StatusUnsupportedMediaType, "unsupported_media_type",
				fmt.Sprintf("Content-Type %q is not supported: send the body as JSON with Content-Type: application/json", ct))
			return
		}
		next.ServeHTTP(w, r)
	})
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

// live answers 200 while the process serves: liveness touches nothing, so
// probing it costs the database nothing.
func live(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"status":"ok"}`+"\n")
}

// readyCheckInterval is how often /readyz pings the database at most,
// whoever probes it how often.
const readyCheckInterval = time.Second

// readiness is the last database check of /readyz.
type readiness struct {
	mu      sync.Mutex
	checked time.Time
	err     error
}

// readyz answers 200 while the store answers, else 503; the answer is
// reused for readyCheckInterval.
func (s *service) readyz(w http.ResponseWriter, r *http.Request) {
	if err := s.ready.check(r.Context(), s.es.Pool().Ping); err != nil {
		writeError(w, http.StatusServiceUnavailable, "unavailable", "the database does not answer")
		return
	}
	live(w, r)
}

// check runs ping unless a check ran less than readyCheckInterval ago;
// concurrent probes wait for the one check.
func (rd *readiness) check(ctx context.Context, ping func(context.Context) error) error {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	if !rd.checked.IsZero() && time.Since(rd.checked) < readyCheckInterval {
		return rd.err
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	rd.err, rd.checked = ping(ctx), time.Now()
	return rd.err
}
