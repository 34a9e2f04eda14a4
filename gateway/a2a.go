package gateway

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/agentree/agentree/entrystore"
)

// The A2A server (README "A2A"): every definition that opts in
// (expose.a2a) is an A2A agent at /a2a/{org}/{slug}, its card at
// …/.well-known/agent-card.json, where the official clients resolve it
// from that base URL. A task is an execution (task ID = execution ID) and
// its context is the execution's conversation, so the context ID is the
// execution ID too. Callers authenticate with the organization's API key
// as on the REST API; reading (the card, tasks/get, tasks/resubscribe)
// needs the read role, everything that starts or steers an execution run.

// a2aAgent is what every A2A request is about: the caller and the
// definition it addresses.
type a2aAgent struct {
	org entrystore.Org
	key entrystore.APIKey
	def entrystore.Definition
}

// a2aHandler serves the A2A routes.
func (s *service) a2aHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /a2a/{org}/{slug}/.well-known/agent-card.json", s.withA2AAgent(s.serveA2ACard))
	mux.HandleFunc("POST /a2a/{org}/{slug}", s.withA2AAgent(s.serveA2ARPC))
	mux.HandleFunc("/a2a/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not_found", "no A2A route "+r.Method+" "+r.URL.Path+
			": an agent is POST /a2a/{org}/{slug}, its card GET /a2a/{org}/{slug}/.well-known/agent-card.json")
	})
	return mux
}

// withA2AAgent authenticates the caller as the REST API does (401
// without a valid key, 429 when rate limited), then finds the addressed
// definition. Another organization, an unknown slug and a definition not
// exposed over A2A are the same 404: a caller learns nothing of what it
// may not use.
func (s *service) withA2AAgent(h func(http.ResponseWriter, *http.Request, a2aAgent)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r, ok := s.withCaller(w, r)
		if !ok {
			return
		}
		ctx := r.Context()
		k, _ := s.caller(ctx)
		org, slug := r.PathValue("org"), r.PathValue("slug")
		notFound := status.Errorf(codes.NotFound, "no A2A agent %q in organization %q", slug, org)
		o, err := s.authorize(ctx, org)
		if err != nil {
			writeStatus(w, notFound)
			return
		}
		d, err := s.es.GetDefinitionBySlug(ctx, o.ID, slug)
		if errors.Is(err, entrystore.ErrNotFound) || (err == nil && !d.ExposeA2A) {
			writeStatus(w, notFound)
			return
		}
		if err != nil {
			writeStatus(w, toStatus(s.log, "get agent definition", err))
			return
		}
		h(w, r, a2aAgent{org: o, key: k, def: d})
	}
}

// a2aRoles is the role each method needs; a method not listed is not
// served.
var a2aRoles = map[string]string{
	"message/send":      entrystore.RoleRun,
	"message/stream":    entrystore.RoleRun,
	"tasks/cancel":      entrystore.RoleRun,
	"tasks/get":         entrystore.RoleRead,
	"tasks/resubscribe": entrystore.RoleRead,
}

// serveA2ARPC serves the JSON-RPC binding. Every answer to a request that
// parses is HTTP 200 with a JSON-RPC result or error object, except a
// caller without the method's role: a 403, as on the REST API.
func (s *service) serveA2ARPC(w http.ResponseWriter, r *http.Request, a a2aAgent) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeRPC(w, nil, nil, &rpcError{Code: rpcParseError, Message: "reading the request body failed (is it larger than the gateway's limit?)"})
		return
	}
	var req rpcRequest
	if !json.Valid(body) {
		writeRPC(w, nil, nil, &rpcError{Code: rpcParseError, Message: "the body is not JSON"})
		return
	}
	if err := json.Unmarshal(body, &req); err != nil {
		// A batch, or a request whose members have the wrong types.
		writeRPC(w, nil, nil, &rpcError{Code: rpcInvalidRequest, Message: "the body must be one JSON-RPC 2.0 request object (batches are not served)"})
		return
	}
	if req.JSONRPC != "2.0" || req.Method == "" || !validRPCID(req.ID) {
		writeRPC(w, req.ID, nil, &rpcError{Code: rpcInvalidRequest,
			Message: `a JSON-RPC request needs "jsonrpc": "2.0", a method and a string or number id`})
		return
	}
	role, ok := a2aRoles[req.Method]
	if !ok {
		writeRPC(w, req.ID, nil, unservedMethod(req.Method))
		return
	}
	if !a.key.Has(role) {
		writeRPC(w, req.ID, nil, &rpcError{Code: rpcInvalidRequest, status: http.StatusForbidden,
			Message: (&permissionDenied{role: role, what: req.Method}).Error()})
		return
	}
	switch req.Method {
	case "message/send":
		var p a2aSendParams
		if e := decodeParams(req.Params, &p); e != nil {
			writeRPC(w, req.ID, nil, e)
			return
		}
		task, err := s.a2aSendBlocking(r.Context(), a, &p)
		writeRPC(w, req.ID, task, s.rpcErr(err))
	case "message/stream":
		var p a2aSendParams
		if e := decodeParams(req.Params, &p); e != nil {
			writeRPC(w, req.ID, nil, e)
			return
		}
		s.a2aStreamSend(w, r, a, req.ID, &p)
	case "tasks/get", "tasks/cancel", "tasks/resubscribe":
		var p a2aTaskParams
		if e := decodeParams(req.Params, &p); e != nil {
			writeRPC(w, req.ID, nil, e)
			return
		}
		if p.ID == "" {
			writeRPC(w, req.ID, nil, &rpcError{Code: rpcInvalidParams, Message: "params.id is required: the task's ID"})
			return
		}
		switch req.Method {
		case "tasks/get":
			task, err := s.a2aGetTask(r.Context(), a, p.ID, p.HistoryLength)
			writeRPC(w, req.ID, task, s.rpcErr(err))
		case "tasks/cancel":
			task, err := s.a2aCancel(r.Context(), a, p.ID)
			writeRPC(w, req.ID, task, s.rpcErr(err))
		default:
			s.a2aResubscribe(w, r, a, req.ID, p.ID)
		}
	}
}

// unservedMethod answers a method this server does not serve: the
// optional ones the card says it lacks with the spec's codes, anything
// else as not found.
func unservedMethod(method string) *rpcError {
	switch method {
	case "tasks/pushNotificationConfig/set", "tasks/pushNotificationConfig/get",
		"tasks/pushNotificationConfig/list", "tasks/pushNotificationConfig/delete":
		return &rpcError{Code: a2aPushNotSupported, Message: "push notifications are not supported: stream the task with message/stream or tasks/resubscribe"}
	case "agent/getAuthenticatedExtendedCard":
		return &rpcError{Code: a2aUnsupportedOp, Message: "there is no extended agent card: the public card is the whole card"}
	}
	return &rpcError{Code: rpcMethodNotFound, Message: "method " + quoteShort(method) +
		" is not served; the methods are message/send, message/stream, tasks/get, tasks/cancel and tasks/resubscribe"}
}

// validRPCID reports whether id is a JSON-RPC request ID: a string or a
// number (a notification, with none, is not served: every method answers).
func validRPCID(id json.RawMessage) bool {
	var v any
	if len(id) == 0 || json.Unmarshal(id, &v) != nil {
		return false
	}
	switch v.(type) {
	case string, float64:
		return true
	}
	return false
}

// decodeParams decodes a method's params object.
func decodeParams(raw json.RawMessage, into any) *rpcError {
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, into) != nil {
		return &rpcError{Code: rpcInvalidParams, Message: "params must be an object of the method's parameters (A2A " + a2aProtocolVersion + ")"}
	}
	return nil
}

// writeRPC writes a JSON-RPC response: result, or e when not nil.
func writeRPC(w http.ResponseWriter, id json.RawMessage, result any, e *rpcError) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	resp := rpcResponse{JSONRPC: "2.0", ID: id}
	code := http.StatusOK
	if e != nil {
		resp.Error = e
		if e.status != 0 {
			code = e.status
		}
	} else {
		resp.Result = result
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(resp)
}

// rpcErr maps what the service methods return (gRPC statuses, whose
// messages are already the caller's terms) to JSON-RPC errors.
func (s *service) rpcErr(err error) *rpcError {
	if err == nil {
		return nil
	}
	var e *rpcError
	if errors.As(err, &e) {
		return e
	}
	st := status.Convert(err)
	switch st.Code() {
	case codes.InvalidArgument, codes.OutOfRange:
		return &rpcError{Code: rpcInvalidParams, Message: st.Message()}
	case codes.NotFound:
		return &rpcError{Code: a2aTaskNotFound, Message: st.Message()}
	case codes.FailedPrecondition, codes.AlreadyExists, codes.Aborted:
		return &rpcError{Code: rpcInvalidRequest, Message: st.Message()}
	case codes.Unimplemented:
		return &rpcError{Code: a2aUnsupportedOp, Message: st.Message()}
	case codes.Unauthenticated:
		return &rpcError{Code: rpcInvalidRequest, Message: st.Message(), status: http.StatusUnauthorized}
	case codes.PermissionDenied:
		return &rpcError{Code: rpcInvalidRequest, Message: st.Message(), status: http.StatusForbidden}
	case codes.ResourceExhausted:
		return &rpcError{Code: rpcInternalError, Message: st.Message(), status: http.StatusTooManyRequests}
	}
	// toStatus already logged an internal error and gave it a message
	// that names no internals.
	return &rpcError{Code: rpcInternalError, Message: st.Message()}
}

// quoteShort quotes s, cut to a length fit for an error message.
func quoteShort(s string) string {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	b, _ := json.Marshal(s)
	return string(b)
}
