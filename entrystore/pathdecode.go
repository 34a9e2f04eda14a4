package entrystore

import (
	"encoding/binary"
	"encoding/hex"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// pathColumns are the columns of a path query's rows, in order (pathSQL,
// contextPathSQL), and the binary types pathDecoder reads them as.
var pathColumns = []uint32{
	pgtype.Int4OID, pgtype.Int4OID, pgtype.UUIDOID, pgtype.UUIDOID, pgtype.UUIDOID, pgtype.Int8OID, pgtype.Int4OID,
	pgtype.Int4OID, pgtype.TextOID, pgtype.TextOID, pgtype.JSONBOID, pgtype.TextOID, pgtype.TextOID, pgtype.JSONBOID,
	pgtype.TimestamptzOID,
}

// binaryPath reports whether a path query's rows came in the binary
// formats pathDecoder reads; else readPath scans them.
func binaryPath(fds []pgconn.FieldDescription) bool {
	if len(fds) != len(pathColumns) {
		return false
	}
	for i, fd := range fds {
		// Text and jsonb may come as text: their bytes are the value (a
		// binary jsonb's lead with a version byte, which jsonOf drops).
		textual := fd.DataTypeOID == pgtype.TextOID || fd.DataTypeOID == pgtype.JSONBOID
		if fd.DataTypeOID != pathColumns[i] || (fd.Format != pgx.BinaryFormatCode && !textual) {
			return false
		}
	}
	return true
}

// pathDecoder decodes a path's rows from their binary columns. Scanning
// them one value at a time cost a string per ID, a copy per JSON value
// and a reflective call per column: a third of loading a 10,000-entry
// path. It keeps the raw IDs and writes each as text once, into one
// string for the whole path (its IDs are substrings of it); an entry's
// parent is the entry before it, which the path's shape guarantees and
// the decoder checks; contents and metadata go into one buffer; the few
// distinct types, roles and turns are shared strings.
type pathDecoder struct {
	ids     [][16]byte // by slot: the entry's ID
	parents [][16]byte // by slot: its parent's, zero for none
	hasPar  []bool
	arena   []byte
	spans   []span // by slot: content, then metadata
	strs    map[string]string
}

type span struct{ content, contentEnd, meta, metaEnd int }

func newPathDecoder(n int) *pathDecoder {
	return &pathDecoder{ids: make([][16]byte, n), parents: make([][16]byte, n), hasPar: make([]bool, n),
		spans: make([]span, n), strs: map[string]string{}}
}

// intern shares the string of b among equal values.
func (d *pathDecoder) intern(b []byte) string {
	if s, ok := d.strs[string(b)]; ok {
		return s
	}
	s := string(b)
	d.strs[s] = s
	return s
}

// jsonOf keeps a jsonb value in the arena and returns its span. In
// binary a version byte (1) leads the text; JSON text never starts so.
func (d *pathDecoder) jsonOf(v []byte) (int, int) {
	if v == nil {
		return -1, -1
	}
	if len(v) > 0 && v[0] == 1 {
		v = v[1:]
	}
	start := len(d.arena)
	d.arena = append(d.arena, v...)
	return start, len(d.arena)
}

func int4(v []byte) int { return int(int32(binary.BigEndian.Uint32(v))) }

// pgEpoch is where Postgres counts timestamps from.
var pgEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// row decodes one row's values into slot e of the path, whose first slot
// is depth from.
func (d *pathDecoder) row(vals [][]byte, path []Entry, from int) (int, error) {
	depth := int4(vals[6])
	slot := depth - from
	if slot < 0 || slot >= len(path) || path[slot].Depth == -1 {
		return slot, errf("path", ErrInvalid, "entry at depth %d does not fit a path of %d", depth, len(path)+from)
	}
	e := &path[slot]
	e.Depth = -1 // placed; set for real in finish
	copy(d.ids[slot][:], vals[3])
	if vals[4] != nil {
		copy(d.parents[slot][:], vals[4])
		d.hasPar[slot] = true
	}
	e.Seq = int64(binary.BigEndian.Uint64(vals[5]))
	e.Step = int4(vals[7])
	e.Type = d.intern(vals[8])
	if vals[9] != nil {
		e.Role = d.intern(vals[9])
	}
	var sp span
	sp.content, sp.contentEnd = d.jsonOf(vals[10])
	if vals[11] != nil {
		e.TurnID = d.intern(vals[11])
	}
	e.IdempotencyKey = string(vals[12])
	sp.meta, sp.metaEnd = d.jsonOf(vals[13])
	d.spans[slot] = sp
	e.CreatedAt = pgEpoch.Add(time.Duration(int64(binary.BigEndian.Uint64(vals[14]))) * time.Microsecond)
	return slot, nil
}

// finish writes every ID as text into one string and points the entries
// at their parts of it and of the arena.
func (d *pathDecoder) finish(path []Entry, from int) error {
	text := make([]byte, 36*len(path))
	for i := range path {
		formatUUID(text[36*i:], d.ids[i])
	}
	all := string(text)
	arena := d.arena
	for i := range path {
		e := &path[i]
		if e.Depth != -1 {
			return errf("path", ErrInvalid, "the path has a gap at depth %d", from+i)
		}
		e.ID, e.Depth = all[36*i:36*(i+1)], from+i
		switch {
		case !d.hasPar[i]:
		case i > 0 && d.parents[i] == d.ids[i-1]:
			e.ParentID = path[i-1].ID
		case i == 0:
			var b [36]byte
			formatUUID(b[:], d.parents[i])
			e.ParentID = string(b[:])
		default:
			return errf("path", ErrInvalid, "entry at depth %d is not its predecessor's child", e.Depth)
		}
		sp := d.spans[i]
		if sp.content >= 0 {
			e.Content = arena[sp.content:sp.contentEnd:sp.contentEnd]
		}
		if sp.meta >= 0 {
			e.Metadata = arena[sp.meta:sp.metaEnd:sp.metaEnd]
		}
	}
	return nil
}

// formatUUID writes id's canonical text form into b (36 bytes).
func formatUUID(b []byte, id [16]byte) {
	hex.Encode(b[0:8], id[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], id[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], id[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], id[8:10])
	b[23] = '-'
	hex.Encode(b[24:], id[10:16])
}
