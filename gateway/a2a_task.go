package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// a2aMaxHistory bounds a task's history: the most recent messages of the
// conversation, whatever historyLength asks for, so a long conversation
// is not one unbounded answer (the REST API pages it: GET …/messages).
const a2aMaxHistory = 200

// a2aState is the A2A state of an execution's status. WAITING is
// input-required whether the agent waits for a message or for an
// approval (the status message says which). PAUSED (its step budget
// spent) has no A2A counterpart: only POST …/resume on the REST API
// continues it, so it is unknown.
func a2aState(st entrystore.Status) string {
	switch st {
	case entrystore.StatusPending:
		return a2aSubmitted
	case entrystore.StatusRunning, entrystore.StatusCancelling:
		return a2aWorking
	case entrystore.StatusWaiting:
		return a2aInputRequired
	case entrystore.StatusCompleted:
		return a2aCompleted
	case entrystore.StatusFailed:
		return a2aFailed
	case entrystore.StatusCancelled:
		return a2aCanceled
	}
	return a2aUnknown
}

// a2aFinal reports whether a task in state waits for the caller or has
// ended: a stream or a blocking send ends there.
func a2aFinal(state string) bool {
	switch state {
	case a2aSubmitted, a2aWorking:
		return false
	}
	return true
}

// a2aExecution is the task id of agent a: an execution of a's definition
// in the caller's organization. Anything else is not found.
func (s *service) a2aExecution(ctx context.Context, a a2aAgent, id string) (entrystore.Execution, error) {
	ex, err := s.es.GetExecution(ctx, a.org.ID, id)
	if errors.Is(err, entrystore.ErrNotFound) || (err == nil && ex.DefinitionID != a.def.ID) {
		return ex, &rpcError{Code: a2aTaskNotFound, Message: "task " + quoteShort(id) + " not found"}
	}
	return ex, toStatus(s.log, "get agent execution", err)
}

// a2aGetTask serves tasks/get.
func (s *service) a2aGetTask(ctx context.Context, a a2aAgent, id string, historyLength *int) (*a2aTask, error) {
	if historyLength != nil && *historyLength < 0 {
		return nil, &rpcError{Code: rpcInvalidParams, Message: "params.historyLength must not be negative"}
	}
	ex, err := s.a2aExecution(ctx, a, id)
	if err != nil {
		return nil, err
	}
	return s.a2aTaskOf(ctx, ex, historyLength)
}

// a2aTaskOf is execution ex as a task: its state; the answer as an
// artifact once completed; in the status message what the agent said
// last when it waits for input, the calls waiting for approval when it
// waits for a decision, the error when it failed; and the conversation's
// last historyLength messages (all, up to a2aMaxHistory, when unset).
func (s *service) a2aTaskOf(ctx context.Context, ex entrystore.Execution, historyLength *int) (*a2aTask, error) {
	ex, cs, err := s.conversation(ctx, ex.OrgID, ex.ID)
	if err != nil {
		return nil, err
	}
	var path []entrystore.Entry
	if ex.LeafEntryID != "" {
		if path, err = cs.Path(ctx, ex.OrgID, ex.LeafEntryID); err != nil {
			return nil, toStatus(s.log, "load the active path", err)
		}
	}
	msgs := a2aHistory(ex.ID, path)
	state := a2aState(ex.Status)
	task := &a2aTask{Kind: "task", ID: ex.ID, ContextID: ex.ID,
		Status: a2aStatus{State: state, Timestamp: ex.UpdatedAt.UTC().Format(time.RFC3339Nano)}}
	last := lastAgentMessage(msgs)
	switch state {
	case a2aCompleted:
		if last != nil {
			task.Artifacts = []a2aArtifact{{ArtifactID: last.MessageID, Name: "answer", Parts: last.Parts}}
			task.Status.Message = last
		}
	case a2aInputRequired:
		calls, _, err := cs.ListToolCalls(ctx, ex.OrgID, ex.ID,
			entrystore.ToolCallFilter{Status: entrystore.ToolCallAwaitingApproval}, entrystore.Page{Limit: 50})
		if err != nil {
			return nil, toStatus(s.log, "list tool calls", err)
		}
		if len(calls) > 0 {
			task.Status.Message = approvalMessage(ex.ID, calls)
		} else {
			task.Status.Message = last
		}
	case a2aFailed:
		task.Status.Message = agentText(ex.ID, "error-"+ex.ID, "The execution failed: "+ex.Error)
	case a2aUnknown:
		task.Status.Message = agentText(ex.ID, "paused-"+ex.ID,
			fmt.Sprintf("The execution is %s (its step budget is spent); only the Agentree API's POST …/agent-executions/%s/resume continues it.", ex.Status, ex.ID))
	}
	n := a2aMaxHistory
	if historyLength != nil && *historyLength < n {
		n = *historyLength
	}
	if len(msgs) > n {
		msgs = msgs[len(msgs)-n:]
	}
	task.History = msgs
	return task, nil
}

// a2aHistory is the conversation's user and agent messages with text, in
// order; tool calls and their results stay inside the agent's work.
func a2aHistory(exec string, path []entrystore.Entry) []a2aMessage {
	var out []a2aMessage
	for _, e := range path {
		if e.Type != string(agentsdk.EntryMessage) {
			continue
		}
		var m agentsdk.Message
		if json.Unmarshal(e.Content, &m) != nil {
			continue
		}
		text := m.Text()
		var role string
		switch m.Role {
		case agentsdk.RoleUser:
			role = "user"
		case agentsdk.RoleAssistant:
			role = "agent"
		}
		if role == "" || strings.TrimSpace(text) == "" {
			continue
		}
		id := e.ID
		if role == "agent" {
			// The ID its tokens streamed under (a2a_stream.go).
			id = messageItemID(exec, e.IdempotencyKey)
		}
		out = append(out, a2aMessage{Kind: "message", MessageID: id, Role: role,
			Parts: []a2aPart{{Kind: "text", Text: text}}, TaskID: exec, ContextID: exec})
	}
	return out
}

// lastAgentMessage is the last message when it is the agent's.
func lastAgentMessage(ms []a2aMessage) *a2aMessage {
	if len(ms) == 0 || ms[len(ms)-1].Role != "agent" {
		return nil
	}
	m := ms[len(ms)-1]
	return &m
}

// agentText is a message from the agent about task exec.
func agentText(exec, id, text string) *a2aMessage {
	return &a2aMessage{Kind: "message", MessageID: id, Role: "agent",
		Parts: []a2aPart{{Kind: "text", Text: text}}, TaskID: exec, ContextID: exec}
}

// approvalMessage describes the calls waiting for approval: in words, and
// as a data part a client can read. The answer is a message with a data
// part {"approved": true|false, "reason": "…"} (README "A2A").
func approvalMessage(exec string, calls []entrystore.ToolCall) *a2aMessage {
	var b strings.Builder
	pending := make([]map[string]any, 0, len(calls))
	for i, c := range calls {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s with %s", c.ToolName, compactJSON(c.Input))
		pending = append(pending, map[string]any{"toolCallId": c.ToolCallID, "toolName": c.ToolName, "arguments": json.RawMessage(compactJSON(c.Input))})
	}
	data, _ := json.Marshal(map[string]any{"pendingToolCalls": pending}) // plain values cannot fail
	m := agentText(exec, "approval-"+calls[0].ToolCallID,
		"Approve the call of "+b.String()+`? Answer with a data part {"approved": true} or {"approved": false, "reason": "…"}.`)
	m.Parts = append(m.Parts, a2aPart{Kind: "data", Data: data})
	return m
}

// compactJSON is raw on one line ("{}" when empty or not JSON).
func compactJSON(raw json.RawMessage) string {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return "{}"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// a2aCancel serves tasks/cancel through the REST API's cancel; a task
// that has ended is not cancelable.
func (s *service) a2aCancel(ctx context.Context, a a2aAgent, id string) (*a2aTask, error) {
	ex, err := s.a2aExecution(ctx, a, id)
	if err != nil {
		return nil, err
	}
	_, err = s.CancelAgentExecution(ctx, &pb.CancelAgentExecutionRequest{Org: a.org.ID, Id: ex.ID})
	if status.Code(err) == codes.FailedPrecondition {
		return nil, &rpcError{Code: a2aTaskNotCancelable, Message: fmt.Sprintf("task %s has ended (%s) and cannot be canceled", ex.ID, a2aState(ex.Status))}
	}
	if err != nil {
		return nil, err
	}
	if ex, err = s.a2aExecution(ctx, a, id); err != nil {
		return nil, err
	}
	return s.a2aTaskOf(ctx, ex, nil)
}
