package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// signalToolResult sends a client tool call's output (a toolResult signal,
// agentsdk.ToolResultValue) to the execution. It is refused (400) for a
// call the execution has not asked the client for, and (409) for one
// that has another output already; the same output again answers with
// the signal that carried it first, changing nothing.
func (s *service) signalToolResult(ctx context.Context, ex entrystore.Execution, req *pb.SignalAgentExecutionRequest) (*pb.SignalAgentExecutionResponse, error) {
	v, value, err := toolResultValue(req.GetSignalValue())
	if err != nil {
		return nil, err
	}
	sigID, err := s.toolResultTaken(ctx, ex, v)
	if err != nil || sigID != "" {
		return &pb.SignalAgentExecutionResponse{SignalId: sigID, ExecutionId: ex.ID, SignalName: agentsdk.SignalToolResult}, err
	}
	cctx, cancel := committed(ctx)
	defer cancel()
	sig, err := s.ex.SignalOnce(cctx, effectID(ctx), ex.OrgID, ex.ID, agentsdk.SignalToolResult, value)
	if errors.Is(err, entrystore.ErrConflict) && !errors.Is(err, entrystore.ErrExecutionEnded) {
		// Another output for the call got into the inbox first.
		if sigID, err := s.toolResultTaken(ctx, ex, v); err != nil || sigID != "" {
			return &pb.SignalAgentExecutionResponse{SignalId: sigID, ExecutionId: ex.ID, SignalName: agentsdk.SignalToolResult}, err
		}
		return nil, status.Errorf(codes.FailedPrecondition, "tool call %q has an output already", v.ToolCallID)
	}
	if err != nil {
		return nil, toStatus(s.log, "send tool result", err)
	}
	return &pb.SignalAgentExecutionResponse{SignalId: sig.ID, ExecutionId: ex.ID, SignalName: agentsdk.SignalToolResult}, nil
}

// toolResultValue checks a toolResult signal's value and returns it with
// its JSON.
func toolResultValue(val *structpb.Value) (agentsdk.ToolResultValue, json.RawMessage, error) {
	var v agentsdk.ToolResultValue
	if val == nil {
		return v, nil, invalid(`signalValue of toolResult must be {"toolCallId": "...", "output": "..."}`)
	}
	raw, err := protojson.Marshal(val)
	if err != nil {
		return v, nil, invalid("signalValue: %v", err)
	}
	if err := decodeStrict(raw, &v); err != nil {
		return v, nil, invalid(`signalValue of toolResult must be {"toolCallId": "...", "output": "...", "isError": false}: %s`,
			decodeProblem(err, "signalValue", &v))
	}
	switch {
	case strings.TrimSpace(v.ToolCallID) == "":
		return v, nil, invalid("signalValue.toolCallId is required")
	case len(v.Output) > agentsdk.MaxToolResultOutput:
		return v, nil, invalid("signalValue.output is %d bytes, over the %d allowed", len(v.Output), agentsdk.MaxToolResultOutput)
	}
	raw, _ = json.Marshal(v) // one spelling, so a repeat compares equal
	return v, raw, nil
}

// toolResultTaken checks that the execution waits for v's call's output:
// nil and "" when it does and none is sent yet; the ID of the signal that
// sent the same output before; else the error to answer with.
func (s *service) toolResultTaken(ctx context.Context, ex entrystore.Execution, v agentsdk.ToolResultValue) (string, error) {
	_, cs, err := s.conversation(ctx, ex.OrgID, ex.ID)
	if err != nil {
		return "", err
	}
	tc, err := cs.LatestToolCall(ctx, ex.OrgID, ex.ID, v.ToolCallID)
	if errors.Is(err, entrystore.ErrNotFound) {
		return "", invalid("toolCallId %q is not a client tool call of this execution", v.ToolCallID)
	}
	if err != nil {
		return "", toStatus(s.log, "find tool call", err)
	}
	if tc.Status == entrystore.ToolCallAwaitingResult {
		pending, err := s.es.PendingSignals(ctx, ex.OrgID, ex.ID)
		if err != nil {
			return "", toStatus(s.log, "read the inbox", err)
		}
		for _, sig := range pending {
			if sig.Name == agentsdk.SignalToolResult {
				if id, err := sameOutput(sig, v); id != "" || err != nil {
					return id, err
				}
			}
		}
		return "", nil
	}
	// An ended client call's result entry was appended with its signal's
	// key: that signal holds the output the call got.
	if tc.ResultEntryID != "" {
		e, err := cs.GetEntry(ctx, ex.OrgID, tc.ResultEntryID)
		if err != nil {
			return "", toStatus(s.log, "read tool result", err)
		}
		if sigID, ok := strings.CutPrefix(e.IdempotencyKey, "signal/"); ok {
			sig, err := s.es.GetSignal(ctx, ex.OrgID, sigID)
			if err != nil {
				return "", toStatus(s.log, "read tool result", err)
			}
			if sig.Name == agentsdk.SignalToolResult {
				if id, err := sameOutput(sig, v); id != "" || err != nil {
					return id, err
				}
				return "", status.Errorf(codes.FailedPrecondition, "tool call %q has its output already", v.ToolCallID)
			}
		}
	}
	return "", invalid("toolCallId %q is not a client tool call waiting for an output (status %s)", v.ToolCallID, tc.Status)
}

// sameOutput is sig's ID when it carries v; a conflict when it carries
// another output for v's call; "" when it is for another call.
func sameOutput(sig entrystore.Signal, v agentsdk.ToolResultValue) (string, error) {
	var got agentsdk.ToolResultValue
	if json.Unmarshal(sig.Value, &got) != nil || got.ToolCallID != v.ToolCallID {
		return "", nil
	}
	if got != v {
		return "", status.Errorf(codes.FailedPrecondition, "tool call %q has another output already", v.ToolCallID)
	}
	return sig.ID, nil
}
