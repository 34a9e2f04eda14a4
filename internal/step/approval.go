package step

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentree/agentree/agentsdk"
)

// ApprovalContent is an approval entry's content: a person's decision as
// applied to a tool call (or, with Ignored, why it changed nothing).
type ApprovalContent struct {
	ToolCallID string `json:"toolCallId,omitempty"`
	ToolName   string `json:"toolName,omitempty"`
	Decision   string `json:"decision,omitempty"`
	DecidedBy  string `json:"decidedBy,omitempty"`
	Always     bool   `json:"always,omitempty"`
	// Scope is how far an approval stands, when wider than the call.
	Scope string `json:"scope,omitempty"`
	// Arguments and EditedArguments, when the person edited the call's
	// arguments: the model's, and what the call runs with instead.
	Arguments       json.RawMessage `json:"arguments,omitempty"`
	EditedArguments json.RawMessage `json:"editedArguments,omitempty"`
	// Ignored says why a decision changed nothing.
	Ignored string `json:"ignored,omitempty"`
}

// UnapprovedMessage is the error result of a call whose policy is ask that
// no person approved.
func UnapprovedMessage(name string) string {
	return fmt.Sprintf("error: tool %q needs a person's approval and none is recorded for this call; it was not run", name)
}

// Refusal says why call, of the assistant entry, may not run under policy
// p ("" when it may), in the words of the error result the model reads:
// a forbidden call never runs (operator: whether the operator's ceiling
// forbids it, for the wording), and a call whose policy is ask runs only
// with a person's approval in the store (Approved).
//
// Workflow code asks for approvals before it runs a call; this is the
// check of the code that runs it, so neither a bug in an agent nor a
// history that skipped the question runs a call nobody approved.
func Refusal(ctx context.Context, store Store, orgID, executionID string, assistant agentsdk.Entry,
	call agentsdk.ToolCall, p agentsdk.ToolPolicy, operator bool) (string, error) {
	switch p {
	case agentsdk.PolicyForbid:
		return "error: " + agentsdk.ForbiddenMessage(call.Name, operator), nil
	case agentsdk.PolicyAsk:
		ok, err := Approved(ctx, store, orgID, executionID, assistant, call)
		if err != nil || ok {
			return "", err
		}
		return UnapprovedMessage(call.Name), nil
	}
	return "", nil
}

// Approved reports whether a person approved call, of the assistant
// entry: its own tool-call record holds an approval, or the tool was
// approved for the rest of the execution ("always") — on another call of
// the same answer (its record) or in an approval entry on the path to the
// answer. These are the places the engine writes a decision to
// (engine.ApplyDecision), from the toolApproval signal a person sent.
func Approved(ctx context.Context, store Store, orgID, executionID string, assistant agentsdk.Entry, call agentsdk.ToolCall) (bool, error) {
	msg, err := assistant.Message()
	if err != nil {
		return false, fmt.Errorf("step: approval: decode assistant entry: %w", err)
	}
	for _, tc := range msg.ToolCalls() {
		if tc.ID != call.ID && tc.Name != call.Name {
			continue
		}
		rec, err := store.ToolCall(ctx, orgID, executionID, assistant.ID, tc.ID)
		if errors.Is(err, agentsdk.ErrNotFound) {
			continue
		}
		if err != nil {
			return false, fmt.Errorf("step: approval: record of %s: %w", tc.ID, err)
		}
		if a := rec.Approval; a != nil && a.Decision == agentsdk.DecisionApprove && (tc.ID == call.ID || a.Always) {
			return true, nil
		}
	}
	path, err := store.Path(ctx, orgID, assistant.ID)
	if err != nil {
		return false, fmt.Errorf("step: approval: path: %w", err)
	}
	for _, e := range path {
		if e.Type != agentsdk.EntryApproval {
			continue
		}
		var c ApprovalContent
		if json.Unmarshal(e.Content, &c) != nil || c.Ignored != "" {
			continue
		}
		if c.Always && c.Decision == agentsdk.DecisionApprove && c.ToolName == call.Name {
			return true, nil
		}
	}
	return false, nil
}
