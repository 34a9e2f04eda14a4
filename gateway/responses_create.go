package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/event"
	"github.com/agentree/agentree/entrystore"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// createResponse starts a turn — a new conversation, the next turn of one
// (a signal) or a branch from an older response (a fork) — and answers
// with it when it has ended, as it streams, or at once (background).
func (s *service) createResponse(w http.ResponseWriter, r *http.Request, org entrystore.Org, key entrystore.APIKey) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeOAStatus(w, badParam("", "reading the request body failed"))
		return
	}
	req, err := decodeResponseRequest(body)
	if err != nil {
		writeOAStatus(w, err)
		return
	}
	ctx := r.Context()
	if req.Stream {
		release, ok := s.openStream(w, r, org)
		if !ok {
			return
		}
		defer release()
	}
	ref, after, err := s.startTurn(ctx, org, key, req)
	if err != nil {
		writeOAStatus(w, err)
		return
	}
	switch {
	case req.Stream:
		s.streamTurn(w, r, org, req, ref, after)
	case req.Background:
		t, err := s.loadTurn(ctx, org, ref)
		if err != nil {
			writeOAStatus(w, err)
			return
		}
		writeOAJSON(w, http.StatusOK, s.responseObject(t, req))
	default:
		t, err := s.awaitTurn(ctx, org, ref, after, nil)
		if err != nil {
			writeOAStatus(w, err)
			return
		}
		writeOAJSON(w, http.StatusOK, s.responseObject(t, req))
	}
}

// startTurn does what req asks and returns the response it starts, and
// the stream event its execution had reached before (0 for a new one).
func (s *service) startTurn(ctx context.Context, org entrystore.Org, key entrystore.APIKey, req *oaRequest) (respRef, int64, error) {
	switch {
	case req.PreviousResponseID != "":
		prevRef, ok := parseResponseID(req.PreviousResponseID)
		if !ok {
			return respRef{}, 0, responseNotFound(req.PreviousResponseID)
		}
		prev, err := s.loadTurn(ctx, org, prevRef)
		if err != nil {
			return respRef{}, 0, notFoundAs(err, responseNotFound(req.PreviousResponseID))
		}
		return s.continueTurn(ctx, org, key, req, prev, true)
	case req.conversation != "":
		execID, created, ok := conversationExecution(org, req.conversation)
		if !ok {
			return respRef{}, 0, conversationNotFound(req.conversation)
		}
		ex, err := s.es.GetExecution(ctx, org.ID, execID)
		if errors.Is(err, entrystore.ErrNotFound) {
			if time.Since(created) < -time.Minute {
				return respRef{}, 0, conversationNotFound(req.conversation)
			}
			return s.newConversation(ctx, org, req, execID)
		}
		if err != nil {
			return respRef{}, 0, toStatus(s.log, "get conversation", err)
		}
		last, err := s.lastTurn(ctx, org, ex)
		if err != nil {
			return respRef{}, 0, err
		}
		return s.continueTurn(ctx, org, key, req, last, false)
	case len(req.approvals) > 0:
		return respRef{}, 0, badParam("input", "mcp_approval_response items answer a response: give its ID as previous_response_id")
	case len(req.outputs) > 0:
		return respRef{}, 0, badParam("input", "function_call_output items answer a response: give its ID as previous_response_id")
	}
	return s.newConversation(ctx, org, req, "")
}

// newConversation starts an execution for a first turn; execID is its ID
// ("" for a new one).
func (s *service) newConversation(ctx context.Context, org entrystore.Org, req *oaRequest, execID string) (respRef, int64, error) {
	model, err := s.resolveModel(ctx, org, req.Model)
	if err != nil {
		return respRef{}, 0, err
	}
	tools, client, err := s.requestTools(ctx, org, req.Tools)
	if err != nil {
		return respRef{}, 0, err
	}
	mode := string(agentsdk.ModeMultiTurn)
	cfg := &pb.ExecutionConfig{Mode: &mode, Temperature: req.Temperature, ClientTools: client}
	if req.MaxOutputTokens != nil {
		n := int32(min(*req.MaxOutputTokens, 1<<30))
		cfg.MaxTokens = &n
	}
	meta := map[string]any{}
	for k, v := range req.Metadata {
		meta[k] = v
	}
	if req.conversation != "" {
		meta[conversationMetadataKey] = req.conversation
	}
	ms, err := structpb.NewStruct(meta)
	if err != nil {
		return respRef{}, 0, badParam("metadata", "metadata must map strings to strings")
	}
	create := &pb.CreateAgentExecutionRequest{
		Org: org.ID, Kind: entrystore.DefaultKind, UserPrompt: req.text, Tools: tools, Config: cfg, Metadata: ms,
		Models: []*pb.ModelRef{{Provider: model.Provider, ModelId: model.ModelID, Endpoint: model.Endpoint}},
	}
	if req.Instructions != nil {
		create.SystemPrompt = *req.Instructions
	}
	if execID != "" {
		// The conversation names its execution: the create takes that ID
		// (as it does an Idempotency-Key's), so a retried first turn finds
		// the execution rather than start a second.
		ctx = context.WithValue(ctx, effectIDKey{}, execID)
	}
	ex, err := s.CreateAgentExecution(ctx, create)
	if err != nil {
		return respRef{}, 0, err
	}
	return respRef{Exec: ex.GetId()}, 0, nil
}

// continueTurn starts the response after prev: the next turn when prev
// is the last one and its execution waits for input, the approval it
// waits for, or else a branch (a fork at prev's last entry) when fork.
func (s *service) continueTurn(ctx context.Context, org entrystore.Org, key entrystore.APIKey, req *oaRequest, prev *turn, fork bool) (respRef, int64, error) {
	if !prev.done() {
		return respRef{}, 0, status.Errorf(codes.FailedPrecondition, "response %s is still %s; wait for it to end", prev.ref.id(), prev.status())
	}
	if err := sameSettings(req, executionConfig(prev.ex)); err != nil {
		return respRef{}, 0, err
	}
	waits := prev.last && prev.ex.Status == entrystore.StatusWaiting
	if len(req.approvals) > 0 || len(prev.awaiting) > 0 {
		return s.decideApprovals(ctx, org, key, req, prev)
	}
	if len(req.outputs) > 0 || len(prev.clientCalls) > 0 {
		return s.sendToolOutputs(ctx, org, req, prev)
	}
	if waits {
		after, err := s.streamAt(ctx, prev.ex)
		if err != nil {
			return respRef{}, 0, err
		}
		v, err := structpb.NewValue(map[string]any{"text": req.text})
		if err != nil {
			return respRef{}, 0, badParam("input", "input is not valid text")
		}
		sig, err := s.SignalAgentExecution(ctx, &pb.SignalAgentExecutionRequest{
			Org: org.ID, Id: prev.ex.ID, SignalName: agentsdk.SignalUserMessage, SignalValue: v})
		if err != nil {
			return respRef{}, 0, err
		}
		return respRef{Exec: prev.ex.ID, Signal: sig.GetSignalId()}, after, nil
	}
	if !fork {
		return respRef{}, 0, status.Errorf(codes.FailedPrecondition,
			"the conversation has ended (%s); branch from one of its responses with previous_response_id", strings.ToLower(string(prev.ex.Status)))
	}
	ex, err := s.ForkAgentExecution(ctx, &pb.ForkAgentExecutionRequest{
		Org: org.ID, Id: prev.ex.ID, EntryId: prev.leaf(), UserPrompt: req.text})
	if err != nil {
		return respRef{}, 0, err
	}
	return respRef{Exec: ex.GetId()}, 0, nil
}

// decideApprovals applies mcp_approval_response items to the calls prev
// waits for; the response they start runs from the last decision.
func (s *service) decideApprovals(ctx context.Context, org entrystore.Org, key entrystore.APIKey, req *oaRequest, prev *turn) (respRef, int64, error) {
	if len(prev.awaiting) == 0 {
		return respRef{}, 0, badParam("input", "response %s waits for no approval", prev.ref.id())
	}
	if len(req.approvals) == 0 {
		return respRef{}, 0, badParam("input", "response %s waits for approval of %s: answer with mcp_approval_response items",
			prev.ref.id(), strings.Join(slices.Sorted(mapKeys(prev.awaiting)), ", "))
	}
	if !key.Has(entrystore.RoleApprove) {
		return respRef{}, 0, status.Error(codes.PermissionDenied, (&permissionDenied{role: entrystore.RoleApprove, what: "an mcp_approval_response"}).Error())
	}
	for i, a := range req.approvals {
		if _, ok := prev.awaiting[a.RequestID]; !ok {
			return respRef{}, 0, badParam(fmt.Sprintf("input[%d].approval_request_id", i), "%q is not an approval request of response %s", a.RequestID, prev.ref.id())
		}
	}
	after, err := s.streamAt(ctx, prev.ex)
	if err != nil {
		return respRef{}, 0, err
	}
	var ref respRef
	for _, a := range req.approvals {
		d := agentsdk.DecisionReject
		if a.Approve {
			d = agentsdk.DecisionApprove
		}
		out, err := s.DecideToolCall(ctx, &pb.DecideToolCallRequest{
			Org: org.ID, ExecutionId: prev.ex.ID, ToolCallId: a.RequestID, Decision: d, Reason: a.Reason})
		if err != nil {
			return respRef{}, 0, err
		}
		ref = respRef{Exec: prev.ex.ID, Signal: out.GetSignalId()}
	}
	return ref, after, nil
}

// streamAt is the last event of ex's stream: a response that a signal is
// about to start follows the events after it.
func (s *service) streamAt(ctx context.Context, ex entrystore.Execution) (int64, error) {
	after, err := s.es.LatestStreamEventID(ctx, ex.OrgID, ex.ID)
	if err != nil {
		return 0, toStatus(s.log, "read the stream", err)
	}
	return after, nil
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// sameSettings refuses a continuation that asks for another model,
// instructions or tools than its conversation has: those are frozen when
// it starts.
func sameSettings(req *oaRequest, cfg agentsdk.Config) error {
	if req.Model != "" && len(cfg.Models) > 0 && req.Model != cfg.Models[0].ModelID && req.Model != cfg.Models[0].Key() {
		return badParam("model", "model %q differs from the conversation's (%s): a conversation keeps its model", req.Model, cfg.Models[0].ModelID)
	}
	if req.Instructions != nil && *req.Instructions != cfg.SystemPrompt {
		return badParam("instructions", "instructions differ from the conversation's: they are set by its first response")
	}
	if req.Tools != nil {
		var names []string
		for _, t := range req.Tools {
			names = append(names, t.Name)
		}
		have := slices.Clone(cfg.Tools)
		for _, t := range cfg.ClientTools {
			have = append(have, t.Name)
		}
		if !slices.Equal(slices.Sorted(slices.Values(names)), slices.Sorted(slices.Values(have))) {
			return badParam("tools", "tools differ from the conversation's: they are set by its first response")
		}
	}
	return nil
}

// executionConfig is an execution's frozen configuration; a row that does
// not decode has none worth showing.
func executionConfig(ex entrystore.Execution) agentsdk.Config {
	var cfg agentsdk.Config
	_ = json.Unmarshal(ex.Config, &cfg)
	return cfg
}

// resolveModel finds the endpoint of a worker on the gateway's queue that
// serves model, named "model-id" or "provider/model-id".
func (s *service) resolveModel(ctx context.Context, org entrystore.Org, model string) (agentsdk.ModelRef, error) {
	if strings.TrimSpace(model) == "" {
		return agentsdk.ModelRef{}, badParam("model", "model is required")
	}
	var found agentsdk.ModelRef
	err := s.v.live.check(ctx, func(rows []entrystore.WorkerCapability) error {
		rows = slices.DeleteFunc(slices.Clone(rows), func(r entrystore.WorkerCapability) bool { return r.TaskQueue != s.v.queue })
		if len(rows) == 0 {
			return status.Errorf(codes.Unavailable, "no live worker serves this gateway's task queue %q; retry when one runs", s.v.queue)
		}
		rows, _ = forOrg(rows, org.ID)
		var served []string
		for _, e := range union(rows).infos {
			for _, id := range []string{model, strings.TrimPrefix(model, e.Provider+"/")} {
				if e.Allows(id) && e.HasPrice(id) {
					found = agentsdk.ModelRef{Provider: e.Provider, ModelID: id, Endpoint: e.Name}
					return nil
				}
			}
			served = append(served, e.Models...)
		}
		return &paramError{param: "model", code: "model_not_found",
			msg: fmt.Sprintf("model %q is not served here; the workers serve %s", model, listed(served))}
	})
	if err != nil {
		var pe *paramError
		if errors.As(err, &pe) {
			return found, err
		}
		return found, capError(s.log, err)
	}
	return found, nil
}

// lastTurn is the response that ends ex's conversation: the one that
// starts at the last user message or decision on its path.
func (s *service) lastTurn(ctx context.Context, org entrystore.Org, ex entrystore.Execution) (*turn, error) {
	ref := respRef{Exec: ex.ID}
	if ex.LeafEntryID != "" {
		_, cs, err := s.conversation(ctx, org.ID, ex.ID)
		if err != nil {
			return nil, err
		}
		path, err := cs.Path(ctx, ex.OrgID, ex.LeafEntryID)
		if err != nil {
			return nil, toStatus(s.log, "load the conversation", err)
		}
		for i := len(path) - 1; i >= 0; i-- {
			if e := path[i]; startsResponse(e) && e.ExecutionID == ex.ID {
				ref = refOf(e)
				break
			}
		}
	}
	return s.loadTurn(ctx, org, ref)
}

// errTurnDone ends a follow once the turn has ended.
var errTurnDone = errors.New("gateway: the response has ended")

// awaitTurn follows the execution's events after after until the
// response ref has ended, passing each to onEvent (when set), and returns
// it.
func (s *service) awaitTurn(ctx context.Context, org entrystore.Org, ref respRef, after int64, onEvent func(entrystore.StreamEvent) error) (*turn, error) {
	t, err := s.loadTurn(ctx, org, ref)
	if err != nil || t.done() {
		return t, err
	}
	noop := func() error { return nil }
	err = s.streams.follow(ctx, followRequest{
		Org: org.ID, Execution: ref.Exec, After: after, Consolidated: true,
		Emit: func(ev entrystore.StreamEvent) error {
			if onEvent != nil {
				if err := onEvent(ev); err != nil {
					return err
				}
			}
			if ev.Event != event.NameWaiting && !event.Terminal(ev.Event) && ev.Event != event.NameStreamError {
				return nil
			}
			if t, err = s.loadTurn(ctx, org, ref); err != nil {
				return err
			}
			if t.done() {
				return errTurnDone
			}
			return nil
		},
		Flush: noop, Ping: noop,
	})
	if err != nil && !errors.Is(err, errTurnDone) {
		return nil, toStatus(s.log, "follow the response", err)
	}
	// The execution's row can trail its last event by a moment.
	deadline := time.Now().Add(turnWait)
	for {
		if t, err = s.loadTurn(ctx, org, ref); err != nil || t.done() {
			return t, err
		}
		if time.Now().After(deadline) {
			return t, nil
		}
		select {
		case <-ctx.Done():
			return nil, toStatus(s.log, "follow the response", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// cancelRequest is the native cancel of the execution behind a response.
func cancelRequest(org entrystore.Org, execID string) *pb.CancelAgentExecutionRequest {
	return &pb.CancelAgentExecutionRequest{Org: org.ID, Id: execID}
}
