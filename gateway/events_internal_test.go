package gateway

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/agentree/agentree/agentsdk/event"
	"github.com/agentree/agentree/apiclient"
	"github.com/agentree/agentree/entrystore"
)

// TestStreamEventsMatchProto walks agentsdk/event's registry and the
// proto's StreamEvent descriptors: every event name has the oneof field of
// its name and every field an event, and each Go type and its message have
// the same JSON fields, of the same kinds, nested types included. A field
// or an event added to one side only fails here, before any client sees
// the two streams differ.
func TestStreamEventsMatchProto(t *testing.T) {
	names := event.Names()
	require.Equal(t, payloadFields.Len(), len(names), "one oneof field per event name")
	for _, name := range names {
		field := payloadField(name)
		require.NotNil(t, field, "StreamEvent has no oneof field for %s", name)
		ev, _ := event.New(name)
		requireSameShape(t, name, reflect.TypeOf(ev).Elem(), field.Message())
	}
}

// TestClientTerminalMatchesEvents: apiclient, which may link nothing but
// the proto, keeps its own list of the events that end a stream; it must
// be agentsdk/event's.
func TestClientTerminalMatchesEvents(t *testing.T) {
	for _, name := range event.Names() {
		require.Equal(t, event.Terminal(name), apiclient.Terminal(name), name)
	}
}

var (
	rawJSON  = reflect.TypeFor[json.RawMessage]()
	timeType = reflect.TypeFor[time.Time]()
)

// requireSameShape fails unless the struct type's JSON fields and the
// message's are the same names, list-ness and kinds.
func requireSameShape(t *testing.T, path string, typ reflect.Type, md protoreflect.MessageDescriptor) {
	t.Helper()
	n := 0
	for f := range typ.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" || name == "" {
			continue
		}
		n++
		at := path + "." + name
		pf := md.Fields().ByJSONName(name)
		require.NotNil(t, pf, "%s: %s has no field with JSON name %q", at, md.FullName(), name)
		ft := f.Type
		if ft.Kind() == reflect.Slice && ft != rawJSON {
			require.True(t, pf.IsList(), "%s: a list in Go, not in the proto", at)
			ft = ft.Elem()
		} else {
			require.False(t, pf.IsList(), "%s: a list in the proto, not in Go", at)
		}
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case ft == rawJSON:
			require.Equal(t, protoreflect.MessageKind, pf.Kind(), at)
			require.Equal(t, protoreflect.FullName("google.protobuf.Value"), pf.Message().FullName(), "%s: any JSON is a google.protobuf.Value", at)
		case ft == timeType:
			require.Equal(t, protoreflect.MessageKind, pf.Kind(), at)
			require.Equal(t, protoreflect.FullName("google.protobuf.Timestamp"), pf.Message().FullName(), "%s: a time is a google.protobuf.Timestamp", at)
		case ft.Kind() == reflect.Struct:
			require.Equal(t, protoreflect.MessageKind, pf.Kind(), at)
			requireSameShape(t, at, ft, pf.Message())
		case ft.Kind() == reflect.String:
			require.Equal(t, protoreflect.StringKind, pf.Kind(), at)
		case ft.Kind() == reflect.Bool:
			require.Equal(t, protoreflect.BoolKind, pf.Kind(), at)
		case ft.Kind() == reflect.Int:
			require.Contains(t, []protoreflect.Kind{protoreflect.Int32Kind, protoreflect.Int64Kind}, pf.Kind(), at)
		default:
			require.Failf(t, "unmapped Go type", "%s: %s", at, ft)
		}
	}
	require.Equal(t, md.Fields().Len(), n, "%s: %s has fields the Go type lacks", path, md.FullName())
}

// TestStreamEventPayloadsMatchJSON: for every event, with every field set,
// the proto message the gRPC stream sends is, in protojson, the very JSON
// the SSE stream sends; so the OpenAPI document (made from the proto)
// describes the SSE payloads field for field. A json_name missing or a
// kind that encodes differently fails here.
func TestStreamEventPayloadsMatchJSON(t *testing.T) {
	for _, name := range event.Names() {
		ev, _ := event.New(name)
		fill(reflect.ValueOf(ev).Elem())
		want, err := json.Marshal(ev)
		require.NoError(t, err)
		msg, err := toStreamEvent(entrystore.StreamEvent{ID: 7, Event: name, Data: want, CreatedAt: time.Now()})
		require.NoError(t, err, name)
		field := msg.ProtoReflect().WhichOneof(payloadFields.Get(0).ContainingOneof())
		require.NotNil(t, field, "%s has no oneof field", name)
		require.Equal(t, strings.ReplaceAll(name, ".", "_"), string(field.Name()), "the field is named after the event")
		got, err := protojson.Marshal(msg.ProtoReflect().Get(field).Message().Interface())
		require.NoError(t, err)
		require.JSONEq(t, string(want), string(got), name)
	}

	_, err := toStreamEvent(entrystore.StreamEvent{ID: 8, Event: event.NameToken, Data: []byte(`{"text":"old shape"}`)})
	require.Error(t, err, "an old-shape payload is refused, not half converted")
	_, err = toStreamEvent(entrystore.StreamEvent{ID: 9, Event: "agent.exploded", Data: []byte(`{}`)})
	require.Error(t, err, "an event no field has is refused")
}

// fill sets every field of v to a value that is not zero, so no field is
// left out of the JSON by omitempty.
func fill(v reflect.Value) {
	switch {
	case v.Type() == rawJSON:
		v.SetBytes([]byte(`{"query":"notes","limit":2,"tags":["a",true,null]}`))
	case v.Type() == timeType:
		v.Set(reflect.ValueOf(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)))
	case v.Kind() == reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i))
			}
		}
	case v.Kind() == reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem())
	case v.Kind() == reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		fill(v.Index(0))
		fill(v.Index(1))
	case v.Kind() == reflect.String:
		v.SetString("s-" + v.Type().Name())
	case v.Kind() == reflect.Int:
		v.SetInt(45)
	case v.Kind() == reflect.Bool:
		v.SetBool(true)
	default:
		panic("fill: unmapped kind " + v.Kind().String())
	}
}
