package gateway

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/agentree/agentree/entrystore"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// payloadFields is StreamEvent's oneof: the field of an event is named
// after it, dots as underscores (agent.started is agent_started).
var payloadFields = (&pb.StreamEvent{}).ProtoReflect().Descriptor().Oneofs().ByName("payload").Fields()

// toStreamEvent converts a stored event to the gRPC message: its JSON
// payload, as the SSE stream sends it, read by protojson into the oneof
// field of its name. No code maps an event type by hand: the agentsdk/event
// types and the proto messages have the same JSON (TestStreamEventsMatchProto
// compares them field by field), so a new event needs no change here. A
// payload that does not fit (a row from an older build) is an error; the
// message then carries no payload rather than a wrong one.
func toStreamEvent(ev entrystore.StreamEvent) (*pb.StreamEvent, error) {
	out := &pb.StreamEvent{Id: ev.ID, Event: ev.Event}
	if !ev.CreatedAt.IsZero() {
		out.CreatedAt = timestamppb.New(ev.CreatedAt)
	}
	field := payloadField(ev.Event)
	if field == nil {
		return out, fmt.Errorf("gateway: no stream event field for %q", ev.Event)
	}
	m := out.ProtoReflect()
	payload := m.NewField(field).Message()
	if err := protojson.Unmarshal(ev.Data, payload.Interface()); err != nil {
		return out, fmt.Errorf("gateway: decode %s: %w", ev.Event, err)
	}
	m.Set(field, protoreflect.ValueOfMessage(payload))
	return out, nil
}

// payloadField is the oneof field of the event name, or nil.
func payloadField(name string) protoreflect.FieldDescriptor {
	return payloadFields.ByName(protoreflect.Name(strings.ReplaceAll(name, ".", "_")))
}
