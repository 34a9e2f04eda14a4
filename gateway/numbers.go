package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Counts that can pass 2^31 in realistic use (a year of waiting in
// milliseconds, 10^12 tokens, an output's bytes, an entry's seq) are
// 64-bit in the proto. protojson writes 64-bit integers as JSON strings
// (it has no option not to), but the seeds' clients parse numbers, so the
// REST API writes them as numbers: Marshal rewrites, guided by the
// message's descriptor, every 64-bit integer field protojson quoted. A
// JavaScript client reads exact integers up to 2^53, past any count here.

// Marshal is the JSONPb's, with 64-bit integers as JSON numbers.
func (m bodyMarshaler) Marshal(v any) ([]byte, error) {
	raw, err := m.JSONPb.Marshal(v)
	msg, ok := v.(proto.Message)
	if err != nil || !ok {
		return raw, err
	}
	return int64sAsNumbers(raw, msg.ProtoReflect().Descriptor())
}

// int64sAsNumbers rewrites the 64-bit integer fields of the protojson
// document raw, of a message md, as JSON numbers.
func int64sAsNumbers(raw []byte, md protoreflect.MessageDescriptor) ([]byte, error) {
	if !hasInt64(md, map[protoreflect.FullName]bool{}) {
		return raw, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("gateway: re-read a response: %w", err)
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false) // as protojson writes it
	if err := enc.Encode(numbered(doc, fieldKind{msg: md})); err != nil {
		return nil, fmt.Errorf("gateway: rewrite a response: %w", err)
	}
	return bytes.TrimSuffix(out.Bytes(), []byte("\n")), nil
}

// fieldKind is what a JSON value stands for: a message (msg), a 64-bit
// integer (int64), or anything else (neither).
type fieldKind struct {
	msg   protoreflect.MessageDescriptor
	int64 bool
}

func kindOf(fd protoreflect.FieldDescriptor) fieldKind {
	switch fd.Kind() {
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind,
		protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return fieldKind{int64: true}
	case protoreflect.MessageKind, protoreflect.GroupKind:
		if fd.Message().FullName().Parent() == "google.protobuf" {
			return fieldKind{} // well-known types keep protojson's forms
		}
		return fieldKind{msg: fd.Message()}
	}
	return fieldKind{}
}

// hasInt64 reports whether a message of md can hold a 64-bit integer.
func hasInt64(md protoreflect.MessageDescriptor, seen map[protoreflect.FullName]bool) bool {
	if seen[md.FullName()] {
		return false
	}
	seen[md.FullName()] = true
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.IsMap() {
			fd = fd.MapValue()
		}
		k := kindOf(fd)
		if k.int64 || k.msg != nil && hasInt64(k.msg, seen) {
			return true
		}
	}
	return false
}

// numbered is v, a JSON value of kind k (a list: of its elements' kind),
// with its 64-bit integers as numbers.
func numbered(v any, k fieldKind) any {
	switch v := v.(type) {
	case string:
		if _, err := json.Number(v).Int64(); k.int64 && err == nil {
			return json.Number(v)
		}
		if _, err := strconv.ParseUint(v, 10, 64); k.int64 && err == nil {
			return json.Number(v)
		}
	case []any:
		for i, e := range v {
			v[i] = numbered(e, k)
		}
	case map[string]any:
		if k.msg == nil {
			return v
		}
		fields := k.msg.Fields()
		for name, e := range v {
			fd := fields.ByJSONName(name)
			if fd == nil {
				fd = fields.ByTextName(name)
			}
			if fd == nil {
				continue
			}
			if fd.IsMap() {
				if m, ok := e.(map[string]any); ok {
					for mk, mv := range m {
						m[mk] = numbered(mv, kindOf(fd.MapValue()))
					}
				}
				continue
			}
			v[name] = numbered(e, kindOf(fd))
		}
	}
	return v
}
