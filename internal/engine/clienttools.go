package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/event"
)

// Client tool calls (agentsdk.Config.ClientTools). A call to a client tool
// is recorded awaiting_result and the execution checkpoints, WAITING with
// reason client_tool; the client's output arrives as a toolResult signal
// through the inbox, and applying it consumes the signal with the call's
// tool_result entry, in one transaction.

// ClientResultsInput answers client tool calls of one assistant entry from
// toolResult signals in the inbox, under ParentID.
type ClientResultsInput struct {
	OrgID, ExecutionID, AssistantID, ParentID string
	ToolCallIDs                               []string
	SignalIDs                                 []string `json:",omitempty"`
	StepNumber                                int
}

// ClientResultsOutput is what ClientResults did.
type ClientResultsOutput struct {
	// Leaf is the last entry appended; nil when none was.
	Leaf *agentsdk.EntryRef `json:",omitempty"`
	// Consumed are the signals consumed, Pending the calls still without
	// an output.
	Consumed []string `json:",omitempty"`
	Pending  []string `json:",omitempty"`
}

// ClientResults consumes each signal in order: an output for a call of
// in.ToolCallIDs without one becomes the call's tool_result (its record
// completed, or error when the client said so); any other is consumed as
// ignored. The calls left without an output are recorded awaiting one.
// Safe to run again: a signal consumed by an earlier run of it yields the
// entry it was consumed with (consumeSignal).
func (o *Ops) ClientResults(ctx context.Context, in ClientResultsInput) (ClientResultsOutput, error) {
	var out ClientResultsOutput
	assistant, err := o.Store.GetEntry(ctx, in.OrgID, in.AssistantID)
	if err != nil {
		return out, fmt.Errorf("engine: client results: assistant entry: %w", err)
	}
	msg, err := assistant.Message()
	if err != nil {
		return out, fmt.Errorf("engine: client results: decode assistant entry: %w", err)
	}
	calls := map[string]agentsdk.ToolCall{}
	answered := map[string]bool{}
	for _, tc := range msg.ToolCalls() {
		if !slices.Contains(in.ToolCallIDs, tc.ID) {
			continue
		}
		calls[tc.ID] = tc
		rec, err := o.Store.ToolCall(ctx, in.OrgID, in.ExecutionID, in.AssistantID, tc.ID)
		if err != nil && !errors.Is(err, agentsdk.ErrNotFound) {
			return out, fmt.Errorf("engine: client results: record of %s: %w", tc.ID, err)
		}
		answered[tc.ID] = err == nil && rec.Status.Ended()
	}
	if len(calls) != len(in.ToolCallIDs) {
		return out, fmt.Errorf("%w: entry %s does not hold all of the tool calls %v", agentsdk.ErrInvalidInput, in.AssistantID, in.ToolCallIDs)
	}
	parent := in.ParentID
	for _, sid := range in.SignalIDs {
		raw, err := o.Store.SignalValue(ctx, in.OrgID, sid)
		if err != nil {
			return out, fmt.Errorf("engine: client results: %w", err)
		}
		var v agentsdk.ToolResultValue
		decoded := json.Unmarshal(raw, &v) == nil
		call, ok := calls[v.ToolCallID]
		entry := agentsdk.NewEntry{Type: agentsdk.EntryMessage, TurnID: assistant.TurnID}
		if valid := decoded && ok && !answered[call.ID]; valid {
			m := agentsdk.ToolResultMessage(call, v.Output, v.IsError)
			entry.Message = &m
		} else {
			reason := "no client tool call waits for an output with this ID"
			if !decoded {
				reason = "not a tool result"
			}
			entry.Type = agentsdk.EntryIgnoredSignal
			entry.Content, _ = json.Marshal(map[string]string{"toolCallId": v.ToolCallID, "ignored": reason})
			ok = false
		}
		ref, err := o.consumeSignal(ctx, ConsumeInput{
			AppendInput: AppendInput{OrgID: in.OrgID, ExecutionID: in.ExecutionID, ParentID: parent, Key: "signal/" + sid, Entry: entry},
			SignalID:    sid,
		}, nil)
		if err != nil {
			return out, err
		}
		out.Consumed = append(out.Consumed, sid)
		if ref.ID == "" {
			continue // consumed before, elsewhere on the path
		}
		parent, out.Leaf = ref.ID, &ref
		if !ok {
			continue
		}
		answered[call.ID] = true
		if err := o.recordClientResult(ctx, in, call, ref, v); err != nil {
			return out, err
		}
	}
	for _, id := range in.ToolCallIDs {
		if answered[id] {
			continue
		}
		out.Pending = append(out.Pending, id)
		tc := calls[id]
		err := o.Store.RecordToolCall(ctx, agentsdk.ToolCallRecord{
			OrgID: in.OrgID, ExecutionID: in.ExecutionID, MessageID: in.AssistantID, ToolCallID: id,
			ToolName: tc.Name, Status: agentsdk.ToolAwaitingResult, Input: tc.Arguments, StepNumber: in.StepNumber,
			Policy: agentsdk.PolicyAuto,
		})
		if err != nil {
			return out, fmt.Errorf("engine: client results: record %s: %w", id, err)
		}
	}
	return out, nil
}

// recordClientResult ends a client call's record with the output the
// client sent, and tells the stream.
func (o *Ops) recordClientResult(ctx context.Context, in ClientResultsInput, call agentsdk.ToolCall, result agentsdk.EntryRef, v agentsdk.ToolResultValue) error {
	status := agentsdk.ToolCompleted
	if v.IsError {
		status = agentsdk.ToolError
	}
	output, _ := json.Marshal(map[string]any{"text": v.Output, "isError": v.IsError})
	err := o.Store.RecordToolCall(ctx, agentsdk.ToolCallRecord{
		OrgID: in.OrgID, ExecutionID: in.ExecutionID, MessageID: in.AssistantID, ToolCallID: call.ID,
		ToolName: call.Name, Status: status, Input: call.Arguments, Output: output, ResultEntryID: result.ID,
		StepNumber: in.StepNumber, Policy: agentsdk.PolicyAuto, OutputSize: int64(len(v.Output)),
	})
	if err != nil {
		return fmt.Errorf("engine: client results: record %s: %w", call.ID, err)
	}
	if v.IsError {
		o.publish(ctx, in.OrgID, in.ExecutionID, event.TaskFailed{AgentExecutionID: in.ExecutionID, TaskExecutionID: call.ID, Kind: call.Name, Error: agentsdk.Preview(v.Output)})
	} else {
		o.publish(ctx, in.OrgID, in.ExecutionID, event.TaskCompleted{AgentExecutionID: in.ExecutionID, TaskExecutionID: call.ID, Kind: call.Name})
	}
	return nil
}

func (c *segment) ClientResults(assistantID string, calls []agentsdk.ToolCallRef) ([]agentsdk.ToolCallRef, error) {
	in := ClientResultsInput{OrgID: c.in.OrgID, ExecutionID: c.in.ExecutionID, AssistantID: assistantID,
		ParentID: c.leafID(), StepNumber: c.toolStep(0)}
	for _, tc := range calls {
		in.ToolCallIDs = append(in.ToolCallIDs, tc.ID)
	}
	for _, s := range c.pending {
		if s.Name == agentsdk.SignalToolResult {
			in.SignalIDs = append(in.SignalIDs, s.ID)
		}
	}
	var out ClientResultsOutput
	if err := c.port.Local(OpClientResults, in, &out); err != nil {
		return nil, err
	}
	c.pending = slices.DeleteFunc(c.pending, func(p agentsdk.Signal) bool { return slices.Contains(out.Consumed, p.ID) })
	if out.Leaf != nil {
		c.leaf = out.Leaf
	}
	var pending []agentsdk.ToolCallRef
	for _, tc := range calls {
		if slices.Contains(out.Pending, tc.ID) {
			pending = append(pending, tc)
		}
	}
	if len(pending) > 0 {
		c.clientCalls = &PendingApproval{AssistantID: assistantID, ToolCallIDs: out.Pending}
	}
	return pending, nil
}
