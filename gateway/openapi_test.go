package gateway_test

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk/event"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// TestOpenAPIIsVersion3 fetches /openapi.json from a running gateway: it
// parses and validates as OpenAPI 3 and documents the REST routes; the
// Swagger 2.0 original stays at /swagger.json.
func TestOpenAPIIsVersion3(t *testing.T) {
	e := newEnv(t, envOptions{noTemporal: true})
	get := func(path string) []byte {
		resp, err := http.Get(e.base + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
		raw, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return raw
	}
	doc, err := openapi3.NewLoader().LoadFromData(get("/openapi.json"))
	require.NoError(t, err)
	require.NoError(t, doc.Validate(context.Background()))
	require.Regexp(t, `^3\.`, doc.OpenAPI)
	for path, methods := range map[string][]string{
		"/api/orgs/{org}/agent-executions":                                 {"GET", "POST"},
		"/api/orgs/{org}/agent-executions/{id}":                            {"GET", "DELETE"},
		"/api/orgs/{org}/agent-executions/{id}/signal":                     {"POST"},
		"/api/orgs/{org}/agent-definitions":                                {"GET", "POST"},
		"/api/orgs/{org}/agent-definitions/{id}":                           {"GET", "PUT", "DELETE"},
		"/api/orgs/{org}/agent-executions/{executionId}/messages":          {"GET"},
		"/api/orgs/{org}/agent-executions/{executionId}/checkpoints":       {"GET"},
		"/api/orgs/{org}/agent-executions/{executionId}/tool-calls":        {"GET"},
		"/api/orgs/{org}/agent-executions/{executionId}/stream":            {"GET"},
		"/api/orgs/{org}/agent-executions/{executionId}/entries/{entryId}": {"GET"},
	} {
		item := doc.Paths.Find(path)
		require.NotNil(t, item, "%s is documented", path)
		for _, m := range methods {
			require.NotNil(t, item.GetOperation(m), "%s %s is documented", m, path)
		}
	}
	create := doc.Paths.Find("/api/orgs/{org}/agent-executions").Post
	require.NotNil(t, create.RequestBody, "the create body is an OpenAPI 3 requestBody")
	require.NotNil(t, create.RequestBody.Value.Content.Get("application/json"))

	require.Contains(t, string(get("/swagger.json")), `"swagger": "2.0"`)
}

// TestOpenAPIDescribesEveryStreamEvent: the stream's response schema names
// a payload for every event, and each payload's documented properties are
// exactly the JSON fields agentsdk/event sends (every field set), nested
// data payloads included.
func TestOpenAPIDescribesEveryStreamEvent(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(pb.OpenAPI)
	require.NoError(t, err)
	stream := doc.Paths.Find("/api/orgs/{org}/agent-executions/{executionId}/stream").Get
	sse := stream.Responses.Status(http.StatusOK).Value.Content.Get("text/event-stream")
	require.NotNil(t, sse, "the stream is documented as text/event-stream")
	streamEvent := sse.Schema.Value

	args := json.RawMessage(`{"query":"notes"}`)
	call := &event.ToolCall{ID: "c1", Name: "search_notes", Arguments: args}
	result := &event.ToolResult{IsError: true, Preview: "p", Truncated: true}
	downgrade := &event.Downgrade{Model: "m", From: "f", Reason: "r"}
	payload := event.Payload{Type: "t", Text: "t", ToolCall: call, Delta: "d", Result: result, Stream: "s", Output: "o", Value: args, Downgrade: downgrade}
	pending := event.PendingToolCall{ToolCallID: "c1", ToolName: "bash", Arguments: args, Risk: "high"}
	wake := time.Unix(0, 0)
	samples := map[string]any{ // oneof property -> a value with every field set
		"agentStarted":    event.Started{AgentExecutionID: "x", Status: "s"},
		"agentResumed":    event.Resumed{AgentExecutionID: "x", Status: "s"},
		"agentWaiting":    event.Waiting{AgentExecutionID: "x", Status: "s", Reason: "r", PendingToolCalls: []event.PendingToolCall{pending}, WakeAt: &wake},
		"agentCheckpoint": event.Checkpoint{AgentExecutionID: "x", Sequence: 1},
		"agentCompleted":  event.Completed{AgentExecutionID: "x", Status: "s", StopReason: "r"},
		"agentFailed":     event.Failed{AgentExecutionID: "x", Status: "s", StopReason: "r", Error: "e"},
		"agentCancelled":  event.Cancelled{AgentExecutionID: "x", Status: "s", StopReason: "r"},
		"agentPaused":     event.Paused{AgentExecutionID: "x", Status: "s", StopReason: "r", Steps: 1},
		"token":           event.Token{AgentExecutionID: "x", TaskExecutionID: "m", Data: "d", Offset: 1},
		"data":            event.Data{AgentExecutionID: "x", TaskExecutionID: "m", Data: payload},
		"taskStarted":     event.TaskStarted{AgentExecutionID: "x", TaskExecutionID: "c", Kind: "k", Arguments: args},
		"taskCompleted":   event.TaskCompleted{AgentExecutionID: "x", TaskExecutionID: "c", Kind: "k"},
		"taskFailed":      event.TaskFailed{AgentExecutionID: "x", TaskExecutionID: "c", Kind: "k", Error: "e"},
		"streamError":     event.StreamError{Code: "c", Message: "m", LastEventID: "1", RetryAfterMs: 1},
	}
	fields := func(v any) []string {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		var m map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(b, &m))
		return slices.Sorted(maps.Keys(m))
	}
	props := func(s *openapi3.Schema) []string { return slices.Sorted(maps.Keys(s.Properties)) }
	for prop, sample := range samples {
		ref := streamEvent.Properties[prop]
		require.NotNil(t, ref, "StreamEvent documents %s", prop)
		require.Equal(t, fields(sample), props(ref.Value), "the documented fields of %s", prop)
	}
	dataPayload := streamEvent.Properties["data"].Value.Properties["data"].Value
	require.Equal(t, fields(payload), props(dataPayload))
	require.Equal(t, fields(call), props(dataPayload.Properties["tool_call"].Value))
	require.Equal(t, fields(result), props(dataPayload.Properties["result"].Value))
	require.Equal(t, fields(downgrade), props(dataPayload.Properties["downgrade"].Value))
	waiting := streamEvent.Properties["agentWaiting"].Value
	require.Equal(t, fields(pending), props(waiting.Properties["pendingToolCalls"].Value.Items.Value))
}
