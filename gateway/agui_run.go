package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// aguiRunInput is AG-UI's RunAgentInput, as far as it is served.
type aguiRunInput struct {
	ThreadID       string            `json:"threadId"`
	RunID          string            `json:"runId"`
	ParentRunID    string            `json:"parentRunId"`
	State          json.RawMessage   `json:"state"`
	Messages       []aguiInMessage   `json:"messages"`
	Tools          []json.RawMessage `json:"tools"`
	Context        []json.RawMessage `json:"context"`
	ForwardedProps json.RawMessage   `json:"forwardedProps"`
	Resume         []aguiResume      `json:"resume"`
}

// aguiInMessage is a message of the input; only the last user message is
// read: the thread's earlier messages are in its tree.
type aguiInMessage struct {
	ID      string          `json:"id"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// aguiResume answers an interrupt: an approval, by the tool call's ID.
type aguiResume struct {
	InterruptID string `json:"interruptId"`
	Status      string `json:"status"`
	Payload     struct {
		Approved bool   `json:"approved"`
		Reason   string `json:"reason"`
	} `json:"payload"`
}

// errRunDone ends a run's stream once its run has ended.
var errRunDone = errors.New("gateway: the run has ended")

// serveAGUIRun serves POST …/agent-definitions/{id}/ag-ui: an AG-UI agent
// is a definition, a thread one execution of it (threadId is the
// execution's ID). A thread not seen before starts an execution of the
// definition with the last user message; a known one gets that message
// as a userMessage signal, or, with resume[], the approvals its
// interrupts asked for. The answer is the run's events, as the AG-UI
// stream sends them, until the run ends.
func (s *service) serveAGUIRun(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	org, err := s.authorize(ctx, r.PathValue("org"))
	if err != nil {
		writeStatus(w, err)
		return
	}
	key, err := s.caller(ctx)
	if err != nil {
		writeStatus(w, err)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeStatus(w, invalid("reading the request body failed"))
		return
	}
	var in aguiRunInput
	if err := json.Unmarshal(body, &in); err != nil {
		writeStatus(w, invalid("the body must be an AG-UI RunAgentInput object"))
		return
	}
	// The stream's slot first: a run refused its stream never starts.
	release, ok := s.sseSlot(ctx, w, org.ID)
	if !ok {
		return
	}
	defer release()
	ex, after, err := s.startAGUIRun(ctx, org, key, r.PathValue("id"), &in)
	if err != nil {
		writeStatus(w, err)
		return
	}
	m, err := s.aguiMapperAt(ctx, ex, after)
	if err != nil {
		writeStatus(w, err)
		return
	}
	m.nextRun = in.RunID
	err = s.writeAGUI(w, r, ex, after, m, true)
	if err != nil && !errors.Is(err, errRunDone) && !errors.Is(err, context.Canceled) && ctx.Err() == nil {
		s.log.Warn("gateway: AG-UI run stream ended", "execution", ex.ID, "err", err)
	}
}

// startAGUIRun starts or continues the thread in.ThreadID and returns its
// execution and the stream event it had reached before.
func (s *service) startAGUIRun(ctx context.Context, org entrystore.Org, key entrystore.APIKey, defID string, in *aguiRunInput) (entrystore.Execution, int64, error) {
	var none entrystore.Execution
	switch {
	case uuid.Validate(in.ThreadID) != nil:
		return none, 0, invalid("threadId must be a UUID: the thread's execution ID")
	case len(in.Tools) > 0:
		return none, 0, invalid("tools: frontend tools are not served; the agent definition's tools run on the workers")
	}
	text, err := lastUserText(in.Messages)
	if err != nil {
		return none, 0, err
	}
	ex, err := s.es.GetExecution(ctx, org.ID, in.ThreadID)
	if errors.Is(err, entrystore.ErrNotFound) {
		if len(in.Resume) > 0 {
			return none, 0, status.Errorf(codes.NotFound, "thread %q not found: resume answers a thread's interrupts", in.ThreadID)
		}
		if text == "" {
			return none, 0, invalid("messages: a new thread starts with a user message")
		}
		if !key.Has(entrystore.RoleRun) {
			return none, 0, status.Error(codes.PermissionDenied, (&permissionDenied{role: entrystore.RoleRun, what: "starting a thread"}).Error())
		}
		mode := string(agentsdk.ModeMultiTurn)
		// The thread names its execution, as an Idempotency-Key would.
		cctx := context.WithValue(ctx, effectIDKey{}, in.ThreadID)
		created, err := s.CreateAgentExecution(cctx, &pb.CreateAgentExecutionRequest{
			Org: org.ID, AgentDefinitionId: defID, UserPrompt: text, Config: &pb.ExecutionConfig{Mode: &mode}})
		if err != nil {
			return none, 0, err
		}
		ex, err = s.es.GetExecution(ctx, org.ID, created.GetId())
		return ex, 0, toStatus(s.log, "get agent execution", err)
	}
	if err != nil {
		return none, 0, toStatus(s.log, "get agent execution", err)
	}
	if ex.DefinitionID != defID {
		return none, 0, status.Errorf(codes.NotFound, "thread %q not found for agent definition %q", in.ThreadID, defID)
	}
	after, err := s.es.LatestStreamEventID(ctx, org.ID, ex.ID)
	if err != nil {
		return none, 0, toStatus(s.log, "read the stream", err)
	}
	if len(in.Resume) > 0 {
		return ex, after, s.resumeAGUI(ctx, org, key, ex, in.Resume)
	}
	if text == "" {
		return none, 0, invalid("messages: the run needs a new user message, or resume[] for the thread's interrupts")
	}
	// Open interrupts block new input (AG-UI's contract): answer them
	// first.
	waiting, _, err := s.es.ListToolCalls(ctx, org.ID, ex.ID,
		entrystore.ToolCallFilter{Status: entrystore.ToolCallAwaitingApproval}, entrystore.Page{Limit: 1})
	if err != nil {
		return none, 0, toStatus(s.log, "list tool calls", err)
	}
	if len(waiting) > 0 {
		return none, 0, status.Errorf(codes.FailedPrecondition,
			"thread %q has an open interrupt (tool call %q waits for approval): answer it with resume[]", ex.ID, waiting[0].ToolCallID)
	}
	v, err := structpb.NewValue(map[string]any{"text": text})
	if err != nil {
		return none, 0, invalid("messages: the last user message is not text")
	}
	_, err = s.SignalAgentExecution(ctx, &pb.SignalAgentExecutionRequest{
		Org: org.ID, Id: ex.ID, SignalName: agentsdk.SignalUserMessage, SignalValue: v})
	return ex, after, err
}

// resumeAGUI applies resume[]: each interrupt is a tool call waiting for
// approval; resolved with {"approved": true} approves it, anything else
// rejects it.
func (s *service) resumeAGUI(ctx context.Context, org entrystore.Org, key entrystore.APIKey, ex entrystore.Execution, resume []aguiResume) error {
	if !key.Has(entrystore.RoleApprove) {
		return status.Error(codes.PermissionDenied, (&permissionDenied{role: entrystore.RoleApprove, what: "resume"}).Error())
	}
	for i, rs := range resume {
		if rs.Status != "resolved" && rs.Status != "cancelled" {
			return invalid("resume[%d].status must be resolved or cancelled", i)
		}
		d := agentsdk.DecisionReject
		if rs.Status == "resolved" && rs.Payload.Approved {
			d = agentsdk.DecisionApprove
		}
		if _, err := s.DecideToolCall(ctx, &pb.DecideToolCallRequest{
			Org: org.ID, ExecutionId: ex.ID, ToolCallId: rs.InterruptID, Decision: d, Reason: rs.Payload.Reason}); err != nil {
			return err
		}
	}
	return nil
}

// lastUserText is the text of the input's last message when it is the
// user's ("" when the last is not).
func lastUserText(ms []aguiInMessage) (string, error) {
	if len(ms) == 0 || ms[len(ms)-1].Role != "user" {
		return "", nil
	}
	m := ms[len(ms)-1]
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(m.Content, &parts); err != nil {
		return "", invalid("messages[%d].content must be text or a list of text parts", len(ms)-1)
	}
	var texts []string
	for i, p := range parts {
		if p.Type != "text" {
			return "", invalid("messages[%d].content[%d]: %q parts are not served, only text", len(ms)-1, i, p.Type)
		}
		texts = append(texts, p.Text)
	}
	return strings.Join(texts, "\n"), nil
}

// aguiRunDone reports whether an event ends a run.
func aguiRunDone(e aguiEvent) bool { return e.Type == "RUN_FINISHED" || e.Type == "RUN_ERROR" }
