package gateway

import (
	"bytes"
	"encoding/base64"
	"encoding/json"

	"google.golang.org/protobuf/proto"
)

// The gateway's own cursors (where a page is not a store page as is: the
// entries list with its llm_call entries, the active path, an entry's
// context, the token timeline) are a small struct as base64url JSON: opaque
// to clients, checked field by field on the way back.

// encodeCursor is c as a nextCursor.
func encodeCursor(c any) string {
	b, _ := json.Marshal(c) // the cursors are plain fields: cannot fail
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeCursor parses a cursor encodeCursor made; "" is first, the
// position of the first page. Anything else, or a C that valid refuses, is
// a 400.
func decodeCursor[C any](cursor string, first C, valid func(C) bool) (C, error) {
	if cursor == "" {
		return first, nil
	}
	var c C
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err == nil {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		err = dec.Decode(&c)
	}
	if err != nil || !valid(c) {
		var zero C
		return zero, invalid("cursor %q is not a nextCursor of this list", cursor)
	}
	return c, nil
}

// pageBudget is what is left of a page's byte budget as items join it,
// measured as their protobuf size (what the JSON answer is made from;
// its length is of the same order).
type pageBudget struct {
	left int // bytes left; ignored when off
	off  bool
	n    int // items taken
}

func (s *service) newPageBudget() *pageBudget {
	return &pageBudget{left: s.pageBytes, off: s.pageBytes <= 0}
}

// take says whether m may join the page, and counts it if so. The first
// item always may, whatever its size, so every page moves on.
func (b *pageBudget) take(m proto.Message) bool {
	size := proto.Size(m)
	if !b.off && b.n > 0 && size > b.left {
		return false
	}
	b.left -= size
	b.n++
	return true
}

// storeBytes is the budget to ask the store for: what is left, at least
// one byte (0 would mean none), or 0 when the budget is off.
func (b *pageBudget) storeBytes() int {
	if b.off {
		return 0
	}
	return max(b.left, 1)
}
