package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/agentree/agentree/agentsdk"
)

// decodeConfig decodes a request's or a definition's config object onto
// cfg (keys cfg already has and raw lacks are kept, which is how a
// request's config overrides a definition's). field is how the caller
// knows the object ("config"); every error is a 400 naming the key under
// it — config.maxTurns — with its range, never a Go type.
func decodeConfig(raw []byte, cfg *agentsdk.Config, field string) error {
	if len(raw) == 0 {
		return nil
	}
	var obj map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&obj); err != nil {
		return invalid("%s must be a JSON object", field)
	}
	if err := checkBounds(obj, field); err != nil {
		return err
	}
	if err := decodeStrict(raw, cfg); err != nil {
		return invalid("%s", decodeProblem(err, field, cfg))
	}
	if problems := cfg.ToolPolicy.Problems(field + ".toolPolicy"); len(problems) > 0 {
		return invalid("%s", strings.Join(problems, "; "))
	}
	return nil
}

// checkBounds checks the numeric keys against agentsdk's ranges before
// they are decoded, so 1e12 or 2147483648 is refused with the range rather
// than as a type error or, worse, accepted. A REST body has been through
// the same checks (decode.go); this is for gRPC and stored definitions.
func checkBounds(obj map[string]any, field string) error {
	for _, b := range agentsdk.ConfigBounds {
		if v, ok := obj[b.Field]; ok && v != nil {
			if err := checkBound(v, b, field+"."+b.Field); err != nil {
				return invalid("%v", err)
			}
		}
	}
	if v, ok := obj["temperature"]; ok && v != nil {
		if err := checkTemperature(v, field+".temperature"); err != nil {
			return invalid("%v", err)
		}
	}
	return nil
}

// decodeStrict decodes a JSON object onto v, refusing unknown keys and
// trailing data. Keys v already has and raw lacks are kept.
func decodeStrict(raw []byte, v any) error {
	if len(raw) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("unexpected data after the JSON object")
	}
	return nil
}

// decodeProblem words an encoding/json error about the object field was
// decoded onto (v) in the API's terms: the key's path under field, what it
// must be, and for an unknown key the keys there are.
func decodeProblem(err error, field string, v any) string {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		name := field
		if te.Field != "" {
			name += "." + te.Field
		}
		return fmt.Sprintf("%s must be %s, not %s", name, jsonType(te.Type), describeValue(te.Value))
	case errors.As(err, &se):
		return fmt.Sprintf("%s is not valid JSON at byte %d", field, se.Offset)
	}
	if key, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return fmt.Sprintf("unknown field %s in %s (known: %s)", key, field, strings.Join(jsonKeys(v), ", "))
	}
	return fmt.Sprintf("%s: %s", field, strings.TrimPrefix(err.Error(), "json: "))
}

// jsonType names a Go type by the JSON it is decoded from.
func jsonType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Pointer:
		return jsonType(t.Elem())
	}
	return "an object"
}

// describeValue turns encoding/json's value description ("string",
// "number 1.5", "array") into the API's words.
func describeValue(v string) string {
	kind, detail, _ := strings.Cut(v, " ")
	switch kind {
	case "string":
		return "a string"
	case "number":
		if detail != "" {
			return "the number " + detail
		}
		return "a number"
	case "array":
		return "a list"
	case "object":
		return "an object"
	case "bool":
		return "true or false"
	}
	return v
}

// jsonKeys lists the JSON keys of the struct v points to.
func jsonKeys(v any) []string {
	t := reflect.TypeOf(v)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	var keys []string
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			keys = append(keys, name)
		}
	}
	slices.Sort(keys)
	return keys
}
