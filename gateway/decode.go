package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"github.com/grpc-ecosystem/grpc-gateway/v2/utilities"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/agentree/agentree/agentsdk"
)

// bodyMarshaler is grpc-gateway's JSON marshaler with a decoder of our own:
// protojson's errors name its internals ("proto: (line 1:81): unknown
// field") and it ignores data after the object, so a body is checked here
// first, with every problem said in the API's terms.
type bodyMarshaler struct{ *runtime.JSONPb }

func (m bodyMarshaler) NewDecoder(r io.Reader) runtime.Decoder {
	return runtime.DecoderFunc(func(v any) error {
		raw, err := io.ReadAll(r)
		if err != nil {
			return fmt.Errorf("reading the request body: %w", err)
		}
		msg, ok := v.(proto.Message)
		if !ok {
			return m.JSONPb.Unmarshal(raw, v)
		}
		return decodeBody(raw, msg, m.UnmarshalOptions)
	})
}

// decodeBody decodes a request body onto msg. An empty body is io.EOF, which
// grpc-gateway takes as {} (the request's own checks then say what is
// missing).
func decodeBody(raw []byte, msg proto.Message, opts protojson.UnmarshalOptions) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		return io.EOF
	}
	what := requestName(msg.ProtoReflect().Descriptor())
	doc, err := parseJSON(raw)
	if err != nil {
		return err
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return fmt.Errorf("the request body must be a JSON object (the %s), not %s", what, jsonKind(doc))
	}
	if err := checkObject(obj, msg.ProtoReflect().Descriptor(), "", what); err != nil {
		return err
	}
	if err := opts.Unmarshal(raw, msg); err != nil {
		// checkObject knows every shape protojson takes; what is left is
		// a value of the right type that protojson still refuses.
		return fmt.Errorf("the request body is not a valid %s", what)
	}
	return nil
}

// parseJSON parses exactly one JSON value, saying where the syntax breaks
// and refusing anything after the value.
func parseJSON(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, syntaxError(raw, err)
	}
	end := dec.InputOffset()
	rest := bytes.TrimLeft(raw[end:], " \t\r\n")
	if len(rest) > 0 {
		at := len(raw) - len(rest)
		return nil, fmt.Errorf("the request body is not valid JSON: unexpected data after the JSON value at byte %d", at)
	}
	return doc, nil
}

// syntaxError words a JSON parse error with the byte where it happened.
func syntaxError(raw []byte, err error) error {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		return fmt.Errorf("the request body is not valid JSON: %s at byte %d", strings.TrimPrefix(se.Error(), "json: "), se.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("the request body is not valid JSON: it ends at byte %d before the value is complete", len(raw))
	}
	return errors.New("the request body is not valid JSON")
}

// requestName is how errors name a request message:
// CreateAgentExecutionRequest → "CreateAgentExecution request".
func requestName(md protoreflect.MessageDescriptor) string {
	name := string(md.Name())
	if base, ok := strings.CutSuffix(name, "Request"); ok {
		return base + " request"
	}
	return name
}

// pathFields are set from the URL, never from a body; they are left out of
// the "known" list an unknown-field error gives.
var pathFields = []string{"org", "id", "executionId"}

// checkObject checks a JSON object against a message: every key a field
// (by JSON or proto name) and every value of the field's JSON type.
func checkObject(obj map[string]any, md protoreflect.MessageDescriptor, prefix, what string) error {
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys) // the first problem is the same on every try
	fields := md.Fields()
	for _, k := range keys {
		fd := fields.ByJSONName(k)
		if fd == nil {
			fd = fields.ByTextName(k)
		}
		if fd == nil {
			return fmt.Errorf("unknown field %q in %s (known: %s)", prefix+k, what, strings.Join(knownFields(md, prefix == ""), ", "))
		}
		if err := checkField(obj[k], fd, prefix+fd.JSONName(), what); err != nil {
			return err
		}
	}
	return nil
}

// knownFields lists a message's fields by JSON name, without those the URL
// sets when top is true.
func knownFields(md protoreflect.MessageDescriptor, top bool) []string {
	var names []string
	for i := range md.Fields().Len() {
		n := md.Fields().Get(i).JSONName()
		if top && slices.Contains(pathFields, n) {
			continue
		}
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// checkField checks one field's value; null is accepted as protojson
// accepts it (the field is left unset).
func checkField(v any, fd protoreflect.FieldDescriptor, path, what string) error {
	if v == nil {
		return nil
	}
	if fd.IsList() {
		arr, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s must be a list, not %s", path, jsonKind(v))
		}
		for i, el := range arr {
			if el == nil {
				return fmt.Errorf("%s[%d] must not be null", path, i)
			}
			if err := checkScalar(el, fd, fmt.Sprintf("%s[%d]", path, i), what); err != nil {
				return err
			}
		}
		return nil
	}
	if fd.IsMap() {
		if _, ok := v.(map[string]any); !ok {
			return fmt.Errorf("%s must be an object, not %s", path, jsonKind(v))
		}
		return nil
	}
	return checkScalar(v, fd, path, what)
}

// checkScalar checks a single (non-list) value against its field's kind.
func checkScalar(v any, fd protoreflect.FieldDescriptor, path, what string) error {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return checkMessage(v, fd.Message(), path, what)
	case protoreflect.StringKind, protoreflect.BytesKind:
		if _, ok := v.(string); !ok {
			return fmt.Errorf("%s must be a string, not %s", path, jsonKind(v))
		}
	case protoreflect.BoolKind:
		if _, ok := v.(bool); !ok {
			return fmt.Errorf("%s must be true or false, not %s", path, jsonKind(v))
		}
	case protoreflect.EnumKind:
		if s, ok := v.(string); ok && fd.Enum().Values().ByName(protoreflect.Name(s)) != nil {
			return nil
		}
		var names []string
		for i := range fd.Enum().Values().Len() {
			names = append(names, string(fd.Enum().Values().Get(i).Name()))
		}
		return fmt.Errorf("%s must be one of %s", path, strings.Join(names, ", "))
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		if isConfigField(fd, "temperature") {
			return checkTemperature(v, path)
		}
		if _, ok := v.(json.Number); !ok {
			return fmt.Errorf("%s must be a number, not %s", path, jsonKind(v))
		}
	default: // the integer kinds
		if b, ok := configBound(fd); ok {
			return checkBound(v, b, path)
		}
		return checkInteger(v, fd, path)
	}
	return nil
}

// checkInteger accepts what protojson accepts for an integer field: a
// whole number, or one in a string, within the field's range.
func checkInteger(v any, fd protoreflect.FieldDescriptor, path string) error {
	var lo, hi float64
	switch fd.Kind() {
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		lo, hi = math.MinInt32, math.MaxInt32
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		lo, hi = 0, math.MaxUint32
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		lo, hi = 0, math.MaxUint64
	default:
		lo, hi = math.MinInt64, math.MaxInt64
	}
	var text string
	switch n := v.(type) {
	case json.Number:
		text = n.String()
	case string:
		text = n
	default:
		return fmt.Errorf("%s must be a whole number, not %s", path, jsonKind(v))
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil || f != math.Trunc(f) || f < lo || f > hi {
		return fmt.Errorf("%s must be a whole number from %.0f to %.0f; got %s", path, lo, hi, text)
	}
	return nil
}

// configMessage is the typed configuration, whose ranges are agentsdk's.
const configMessage protoreflect.FullName = "agentree.v1.ExecutionConfig"

// isConfigField reports whether fd is ExecutionConfig's field of that JSON
// name.
func isConfigField(fd protoreflect.FieldDescriptor, jsonName string) bool {
	return fd.ContainingMessage().FullName() == configMessage && fd.JSONName() == jsonName
}

// configBound is agentsdk's range of an ExecutionConfig integer field:
// agentsdk.ConfigBounds is the one statement of them, which the worker
// checks, the body check here says in the same words, and /openapi.json
// states (internal/openapi3gen).
func configBound(fd protoreflect.FieldDescriptor) (agentsdk.IntBound, bool) {
	if fd.ContainingMessage().FullName() != configMessage {
		return agentsdk.IntBound{}, false
	}
	for _, b := range agentsdk.ConfigBounds {
		if b.Field == fd.JSONName() {
			return b, true
		}
	}
	return agentsdk.IntBound{}, false
}

// checkBound checks a bounded configuration integer: a JSON number (not a
// string, which agentsdk.Config does not take) that is whole and in range.
func checkBound(v any, b agentsdk.IntBound, path string) error {
	n, ok := v.(json.Number)
	if !ok {
		return fmt.Errorf("%s must be a whole number, not %s", path, jsonKind(v))
	}
	f, err := strconv.ParseFloat(n.String(), 64)
	if err != nil || f != math.Trunc(f) || f < float64(b.Min) || f > float64(b.Max) {
		return errors.New(b.Problem(path, n.String()))
	}
	return nil
}

// checkTemperature checks a configuration's temperature against
// agentsdk's range.
func checkTemperature(v any, path string) error {
	n, ok := v.(json.Number)
	if !ok {
		return fmt.Errorf("%s must be a number, not %s", path, jsonKind(v))
	}
	if f, err := n.Float64(); err != nil || f < agentsdk.MinTemperature || f > agentsdk.MaxTemperature {
		return errors.New(agentsdk.TemperatureProblem(path, n.String()))
	}
	return nil
}

// checkMessage checks a nested message's value; the well-known types take
// their own JSON shapes.
func checkMessage(v any, md protoreflect.MessageDescriptor, path, what string) error {
	switch md.FullName() {
	case "google.protobuf.Struct":
		if _, ok := v.(map[string]any); !ok {
			return fmt.Errorf("%s must be an object, not %s", path, jsonKind(v))
		}
		return nil
	case "google.protobuf.Value":
		return nil
	case "google.protobuf.ListValue":
		if _, ok := v.([]any); !ok {
			return fmt.Errorf("%s must be a list, not %s", path, jsonKind(v))
		}
		return nil
	case "google.protobuf.Timestamp":
		if _, ok := v.(string); !ok {
			return fmt.Errorf("%s must be an RFC 3339 time string, not %s", path, jsonKind(v))
		}
		return nil
	}
	if strings.HasPrefix(string(md.FullName()), "google.protobuf.") {
		return nil // other well-known types: protojson's own check decides
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("%s must be an object, not %s", path, jsonKind(v))
	}
	return checkObject(obj, md, path+".", what)
}

// jsonKind names a decoded JSON value's type for an error message.
func jsonKind(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	case string:
		return fmt.Sprintf("the string %q", truncate(x, 40))
	case json.Number:
		return "the number " + x.String()
	case bool:
		return strconv.FormatBool(x)
	}
	return "that value"
}

// truncate shortens s for an error message.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// queryParser is grpc-gateway's query parser with errors in the API's
// terms: the default one answers "pageSize=ten" with strconv's text.
type queryParser struct{}

func (queryParser) Parse(msg proto.Message, values url.Values, filter *utilities.DoubleArray) error {
	fields := msg.ProtoReflect().Descriptor().Fields()
	for key, vals := range values {
		fd := fields.ByJSONName(key)
		if fd == nil {
			fd = fields.ByTextName(key)
		}
		if fd == nil || filter.HasCommonPrefix([]string{string(fd.Name())}) || fd.Message() != nil {
			continue // not a field (ignored, as before), or set from the path
		}
		if len(vals) > 1 && !fd.IsList() {
			return fmt.Errorf("query parameter %s is given %d times; give it once", fd.JSONName(), len(vals))
		}
		for _, v := range vals {
			if err := checkScalar(queryValue(v, fd), fd, "query parameter "+fd.JSONName(), ""); err != nil {
				return err
			}
		}
	}
	if err := (&runtime.DefaultQueryParser{}).Parse(msg, values, filter); err != nil {
		return errors.New("the query parameters do not match this route's (see /openapi.json)")
	}
	return nil
}

// queryValue is a query string's value as checkScalar takes it: a number
// where the field is numeric, true/false where it is a bool.
func queryValue(v string, fd protoreflect.FieldDescriptor) any {
	switch fd.Kind() {
	case protoreflect.StringKind, protoreflect.BytesKind, protoreflect.EnumKind:
		return v
	case protoreflect.BoolKind:
		if b, err := strconv.ParseBool(v); err == nil {
			return b
		}
		return v
	}
	if _, err := strconv.ParseFloat(v, 64); err == nil {
		return json.Number(v)
	}
	return v
}
