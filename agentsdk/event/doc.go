// Package event defines every event an execution's live stream carries:
// its name, which is the SSE event name, and its payload, one Go type per
// name. Producers (the segment engine, the model and tool steps) publish
// these types; the gateway, the CLI and the samples decode them with
// Decode. The proto's StreamEvent mirrors them as a oneof, so the OpenAPI
// document describes each payload: the gateway fills the oneof from the
// same JSON with no per-event code, and its TestStreamEventsMatchProto
// walks this package's registry and the proto descriptors and fails on an
// event or a field only one side has.
//
// The names and shapes follow seed 000's consolidated stream where it gives
// them (agent.*, token, data, task.completed); what Agentree adds
// (task.started, task.failed, agent.failed, agent.cancelled, the tool_result
// data type, stream_error) is documented on its type.
//
// It imports only the standard library.
package event
