package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/uuid"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// a2aIDSpace derives the IDs of what a message causes (a new task's
// execution, a signal, a decision) from its messageId: a client that
// sends the same message again, because the answer was lost, gets the
// first one's task and changes nothing, as an Idempotency-Key does on the
// REST API.
var a2aIDSpace = uuid.MustParse("5b0c6c3e-2f4e-4d8a-9d61-a2a000000039")

func a2aEffectID(parts ...string) string {
	return uuid.NewSHA1(a2aIDSpace, []byte(strings.Join(parts, "\x00"))).String()
}

// a2aInput is what a user message says: text, or an approval decision.
type a2aInput struct {
	text     string
	decision *a2aDecision
}

// a2aDecision answers the tool calls a task waits to have approved.
type a2aDecision struct {
	Approved *bool  `json:"approved"`
	Reason   string `json:"reason"`
}

// a2aInputOf reads a message/send's message.
func a2aInputOf(m *a2aMessage) (a2aInput, error) {
	var in a2aInput
	switch {
	case m == nil:
		return in, &rpcError{Code: rpcInvalidParams, Message: "params.message is required"}
	case m.Role != "user":
		return in, &rpcError{Code: rpcInvalidParams, Message: `params.message.role must be "user"`}
	case strings.TrimSpace(m.MessageID) == "":
		return in, &rpcError{Code: rpcInvalidParams, Message: "params.message.messageId is required"}
	case len(m.Parts) == 0:
		return in, &rpcError{Code: rpcInvalidParams, Message: "params.message.parts must hold at least one part"}
	}
	var texts []string
	for i, p := range m.Parts {
		switch p.Kind {
		case "text":
			texts = append(texts, p.Text)
		case "data":
			var d a2aDecision
			if json.Unmarshal(p.Data, &d) != nil || d.Approved == nil {
				return in, &rpcError{Code: rpcInvalidParams, Message: fmt.Sprintf(
					`params.message.parts[%d]: a data part answers an approval: {"approved": true|false, "reason": "…"}`, i)}
			}
			in.decision = &d
		case "file":
			return in, &rpcError{Code: a2aContentTypeUnknown, Message: fmt.Sprintf(
				"params.message.parts[%d]: file parts are not accepted; send text", i)}
		default:
			return in, &rpcError{Code: rpcInvalidParams, Message: fmt.Sprintf(
				`params.message.parts[%d].kind must be "text", "data" or "file"`, i)}
		}
	}
	in.text = strings.Join(texts, "\n")
	if in.decision == nil && strings.TrimSpace(in.text) == "" {
		return in, &rpcError{Code: rpcInvalidParams, Message: "params.message has no text"}
	}
	return in, nil
}

// a2aStart acts on a message/send or message/stream: a message without a
// task ID starts an execution of the definition with its text; one with
// the ID of a task (or its context: the same ID) that has not ended goes
// to that execution as a userMessage signal, or, when it waits for
// approvals, decides them. It returns the execution and the stream event
// it had reached before, where the answer's events start.
func (s *service) a2aStart(ctx context.Context, a a2aAgent, p *a2aSendParams) (entrystore.Execution, int64, error) {
	var none entrystore.Execution
	in, err := a2aInputOf(p.Message)
	if err != nil {
		return none, 0, err
	}
	m := p.Message
	task := m.TaskID
	if task == "" {
		task = m.ContextID
	}
	if task == "" {
		if in.decision != nil {
			return none, 0, &rpcError{Code: rpcInvalidParams, Message: "an approval answers a task: set params.message.taskId"}
		}
		cctx := context.WithValue(ctx, effectIDKey{}, a2aEffectID(a.org.ID, a.def.ID, m.MessageID))
		created, err := s.CreateAgentExecution(cctx, &pb.CreateAgentExecutionRequest{
			Org: a.org.ID, AgentDefinitionId: a.def.ID, UserPrompt: in.text})
		if err != nil {
			return none, 0, err
		}
		ex, err := s.a2aExecution(ctx, a, created.GetId())
		return ex, 0, err
	}
	ex, err := s.a2aExecution(ctx, a, task)
	if err != nil {
		return none, 0, err
	}
	if ex.Status.Terminal() {
		return none, 0, &rpcError{Code: a2aUnsupportedOp, Message: fmt.Sprintf(
			"task %s has ended (%s); send a message without taskId to start a new task", ex.ID, a2aState(ex.Status))}
	}
	after, waiting, err := s.continuing(ctx, ex)
	if err != nil {
		return none, 0, err
	}
	switch {
	case in.decision != nil:
		return ex, after, s.a2aDecide(ctx, a, ex, m.MessageID, waiting, *in.decision)
	case len(waiting) > 0:
		return none, 0, &rpcError{Code: rpcInvalidRequest, Message: fmt.Sprintf(
			`task %s waits for the approval of tool call %q: answer with a data part {"approved": true|false}`, ex.ID, waiting[0].ToolCallID)}
	}
	v, err := structpb.NewValue(map[string]any{"text": in.text})
	if err != nil {
		return none, 0, &rpcError{Code: rpcInvalidParams, Message: "params.message's text is not valid UTF-8"}
	}
	cctx := context.WithValue(ctx, effectIDKey{}, a2aEffectID(ex.ID, m.MessageID))
	_, err = s.SignalAgentExecution(cctx, &pb.SignalAgentExecutionRequest{
		Org: a.org.ID, Id: ex.ID, SignalName: agentsdk.SignalUserMessage, SignalValue: v})
	return ex, after, err
}

// continuing reads what a message that continues execution ex needs to
// know first (A2A's and MCP's alike): the stream event it has reached,
// where the answer's events will start, and the calls it waits to have
// approved.
func (s *service) continuing(ctx context.Context, ex entrystore.Execution) (int64, []entrystore.ToolCall, error) {
	after, err := s.es.LatestStreamEventID(ctx, ex.OrgID, ex.ID)
	if err != nil {
		return 0, nil, toStatus(s.log, "read the stream", err)
	}
	waiting, err := s.pendingApprovals(ctx, ex)
	return after, waiting, err
}

// pendingApprovals is the calls execution ex waits to have approved.
func (s *service) pendingApprovals(ctx context.Context, ex entrystore.Execution) ([]entrystore.ToolCall, error) {
	calls, _, err := s.es.ListToolCalls(ctx, ex.OrgID, ex.ID,
		entrystore.ToolCallFilter{Status: entrystore.ToolCallAwaitingApproval}, entrystore.Page{Limit: 50})
	return calls, toStatus(s.log, "list tool calls", err)
}

// a2aDecide approves or rejects every call the task waits on, as POST
// …/tool-calls/{id}/decision does; it needs the approve role.
func (s *service) a2aDecide(ctx context.Context, a a2aAgent, ex entrystore.Execution, msgID string, waiting []entrystore.ToolCall, d a2aDecision) error {
	if !a.key.Has(entrystore.RoleApprove) {
		return &rpcError{Code: rpcInvalidRequest, status: http.StatusForbidden,
			Message: (&permissionDenied{role: entrystore.RoleApprove, what: "answering an approval"}).Error()}
	}
	if len(waiting) == 0 {
		return &rpcError{Code: rpcInvalidParams, Message: fmt.Sprintf("task %s waits for no approval; send text", ex.ID)}
	}
	decision := agentsdk.DecisionReject
	if *d.Approved {
		decision = agentsdk.DecisionApprove
	}
	for _, c := range waiting {
		cctx := context.WithValue(ctx, effectIDKey{}, a2aEffectID(ex.ID, msgID, c.ToolCallID))
		if _, err := s.DecideToolCall(cctx, &pb.DecideToolCallRequest{
			Org: a.org.ID, ExecutionId: ex.ID, ToolCallId: c.ToolCallID, Decision: decision, Reason: d.Reason}); err != nil {
			return err
		}
	}
	return nil
}

// a2aSendBlocking serves message/send: by default (blocking) it answers
// once the task waits for input or has ended; with blocking false, at
// once.
func (s *service) a2aSendBlocking(ctx context.Context, a a2aAgent, p *a2aSendParams) (*a2aTask, error) {
	var history *int
	blocking := true
	if c := p.Configuration; c != nil {
		history = c.HistoryLength
		if c.Blocking != nil {
			blocking = *c.Blocking
		}
		if len(c.PushNotification) > 0 && string(c.PushNotification) != "null" {
			return nil, &rpcError{Code: a2aPushNotSupported, Message: "push notifications are not supported: stream the task with message/stream or tasks/resubscribe"}
		}
	}
	if history != nil && *history < 0 {
		return nil, &rpcError{Code: rpcInvalidParams, Message: "params.configuration.historyLength must not be negative"}
	}
	ex, after, err := s.a2aStart(ctx, a, p)
	if err != nil {
		return nil, err
	}
	if blocking {
		if err := s.a2aAwait(ctx, ex, after); err != nil {
			return nil, err
		}
		if ex, err = s.a2aExecution(ctx, a, ex.ID); err != nil {
			return nil, err
		}
	}
	return s.a2aTaskOf(ctx, ex, history)
}
