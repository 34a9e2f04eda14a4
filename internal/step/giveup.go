package step

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentree/agentree/agentsdk"
)

// ExhaustedClass names, in the result a model reads, the error class of a
// tool call given up on (seed 003's "recoverable" tool errors, which the
// model can work around): it failed with a Retryable error as many times
// as it was allowed to try.
const ExhaustedClass = "retryable, attempts exhausted"

// GiveUpTool ends a tool call whose Retryable failures used up its
// attempts (engine.Exhausted) as RunTool ends one whose tool returned an
// error: with an error tool_result the model reads, naming the failure's
// class, how many times it was tried and its last error. The execution goes
// on; the model decides what to do without the tool. Repeat-safe as
// RunTool is: a result already appended under in.Key is returned.
func GiveUpTool(ctx context.Context, d Deps, in ToolInput, failures int32, cause error) (agentsdk.ToolResult, error) {
	if e, err := d.Store.EntryByKey(ctx, in.OrgID, in.ExecutionID, in.Key); err == nil {
		return toolResultFromEntry(e, false)
	} else if !errors.Is(err, agentsdk.ErrNotFound) {
		return agentsdk.ToolResult{}, fmt.Errorf("step: give up tool call: find %s: %w", in.Key, err)
	}
	run, err := gaveUp(ctx, d, in, failures, cause)
	if err != nil {
		return agentsdk.ToolResult{}, err
	}
	return appendRun(ctx, d, in, run)
}

// GiveUpExecutedTool is GiveUpTool for a call of a parallel batch
// (ExecuteTool): the error result is kept in its record until
// AppendToolResults appends it.
func GiveUpExecutedTool(ctx context.Context, d Deps, in ToolInput, failures int32, cause error) (ToolOutcome, error) {
	if rec, err := d.Store.ToolCall(ctx, in.OrgID, in.ExecutionID, in.AssistantID, in.ToolCallID); err == nil && hasResult(rec) {
		return outcomeOf(rec), nil
	}
	run, err := gaveUp(ctx, d, in, failures, cause)
	if err != nil {
		return ToolOutcome{}, err
	}
	return recordRun(ctx, d, in, run)
}

// gaveUp is the ended run of a call given up on: its record (kept from the
// last attempt, so its input and duration stay) with the error result.
func gaveUp(ctx context.Context, d Deps, in ToolInput, failures int32, cause error) (toolRun, error) {
	assistant, err := d.entry(ctx, in.OrgID, in.ExecutionID, in.AssistantID)
	if err != nil {
		return toolRun{}, fmt.Errorf("step: give up tool call: assistant entry: %w", err)
	}
	msg, err := assistant.Message()
	if err != nil {
		return toolRun{}, fmt.Errorf("step: give up tool call: decode assistant entry: %w", err)
	}
	var call agentsdk.ToolCall
	for _, tc := range msg.ToolCalls() {
		if tc.ID == in.ToolCallID {
			call = tc
		}
	}
	if call.ID == "" {
		return toolRun{}, fmt.Errorf("%w: entry %s has no tool call %q", agentsdk.ErrInvalidInput, in.AssistantID, in.ToolCallID)
	}
	rec, err := d.Store.ToolCall(ctx, in.OrgID, in.ExecutionID, in.AssistantID, in.ToolCallID)
	if errors.Is(err, agentsdk.ErrNotFound) {
		rec = agentsdk.ToolCallRecord{OrgID: in.OrgID, ExecutionID: in.ExecutionID, MessageID: in.AssistantID,
			ToolCallID: call.ID, ToolName: call.Name, Input: call.Arguments, StepNumber: in.StepNumber,
			Policy: AnswerMetaOf(assistant).Policy(call.ID)}
	} else if err != nil {
		return toolRun{}, fmt.Errorf("step: give up tool call: record: %w", err)
	}
	shown := ExhaustedResult(call.Name, failures, cause)
	rec.Status = agentsdk.ToolError
	rec.Output, _ = json.Marshal(map[string]any{"text": shown, "isError": true})
	rec.OutputSize, rec.Truncated, rec.OutputSHA256 = int64(len(shown)), false, ""
	return toolRun{rec: rec, result: agentsdk.ToolResultMessage(call, shown, true), shown: shown, turnID: assistant.TurnID}, nil
}

// ExhaustedResult is what the model reads for a tool given up on.
func ExhaustedResult(tool string, failures int32, cause error) string {
	return fmt.Sprintf("error (%s): tool %q failed %d times and will not be tried again: %v", ExhaustedClass, tool, failures, cause)
}
