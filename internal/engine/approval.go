package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/event"
	"github.com/agentree/agentree/internal/domain"
	"github.com/agentree/agentree/internal/step"
)

// Tool-call approvals (seed 003 §3). A call whose policy is ask is
// recorded awaiting_approval and the execution checkpoints, WAITING with
// reason "approval"; a person's decision arrives as a toolApproval signal
// through the inbox, and applying it consumes the signal with the entry it
// becomes, in one transaction: an approval entry (the call then runs as
// any call) or, on a rejection, the call's error tool_result carrying the
// person's reason.

// ApprovalInput names calls of one assistant entry, in the entry's order;
// the first is the next call of the entry to be answered, at StepNumber.
type ApprovalInput struct {
	OrgID, ExecutionID, AssistantID string
	ToolCallIDs                     []string
	StepNumber                      int
	// OneStep: every call of the entry is step StepNumber
	// (agentsdk.ChangeOneStep); without it each took the step of its
	// place.
	OneStep bool `json:",omitempty"`
	// Deadline asks for the calls' first request time (ApprovalOutput),
	// which an approval timeout counts from.
	Deadline bool `json:",omitempty"`
}

// RequestApproval records each call awaiting approval, with its arguments,
// risk and when it was asked for. Repeat-safe: the first request time
// stays, and a call decided or ended keeps its status.
func (o *Ops) RequestApproval(ctx context.Context, in ApprovalInput) (ApprovalOutput, error) {
	if _, err := o.pendingCalls(ctx, in, true); err != nil || !in.Deadline {
		return ApprovalOutput{}, err
	}
	return o.firstRequested(ctx, in)
}

// pendingCalls describes the calls of in (and, with record, records them
// awaiting approval).
func (o *Ops) pendingCalls(ctx context.Context, in ApprovalInput, record bool) ([]event.PendingToolCall, error) {
	assistant, err := o.Store.GetEntry(ctx, in.OrgID, in.AssistantID)
	if err != nil {
		return nil, fmt.Errorf("engine: approval: assistant entry: %w", err)
	}
	msg, err := assistant.Message()
	if err != nil {
		return nil, fmt.Errorf("engine: approval: decode assistant entry: %w", err)
	}
	meta := step.AnswerMetaOf(assistant)
	now := time.Now().UTC()
	var out []event.PendingToolCall
	// The first call waiting is the next to be answered, step StepNumber;
	// the ones after it share it (OneStep) or take the steps of their
	// places.
	first := -1
	for i, tc := range msg.ToolCalls() {
		if !slices.Contains(in.ToolCallIDs, tc.ID) {
			continue
		}
		if first < 0 {
			first = i
		}
		stepNumber := in.StepNumber
		if !in.OneStep {
			stepNumber += i - first
		}
		out = append(out, event.PendingToolCall{ToolCallID: tc.ID, ToolName: tc.Name, Arguments: tc.Arguments, Risk: meta.Risks[tc.ID]})
		if !record {
			continue
		}
		err := o.Store.RecordToolCall(ctx, agentsdk.ToolCallRecord{
			OrgID: in.OrgID, ExecutionID: in.ExecutionID, MessageID: in.AssistantID, ToolCallID: tc.ID,
			ToolName: tc.Name, Status: agentsdk.ToolAwaitingApproval, Input: tc.Arguments, StepNumber: stepNumber,
			Policy: agentsdk.PolicyAsk, Approval: &agentsdk.Approval{Risk: meta.Risks[tc.ID], RequestedAt: now},
		})
		if err != nil {
			return nil, fmt.Errorf("engine: approval: record %s: %w", tc.ID, err)
		}
	}
	if len(out) != len(in.ToolCallIDs) {
		return nil, fmt.Errorf("%w: entry %s does not hold all of the tool calls %v", agentsdk.ErrInvalidInput, in.AssistantID, in.ToolCallIDs)
	}
	return out, nil
}

// DecisionsInput names toolApproval signals in the inbox.
type DecisionsInput struct {
	OrgID     string
	SignalIDs []string
}

// Decisions reads the decisions the signals carry, in the order given. A
// value that is not a decision is returned with no decision: the agent
// consumes it as a stray.
func (o *Ops) Decisions(ctx context.Context, in DecisionsInput) ([]agentsdk.DecisionRef, error) {
	out := make([]agentsdk.DecisionRef, len(in.SignalIDs))
	for i, id := range in.SignalIDs {
		raw, err := o.Store.SignalValue(ctx, in.OrgID, id)
		if err != nil {
			return nil, fmt.Errorf("engine: decision: %w", err)
		}
		var d agentsdk.Decision
		_ = json.Unmarshal(raw, &d)
		out[i] = agentsdk.DecisionRef{SignalID: id, ToolCallID: d.ToolCallID, Decision: d.Decision, Always: d.Always}
	}
	return out, nil
}

// DecideInput applies the decision signal SignalID to a call of
// AssistantID ("" for none), under ParentID.
type DecideInput struct {
	OrgID, ExecutionID, AssistantID, ParentID string
	SignalID                                  string
	StepNumber                                int
}

// ApplyDecision records the decision on the call's record, then consumes
// its signal with an approval entry. The record holds the decision before
// the signal leaves the inbox, so a second decision on the call is refused
// at every moment. A decision on a call the entry does not hold is
// consumed as ignored, the record untouched. A signal consumed before (a
// redelivery) returns the zero ref.
func (o *Ops) ApplyDecision(ctx context.Context, in DecideInput) (agentsdk.EntryRef, error) {
	raw, err := o.Store.SignalValue(ctx, in.OrgID, in.SignalID)
	if err != nil {
		return agentsdk.EntryRef{}, fmt.Errorf("engine: decision: %w", err)
	}
	var d agentsdk.Decision
	decoded := json.Unmarshal(raw, &d) == nil
	content := step.ApprovalContent{Ignored: "not a decision"}
	if decoded {
		content = step.ApprovalContent{ToolCallID: d.ToolCallID, Decision: d.Decision, DecidedBy: d.DecidedBy, Always: d.Always,
			Scope: d.Scope, Ignored: "no tool call waits for approval with this ID"}
	}
	turn := ""
	if in.AssistantID != "" && decoded {
		call, assistant, err := o.toolCall(ctx, in.OrgID, in.AssistantID, d.ToolCallID)
		if err != nil && !errors.Is(err, agentsdk.ErrInvalidInput) {
			return agentsdk.EntryRef{}, err
		}
		if err == nil {
			content.ToolName, content.Ignored, turn = call.Name, "", assistant.TurnID
			var edited json.RawMessage
			if d.Decision == agentsdk.DecisionApprove && len(d.Arguments) > 0 {
				// The audit keeps both: what the model asked, and what runs.
				edited, content.Arguments, content.EditedArguments = d.Arguments, call.Arguments, d.Arguments
			}
			err := o.Store.RecordToolCall(ctx, agentsdk.ToolCallRecord{
				OrgID: in.OrgID, ExecutionID: in.ExecutionID, MessageID: in.AssistantID, ToolCallID: call.ID,
				ToolName: call.Name, Status: agentsdk.ToolAwaitingApproval, Input: call.Arguments, StepNumber: in.StepNumber,
				Approval: &agentsdk.Approval{Decision: d.Decision, Reason: d.Reason, DecidedBy: d.DecidedBy, DecidedAt: d.DecidedAt,
					Always: d.Always, EditedArguments: edited},
			})
			if err != nil {
				return agentsdk.EntryRef{}, fmt.Errorf("engine: decision: record: %w", err)
			}
		}
	}
	b, _ := json.Marshal(content)
	return o.consumeSignal(ctx, ConsumeInput{
		AppendInput: AppendInput{OrgID: in.OrgID, ExecutionID: in.ExecutionID, ParentID: in.ParentID, Key: "signal/" + in.SignalID,
			Entry: agentsdk.NewEntry{Type: agentsdk.EntryApproval, Content: b, TurnID: turn}},
		SignalID: in.SignalID,
	}, nil)
}

// toolCall finds tool call id in the assistant entry; ErrInvalidInput
// when the entry holds no such call.
func (o *Ops) toolCall(ctx context.Context, orgID, assistantID, id string) (agentsdk.ToolCall, agentsdk.Entry, error) {
	assistant, err := o.Store.GetEntry(ctx, orgID, assistantID)
	if err != nil {
		return agentsdk.ToolCall{}, assistant, fmt.Errorf("engine: assistant entry: %w", err)
	}
	msg, err := assistant.Message()
	if err != nil {
		return agentsdk.ToolCall{}, assistant, fmt.Errorf("engine: decode assistant entry: %w", err)
	}
	for _, tc := range msg.ToolCalls() {
		if tc.ID == id {
			return tc, assistant, nil
		}
	}
	return agentsdk.ToolCall{}, assistant, fmt.Errorf("%w: entry %s has no tool call %q", agentsdk.ErrInvalidInput, assistantID, id)
}

// RejectInput answers a rejected call.
type RejectInput struct {
	OrgID, ExecutionID, AssistantID, ParentID, Key string
	ToolCallID                                     string
}

// RejectCall appends a rejected call's error tool_result, the person's
// reason taken from its record, and marks the record rejected. Keyed:
// a retry returns the same entry.
func (o *Ops) RejectCall(ctx context.Context, in RejectInput) (agentsdk.ToolResult, error) {
	call, assistant, err := o.toolCall(ctx, in.OrgID, in.AssistantID, in.ToolCallID)
	if err != nil {
		return agentsdk.ToolResult{}, err
	}
	rec, err := o.Store.ToolCall(ctx, in.OrgID, in.ExecutionID, in.AssistantID, in.ToolCallID)
	if err != nil {
		return agentsdk.ToolResult{}, fmt.Errorf("engine: reject: record of %s: %w", in.ToolCallID, err)
	}
	text := RejectionText("")
	if a := rec.Approval; a != nil && a.DecidedBy == agentsdk.DecidedByTimeout {
		text = "error: this tool call was rejected, not run: " + a.Reason
	} else if a != nil {
		text = RejectionText(a.Reason)
	}
	m := agentsdk.ToolResultMessage(call, text, true)
	content, _ := json.Marshal(m)
	got, err := o.Store.AppendEntries(ctx, in.OrgID, []agentsdk.Entry{{
		ExecutionID: in.ExecutionID, ParentID: in.ParentID, Type: agentsdk.EntryMessage, Role: agentsdk.RoleToolResult,
		Content: content, IdempotencyKey: in.Key, TurnID: assistant.TurnID,
	}})
	if err != nil {
		return agentsdk.ToolResult{}, fmt.Errorf("engine: reject: append: %w", err)
	}
	rec.Status, rec.ResultEntryID = agentsdk.ToolRejected, got[0].ID
	rec.Output, _ = json.Marshal(map[string]any{"text": text, "isError": true})
	if err := o.Store.RecordToolCall(ctx, rec); err != nil {
		return agentsdk.ToolResult{}, fmt.Errorf("engine: reject: record: %w", err)
	}
	o.publish(ctx, in.OrgID, in.ExecutionID, event.TaskFailed{AgentExecutionID: in.ExecutionID, TaskExecutionID: call.ID, Kind: call.Name, Error: text})
	ref, err := step.Ref(got[0])
	if err != nil {
		return agentsdk.ToolResult{}, err
	}
	return agentsdk.ToolResult{Entry: ref, ToolCallID: call.ID, IsError: true, Preview: ref.Preview}, nil
}

// RejectionText is the tool result a rejected call gets: what the model
// reads, the person's reason included.
func RejectionText(reason string) string {
	if reason == "" {
		return "error: a person rejected this tool call; it was not run"
	}
	return "error: a person rejected this tool call; it was not run. Their reason: " + reason
}

func (c *segment) RequestApproval(assistantID string, calls []agentsdk.ToolCallRef) error {
	ids := make([]string, len(calls))
	for i, tc := range calls {
		ids[i] = tc.ID
	}
	in := ApprovalInput{OrgID: c.in.OrgID, ExecutionID: c.in.ExecutionID, AssistantID: assistantID, ToolCallIDs: ids,
		StepNumber: c.toolStep(0), OneStep: c.oneStep()}
	timeout := c.approvalTimeout()
	var out *ApprovalOutput
	// Runs without a deadline record no result, as before the change.
	var dst any
	if timeout != nil {
		out, in.Deadline = &ApprovalOutput{}, true
		dst = out
	}
	if err := c.port.Local(OpRequestApproval, in, dst); err != nil {
		return err
	}
	c.approval = &PendingApproval{AssistantID: assistantID, ToolCallIDs: ids, StepNumber: in.StepNumber}
	if out != nil && !out.FirstRequestedAt.IsZero() && timeout.Outcome != agentsdk.TimeoutEscalate {
		at := timeout.Deadline(out.FirstRequestedAt)
		c.approval.Deadline = &at
	}
	return nil
}

func (c *segment) Decisions() ([]agentsdk.DecisionRef, error) {
	var ids []string
	for _, s := range c.pending {
		if s.Name == agentsdk.SignalToolApproval {
			ids = append(ids, s.ID)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	var out []agentsdk.DecisionRef
	if err := c.port.Local(OpDecisions, DecisionsInput{OrgID: c.in.OrgID, SignalIDs: ids}, &out); err != nil {
		return nil, err
	}
	return out, nil
}

func (c *segment) RejectCall(assistantID string, call agentsdk.ToolCallRef) (*agentsdk.ToolResult, error) {
	in := RejectInput{OrgID: c.in.OrgID, ExecutionID: c.in.ExecutionID, AssistantID: assistantID,
		ParentID: c.leafID(), Key: c.key(), ToolCallID: call.ID}
	var res agentsdk.ToolResult
	if err := c.port.Local(OpRejectCall, in, &res); err != nil {
		return nil, err
	}
	c.leaf = &res.Entry
	return &res, nil
}

func (c *segment) ApplyDecision(assistantID string, d agentsdk.DecisionRef) (*agentsdk.EntryRef, error) {
	in := DecideInput{OrgID: c.in.OrgID, ExecutionID: c.in.ExecutionID, AssistantID: assistantID,
		ParentID: c.leafID(), SignalID: d.SignalID, StepNumber: c.toolStep(0)}
	return c.consume(OpApplyDecision, in, d.SignalID)
}

// waitingEvent is the agent.waiting event of a checkpoint that waits.
func (o *Ops) waitingEvent(ctx context.Context, in CheckpointInput, status domain.Status) event.Waiting {
	ev := event.Waiting{AgentExecutionID: in.ExecutionID, Status: string(status), Reason: in.WaitReason, WakeAt: in.WakeAt}
	if p := in.Approval; p != nil {
		calls, err := o.pendingCalls(ctx, ApprovalInput{OrgID: in.OrgID, ExecutionID: in.ExecutionID,
			AssistantID: p.AssistantID, ToolCallIDs: p.ToolCallIDs}, false)
		if err == nil {
			// Without them (a store hiccup), clients read the calls from
			// the tool-call records, status awaiting_approval.
			ev.PendingToolCalls = calls
		}
	}
	if p := in.ClientCalls; p != nil {
		calls, err := o.pendingCalls(ctx, ApprovalInput{OrgID: in.OrgID, ExecutionID: in.ExecutionID,
			AssistantID: p.AssistantID, ToolCallIDs: p.ToolCallIDs}, false)
		if err == nil {
			// Without them, clients read the calls from the tool-call
			// records, status awaiting_result.
			ev.PendingToolCalls = append(ev.PendingToolCalls, calls...)
		}
	}
	return ev
}
