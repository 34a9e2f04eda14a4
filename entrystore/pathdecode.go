package entrystore

import (
	"encoding/binary"
	"encoding/hex"
	"slices"
	"unsafe"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// The columns of a path query's rows (pathSQL, contextPathSQL), in order.
// What the caller can derive is left out or sent only where it cannot be:
// the organization is the caller's; the execution only where it is not the
// leaf's (and on the leaf's row); the parent only on a branch's first
// entry and on the entry the path is read from — every other entry's
// parent is the entry before it on the path, as a branch is linear. The
// rows that send a parent also send the path's length (colSize), which
// lets the decoder allocate the path before the last row is in.
const (
	colExecution = iota
	colID
	colParent
	colSeq
	colDepth
	colStep
	colType
	colRole
	colContent
	colTurn
	colKey
	colMetadata
	colCreatedAt
	colSize
)

// pathColumns are the binary types pathDecoder reads the columns as.
var pathColumns = []uint32{
	pgtype.UUIDOID, pgtype.UUIDOID, pgtype.UUIDOID, pgtype.Int8OID, pgtype.Int4OID, pgtype.Int4OID,
	pgtype.TextOID, pgtype.TextOID, pgtype.JSONOID, pgtype.TextOID, pgtype.TextOID, pgtype.JSONOID,
	pgtype.TimestamptzOID, pgtype.Int4OID,
}

// binaryPath reports whether a path query's rows came in the binary
// formats pathDecoder reads; else readPath scans them (scanPathRow).
func binaryPath(fds []pgconn.FieldDescription) bool {
	if len(fds) != len(pathColumns) {
		return false
	}
	for i, fd := range fds {
		// Text and json may come as text: their bytes are the value, as
		// in binary.
		textual := fd.DataTypeOID == pgtype.TextOID || fd.DataTypeOID == pgtype.JSONOID
		if fd.DataTypeOID != pathColumns[i] || (fd.Format != pgx.BinaryFormatCode && !textual) {
			return false
		}
	}
	return true
}

// pathDecoder decodes a path's rows from their binary columns. Scanning
// them one value at a time cost a string per ID, a copy per JSON value
// and a reflective call per column: a third of loading a 10,000-entry
// path. Rows come in no particular order and without the path's length,
// so each is staged first as a pathRow, which holds no pointers, its
// key and JSON values in shared buffers (all reused from read to read);
// finish then places them by depth and writes every ID as text once into
// one string for the whole path, the keys into another and the JSON
// values into one buffer (the entries' are parts of them). The few
// distinct types, roles, turns and executions are shared strings.
type pathDecoder struct {
	rows     []pathRow
	text     []byte     // the rows' IDs as text, 36 bytes each
	keys     []byte     // their idempotency keys, back to back
	json     []byte     // their contents and metadata, back to back
	execs    [][16]byte // the distinct executions sent, by index
	execIdx  map[[16]byte]int32
	parents  [][16]byte // the parents sent
	order    []int32    // by slot: the row there (finish)
	strs     []string   // interned texts, by index
	strIdx   map[string]int32
	minDepth int32
	maxDepth int32
	// path is the result, allocated as soon as a row tells its length
	// (colSize) so that this happens while rows still stream in.
	path []Entry
}

// pathRow is one row staged: texts are indexes into strs (-1 for NULL),
// the execution and parent indexes into execs and parents (-1 for not
// sent), JSON values spans of json (start -1 for NULL) and the key a
// span of keys.
type pathRow struct {
	id                     [16]byte
	seq, createdAt         int64
	depth, step            int32
	typ, role, turn        int32
	execution, parent      int32
	key, content, metadata span
}

// span is a value's place in a decoder buffer.
type span struct{ start, end int32 }

// idleDecoders keeps a few decoders' buffers between reads. Not a
// sync.Pool: a 10,000-entry read allocates enough to start a collection,
// which empties a sync.Pool, so its buffers were allocated afresh each
// time (a third of what a read allocated).
var idleDecoders = make(chan *pathDecoder, 4)

// maxIdleDecoder is the most buffer space an idle decoder keeps.
const maxIdleDecoder = 4 << 20

func newPathDecoder() *pathDecoder {
	var d *pathDecoder
	select {
	case d = <-idleDecoders:
	default:
		d = &pathDecoder{strIdx: map[string]int32{}, execIdx: map[[16]byte]int32{}}
	}
	d.minDepth, d.maxDepth = -1, -1
	return d
}

// release keeps d's buffers for another read, unless they are large or
// enough are kept. A decoder holds no pointer into what its read
// returned (the strings it interned are cleared).
func (d *pathDecoder) release() {
	if cap(d.rows)*int(unsafe.Sizeof(pathRow{}))+cap(d.text)+cap(d.keys)+cap(d.json)+4*cap(d.order) > maxIdleDecoder {
		return
	}
	d.rows, d.text, d.keys, d.json, d.order = d.rows[:0], d.text[:0], d.keys[:0], d.json[:0], d.order[:0]
	d.execs, d.parents, d.path = d.execs[:0], d.parents[:0], nil
	clear(d.strs)
	d.strs = d.strs[:0]
	clear(d.strIdx)
	clear(d.execIdx)
	select {
	case idleDecoders <- d:
	default:
	}
}

// intern returns the index of the string of b, NULL (nil) -1.
func (d *pathDecoder) intern(b []byte, last int32) int32 {
	if b == nil {
		return -1
	}
	if last >= 0 && d.strs[last] == string(b) {
		return last
	}
	if i, ok := d.strIdx[string(b)]; ok {
		return i
	}
	s := string(b)
	d.strs = append(d.strs, s)
	d.strIdx[s] = int32(len(d.strs) - 1)
	return int32(len(d.strs) - 1)
}

// execution returns the index of a sent execution in execs, -1 for NULL.
func (d *pathDecoder) execution(b []byte, last int32) int32 {
	if b == nil {
		return -1
	}
	var u [16]byte
	copy(u[:], b)
	if last >= 0 && d.execs[last] == u {
		return last
	}
	if i, ok := d.execIdx[u]; ok {
		return i
	}
	d.execs = append(d.execs, u)
	d.execIdx[u] = int32(len(d.execs) - 1)
	return int32(len(d.execs) - 1)
}

// parent keeps a sent parent in parents and returns its index, -1 for NULL.
func (d *pathDecoder) parent(b []byte) int32 {
	if b == nil {
		return -1
	}
	var u [16]byte
	copy(u[:], b)
	d.parents = append(d.parents, u)
	return int32(len(d.parents) - 1)
}

// jsonOf keeps a json value in json and returns its span: a json
// column's value is its text, in binary as in text format.
func (d *pathDecoder) jsonOf(v []byte) span {
	if v == nil {
		return span{start: -1}
	}
	start := len(d.json)
	d.json = append(d.json, v...)
	return span{int32(start), int32(len(d.json))}
}

func int4(v []byte) int32 { return int32(binary.BigEndian.Uint32(v)) }

func bigint(v []byte) int64 { return int64(binary.BigEndian.Uint64(v)) }

// row stages one row's values.
func (d *pathDecoder) row(vals [][]byte) {
	var r pathRow
	copy(r.id[:], vals[colID])
	n := len(d.text)
	d.text = slices.Grow(d.text, 36)[:n+36]
	formatUUID(d.text[n:], r.id)
	r.seq = bigint(vals[colSeq])
	r.depth = int4(vals[colDepth])
	r.step = int4(vals[colStep])
	var lastType, lastRole, lastTurn, lastExec int32 = -1, -1, -1, -1
	if n := len(d.rows); n > 0 {
		p := &d.rows[n-1]
		lastType, lastRole, lastTurn, lastExec = p.typ, p.role, p.turn, p.execution
	}
	r.typ = d.intern(vals[colType], lastType)
	r.role = d.intern(vals[colRole], lastRole)
	r.turn = d.intern(vals[colTurn], lastTurn)
	r.execution = d.execution(vals[colExecution], lastExec)
	r.parent = d.parent(vals[colParent])
	r.content = d.jsonOf(vals[colContent])
	r.metadata = d.jsonOf(vals[colMetadata])
	r.key.start = int32(len(d.keys))
	d.keys = append(d.keys, vals[colKey]...)
	r.key.end = int32(len(d.keys))
	r.createdAt = bigint(vals[colCreatedAt])
	if d.minDepth < 0 || r.depth < d.minDepth {
		d.minDepth = r.depth
	}
	d.maxDepth = max(d.maxDepth, r.depth)
	d.rows = append(d.rows, r)
	if d.path == nil && vals[colSize] != nil {
		if n := int4(vals[colSize]); n > 0 && n <= maxPathHint {
			d.path = make([]Entry, n)
		}
	}
}

// maxPathHint bounds the length a row may make the decoder allocate
// before the rows are counted.
const maxPathHint = 1 << 22

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

// uuidString is id's canonical text form.
func uuidString(id [16]byte) string {
	var b [36]byte
	formatUUID(b[:], id)
	return string(b[:])
}
