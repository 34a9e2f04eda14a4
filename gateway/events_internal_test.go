package gateway

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/agentree/agentree/agentsdk/event"
	"github.com/agentree/agentree/entrystore"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// TestStreamEventPayloadsMatchJSON: for every event, with every field set,
// the proto message the gRPC stream sends is, in protojson, the very JSON
// the SSE stream sends; so the OpenAPI document (made from the proto)
// describes the SSE payloads field for field. A field added to one side
// only, a json_name missing, or an event without a oneof field fails here.
func TestStreamEventPayloadsMatchJSON(t *testing.T) {
	args := json.RawMessage(`{"query":"notes","limit":2}`)
	samples := []event.Event{
		event.Started{AgentExecutionID: "x", Status: "RUNNING"},
		event.Resumed{AgentExecutionID: "x", Status: "RUNNING"},
		event.Waiting{AgentExecutionID: "x", Status: "WAITING", Reason: "approval", PendingToolCalls: []event.PendingToolCall{
			{ToolCallID: "c1", ToolName: "bash", Arguments: args, Risk: "high"}}},
		event.Checkpoint{AgentExecutionID: "x", Sequence: 3},
		event.Completed{AgentExecutionID: "x", Status: "COMPLETED", StopReason: "end_turn"},
		event.Failed{AgentExecutionID: "x", Status: "FAILED", StopReason: "error", Error: "boom"},
		event.Cancelled{AgentExecutionID: "x", Status: "CANCELLED", StopReason: "cancelled"},
		event.Paused{AgentExecutionID: "x", Status: "PAUSED", StopReason: "max_steps", Steps: 45},
		event.Token{AgentExecutionID: "x", TaskExecutionID: "m1", Data: "Hel"},
		event.Data{AgentExecutionID: "x", TaskExecutionID: "m1", Data: event.Payload{
			Type: event.TypeToolResult, Text: "thinking", Delta: `{"q`, Stream: "stdout", Output: "out",
			ToolCall: &event.ToolCall{ID: "c1", Name: "search_notes", Arguments: args},
			Result:   &event.ToolResult{IsError: true, Preview: "no notes", Truncated: true},
			Value:    json.RawMessage(`{"done":[1,2]}`),
		}},
		event.TaskStarted{AgentExecutionID: "x", TaskExecutionID: "c1", Kind: "search_notes", Arguments: args},
		event.TaskCompleted{AgentExecutionID: "x", TaskExecutionID: "c1", Kind: "search_notes"},
		event.TaskFailed{AgentExecutionID: "x", TaskExecutionID: "c1", Kind: "search_notes", Error: "no such note"},
		event.StreamError{Code: "unavailable", Message: "down", LastEventID: "12", RetryAfterMs: 1000},
	}
	oneof := (&pb.StreamEvent{}).ProtoReflect().Descriptor().Oneofs().ByName("payload")
	require.Equal(t, oneof.Fields().Len(), len(samples), "one sample per oneof field")
	seen := map[string]bool{}
	for _, ev := range samples {
		want, err := json.Marshal(ev)
		require.NoError(t, err)
		msg, err := toStreamEvent(entrystore.StreamEvent{ID: 7, Event: ev.Name(), Data: want, CreatedAt: time.Now()})
		require.NoError(t, err, ev.Name())
		field := msg.ProtoReflect().WhichOneof(oneof)
		require.NotNil(t, field, "%s has no oneof field", ev.Name())
		require.Equal(t, strings.ReplaceAll(ev.Name(), ".", "_"), string(field.Name()), "the field is named after the event")
		got, err := protojson.Marshal(msg.ProtoReflect().Get(field).Message().Interface())
		require.NoError(t, err)
		require.JSONEq(t, string(want), string(got), ev.Name())
		seen[ev.Name()] = true
	}
	require.Len(t, seen, len(samples), "every event once")

	_, err := toStreamEvent(entrystore.StreamEvent{ID: 8, Event: event.NameToken, Data: []byte(`{"text":"old shape"}`)})
	require.Error(t, err, "an old-shape payload is refused, not half converted")
}
