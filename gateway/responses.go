package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/agentree/agentree/entrystore"
)

// The OpenAI-compatible API (README "OpenAI-compatible API"): /v1/responses
// and /v1/conversations as the Responses and Conversations APIs shape them,
// a projection of executions — a conversation is an execution's tree, a
// response one turn of it (responses_turn.go). Requests authenticate with
// the organization's API key as the SDKs send it (Authorization: Bearer),
// spend the same per-key buckets and need the same roles as the native
// routes that do the same (run to create and cancel, read to get, approve
// to decide an approval); errors are the spec's {"error": {...}}.

// openAIHandler serves /v1/.
func (s *service) openAIHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/responses", s.withKey(entrystore.RoleRun, s.createResponse))
	mux.HandleFunc("GET /v1/responses/{id}", s.withKey(entrystore.RoleRead, s.getResponse))
	mux.HandleFunc("POST /v1/responses/{id}/cancel", s.withKey(entrystore.RoleRun, s.cancelResponse))
	mux.HandleFunc("POST /v1/conversations", s.withKey(entrystore.RoleRun, s.createConversation))
	mux.HandleFunc("GET /v1/conversations/{id}", s.withKey(entrystore.RoleRead, s.getConversation))
	mux.HandleFunc("GET /v1/conversations/{id}/items", s.withKey(entrystore.RoleRead, s.listConversationItems))
	mux.HandleFunc("/v1/", func(w http.ResponseWriter, r *http.Request) {
		writeOAError(w, http.StatusNotFound, "invalid_request_error", "not_found", "",
			fmt.Sprintf("%s %s is not served; see README \"OpenAI-compatible API\" for what is", r.Method, r.URL.Path))
	})
	return mux
}

// oaHandler is a /v1 handler with the caller's organization and key.
type oaHandler func(w http.ResponseWriter, r *http.Request, org entrystore.Org, key entrystore.APIKey)

// withKey authenticates the request and checks the key has role. The
// organization goes into the context as for native requests, so the
// service's methods authorize it the same way.
func (s *service) withKey(role string, h oaHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		o, k, err := s.authenticate(r.Context(), r.Header.Get("Authorization"), clientAddr(r.RemoteAddr))
		var rl *rateLimited
		if errors.As(err, &rl) {
			if rl.anonymous() {
				s.tarpit.hold(r.Context())
			}
			w.Header().Set("Retry-After", rl.retryAfterHeader())
			writeOAError(w, http.StatusTooManyRequests, "rate_limit_error", "rate_limit_exceeded", "", rl.Error())
			return
		}
		if err != nil {
			writeOAStatus(w, err)
			return
		}
		if !k.Has(role) {
			writeOAError(w, http.StatusForbidden, "permission_error", "permission_denied", "",
				(&permissionDenied{role: role, what: r.Method + " " + r.Pattern}).Error())
			return
		}
		ctx := context.WithValue(context.WithValue(r.Context(), authenticatedOrg{}, o), authenticatedKey{}, k)
		h(w, r.WithContext(ctx), o, k)
	}
}

// paramError is a request field the server cannot take: a 400 naming it.
type paramError struct {
	param, msg string
	// code is the error's code; "" is invalid_parameter.
	code string
}

func (e *paramError) Error() string { return e.msg }

func badParam(param, format string, args ...any) error {
	return &paramError{param: param, msg: fmt.Sprintf(format, args...)}
}

// writeOAStatus writes err — a paramError, or a gRPC status as the
// service's methods return — in the spec's error shape.
func writeOAStatus(w http.ResponseWriter, err error) {
	var pe *paramError
	if errors.As(err, &pe) {
		code := pe.code
		if code == "" {
			code = "invalid_parameter"
		}
		writeOAError(w, http.StatusBadRequest, "invalid_request_error", code, pe.param, pe.msg)
		return
	}
	st := status.Convert(err)
	code, kind := httpStatus(st.Code())
	typ := "invalid_request_error"
	switch st.Code() {
	case codes.Unauthenticated:
		typ, kind = "authentication_error", "invalid_api_key"
	case codes.PermissionDenied:
		typ = "permission_error"
	case codes.ResourceExhausted:
		// The quota's refusal: too many executions running.
		code, typ, kind = http.StatusTooManyRequests, "rate_limit_error", "quota_exceeded"
	case codes.Unavailable, codes.Internal, codes.Unknown, codes.DeadlineExceeded:
		typ = "server_error"
	}
	writeOAError(w, code, typ, kind, "", st.Message())
}

// turnWait bounds how long a response that ended by its events waits
// for the execution's row to say so (the worker writes both).
const turnWait = 10 * time.Second

func (s *service) getResponse(w http.ResponseWriter, r *http.Request, org entrystore.Org, _ entrystore.APIKey) {
	if r.URL.Query().Has("stream") {
		writeOAError(w, http.StatusBadRequest, "invalid_request_error", "unsupported_parameter", "stream",
			"stream is not supported on GET /v1/responses/{id}: poll the response, or create it with stream: true")
		return
	}
	ref, ok := parseResponseID(r.PathValue("id"))
	if !ok {
		writeOAStatus(w, responseNotFound(r.PathValue("id")))
		return
	}
	t, err := s.loadTurn(r.Context(), org, ref)
	if err != nil {
		writeOAStatus(w, notFoundAs(err, responseNotFound(r.PathValue("id"))))
		return
	}
	writeOAJSON(w, http.StatusOK, s.responseObject(t, nil))
}

func (s *service) cancelResponse(w http.ResponseWriter, r *http.Request, org entrystore.Org, _ entrystore.APIKey) {
	ref, ok := parseResponseID(r.PathValue("id"))
	if !ok {
		writeOAStatus(w, responseNotFound(r.PathValue("id")))
		return
	}
	ctx := r.Context()
	t, err := s.loadTurn(ctx, org, ref)
	if err != nil {
		writeOAStatus(w, notFoundAs(err, responseNotFound(r.PathValue("id"))))
		return
	}
	if t.done() {
		writeOAError(w, http.StatusConflict, "invalid_request_error", "response_not_in_progress", "",
			fmt.Sprintf("response %s is %s; only a response in progress can be cancelled", ref.id(), t.status()))
		return
	}
	// Cancelling a turn cancels its execution: the conversation ends
	// with it (README).
	if _, err := s.CancelAgentExecution(ctx, cancelRequest(org, ref.Exec)); err != nil {
		writeOAStatus(w, err)
		return
	}
	if t, err = s.loadTurn(ctx, org, ref); err != nil {
		writeOAStatus(w, err)
		return
	}
	writeOAJSON(w, http.StatusOK, s.responseObject(t, nil))
}

// responseNotFound is the answer to an ID that names no response of the
// caller's organization, whoever's it is.
func responseNotFound(id string) error {
	return status.Errorf(codes.NotFound, "response %q not found", id)
}

// notFoundAs replaces a 404 by nf, so an answer names what the caller
// asked for, not the execution behind it.
func notFoundAs(err, nf error) error {
	if status.Code(err) == codes.NotFound {
		return nf
	}
	return err
}

// responseObject is the response t is. req, when the response was just
// made, carries what the request said that the tree does not keep.
func (s *service) responseObject(t *turn, req *oaRequest) oaResponse {
	cfg := executionConfig(t.ex)
	out, usage := t.output()
	resp := oaResponse{
		ID: t.ref.id(), Object: "response", CreatedAt: t.ex.CreatedAt.Unix(), Status: t.status(),
		Metadata: []byte("{}"), Output: out, ParallelToolCalls: true, Store: true, ToolChoice: "auto",
		Tools: []oaTool{}, Truncation: "disabled", Temperature: cfg.Temperature,
	}
	if t.started {
		resp.CreatedAt = t.start.CreatedAt.Unix()
	}
	if len(cfg.Models) > 0 {
		resp.Model = cfg.Models[0].ModelID
	}
	if cfg.SystemPrompt != "" {
		resp.Instructions = &cfg.SystemPrompt
	}
	if cfg.MaxTokens > 0 {
		resp.MaxOutputTokens = &cfg.MaxTokens
	}
	for _, name := range cfg.Tools {
		resp.Tools = append(resp.Tools, oaTool{Type: "function", Name: name})
	}
	for _, t := range cfg.ClientTools {
		resp.Tools = append(resp.Tools, oaTool{Type: "function", Name: t.Name, Description: t.Description, Parameters: t.Parameters})
	}
	if m := publicMetadata(t.ex.Metadata); m != nil {
		resp.Metadata = m
	}
	if c := conversationOf(t.ex); c != "" {
		resp.Conversation = &oaConvRef{ID: c}
	}
	if p := t.previous(); p != "" {
		resp.PreviousResponseID = &p
	}
	switch resp.Status {
	case "completed", "failed", "cancelled", "incomplete":
		resp.Usage = &usage
		if len(t.entries) > 0 {
			at := t.entries[len(t.entries)-1].CreatedAt.Unix()
			resp.CompletedAt = &at
		}
	}
	switch resp.Status {
	case "failed":
		resp.Error = &oaError{Code: "server_error", Message: failureMessage(t.ex)}
	case "incomplete":
		resp.IncompleteDetails = &oaIncomplete{Reason: "max_output_tokens"}
	}
	if req != nil {
		resp.Background = req.Background
		if req.PreviousResponseID != "" {
			resp.PreviousResponseID = &req.PreviousResponseID
		}
	}
	return resp
}

// failureMessage is what a failed response says: the execution's stop
// reason in the API's terms, never an internal address.
func failureMessage(ex entrystore.Execution) string {
	if ex.StopReason != "" {
		return "the turn failed: " + strings.ReplaceAll(ex.StopReason, "_", " ")
	}
	return "the turn failed"
}
