package gateway

import (
	"fmt"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/agentree/agentree/agentsdk/event"
	"github.com/agentree/agentree/entrystore"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// toStreamEvent converts a stored event to the gRPC message: its payload
// decoded into its agentsdk/event type, then set as the oneof field of its
// name. A payload that does not decode (a row from an older build) is an
// error; the message then carries no payload rather than a wrong one.
func toStreamEvent(ev entrystore.StreamEvent) (*pb.StreamEvent, error) {
	out := &pb.StreamEvent{Id: ev.ID, Event: ev.Event}
	if !ev.CreatedAt.IsZero() {
		out.CreatedAt = timestamppb.New(ev.CreatedAt)
	}
	typed, err := event.Decode(ev.Event, ev.Data)
	if err != nil {
		return out, err
	}
	return out, setPayload(out, typed)
}

// setPayload sets the oneof field of the event's name. Every type
// event.New returns has a case: TestStreamEventPayloadsMatchJSON fails when
// one is missing.
func setPayload(out *pb.StreamEvent, ev event.Event) error {
	switch e := ev.(type) {
	case *event.Started:
		out.Payload = &pb.StreamEvent_AgentStarted{AgentStarted: &pb.AgentStartedEvent{AgentExecutionId: e.AgentExecutionID, Status: e.Status}}
	case *event.Resumed:
		out.Payload = &pb.StreamEvent_AgentResumed{AgentResumed: &pb.AgentResumedEvent{AgentExecutionId: e.AgentExecutionID, Status: e.Status}}
	case *event.Waiting:
		w := &pb.AgentWaitingEvent{AgentExecutionId: e.AgentExecutionID, Status: e.Status, Reason: e.Reason}
		for _, c := range e.PendingToolCalls {
			w.PendingToolCalls = append(w.PendingToolCalls, &pb.PendingToolCall{ToolCallId: c.ToolCallID, ToolName: c.ToolName, Arguments: toValue(c.Arguments), Risk: c.Risk})
		}
		out.Payload = &pb.StreamEvent_AgentWaiting{AgentWaiting: w}
	case *event.Checkpoint:
		out.Payload = &pb.StreamEvent_AgentCheckpoint{AgentCheckpoint: &pb.AgentCheckpointEvent{AgentExecutionId: e.AgentExecutionID, Sequence: int32(e.Sequence)}}
	case *event.Completed:
		out.Payload = &pb.StreamEvent_AgentCompleted{AgentCompleted: &pb.AgentCompletedEvent{AgentExecutionId: e.AgentExecutionID, Status: e.Status, StopReason: e.StopReason}}
	case *event.Failed:
		out.Payload = &pb.StreamEvent_AgentFailed{AgentFailed: &pb.AgentFailedEvent{AgentExecutionId: e.AgentExecutionID, Status: e.Status, StopReason: e.StopReason, Error: e.Error}}
	case *event.Paused:
		out.Payload = &pb.StreamEvent_AgentPaused{AgentPaused: &pb.AgentPausedEvent{AgentExecutionId: e.AgentExecutionID, Status: e.Status, StopReason: e.StopReason, Steps: int32(e.Steps)}}
	case *event.Cancelled:
		out.Payload = &pb.StreamEvent_AgentCancelled{AgentCancelled: &pb.AgentCancelledEvent{AgentExecutionId: e.AgentExecutionID, Status: e.Status, StopReason: e.StopReason}}
	case *event.Token:
		out.Payload = &pb.StreamEvent_Token{Token: &pb.TokenEvent{AgentExecutionId: e.AgentExecutionID, TaskExecutionId: e.TaskExecutionID, Data: e.Data,
			Offset: int32(e.Offset)}}
	case *event.Data:
		out.Payload = &pb.StreamEvent_Data{Data: &pb.DataEvent{AgentExecutionId: e.AgentExecutionID, TaskExecutionId: e.TaskExecutionID, Data: toDataPayload(e.Data)}}
	case *event.TaskStarted:
		out.Payload = &pb.StreamEvent_TaskStarted{TaskStarted: &pb.TaskStartedEvent{AgentExecutionId: e.AgentExecutionID, TaskExecutionId: e.TaskExecutionID, Kind: e.Kind, Arguments: toValue(e.Arguments)}}
	case *event.TaskCompleted:
		out.Payload = &pb.StreamEvent_TaskCompleted{TaskCompleted: &pb.TaskCompletedEvent{AgentExecutionId: e.AgentExecutionID, TaskExecutionId: e.TaskExecutionID, Kind: e.Kind}}
	case *event.TaskFailed:
		out.Payload = &pb.StreamEvent_TaskFailed{TaskFailed: &pb.TaskFailedEvent{AgentExecutionId: e.AgentExecutionID, TaskExecutionId: e.TaskExecutionID, Kind: e.Kind, Error: e.Error}}
	case *event.StreamError:
		out.Payload = &pb.StreamEvent_StreamError{StreamError: &pb.StreamErrorEvent{Code: e.Code, Message: e.Message, LastEventId: e.LastEventID, RetryAfterMs: int32(e.RetryAfterMs)}}
	default:
		return fmt.Errorf("gateway: no stream event field for %T", ev)
	}
	return nil
}

func toDataPayload(p event.Payload) *pb.DataPayload {
	out := &pb.DataPayload{Type: p.Type, Text: p.Text, Delta: p.Delta, Stream: p.Stream, Data: p.Output, Value: toValue(p.Value)}
	if tc := p.ToolCall; tc != nil {
		out.ToolCall = &pb.StreamToolCall{Id: tc.ID, Name: tc.Name, Arguments: toValue(tc.Arguments)}
	}
	if r := p.Result; r != nil {
		out.Result = &pb.StreamToolResult{IsError: r.IsError, Preview: r.Preview, Truncated: r.Truncated}
	}
	return out
}
