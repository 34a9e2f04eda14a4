package entrystore

import (
	"slices"
	"strings"
	"time"
)

// pgEpoch is where Postgres counts timestamps from.
var pgEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// finish places the staged rows by depth and builds the path of leaf,
// after checking they are one: a row per depth from the shallowest to the
// deepest, the deepest the leaf (its row names its execution), and every
// parent sent the entry before it — the first entry's, when it is not the
// root, sent — so a walk that lost or mixed up a branch fails here.
func (d *pathDecoder) finish(orgID string, leaf [16]byte) ([]Entry, error) {
	n := len(d.rows)
	if n == 0 {
		return nil, ErrNotFound
	}
	if int(d.maxDepth-d.minDepth)+1 != n {
		return nil, errf("path", ErrInvalid, "%d entries for depths %d to %d", n, d.minDepth, d.maxDepth)
	}
	d.order = slices.Grow(d.order[:0], n)[:n]
	for i := range d.order {
		d.order[i] = -1
	}
	for i := range d.rows {
		slot := d.rows[i].depth - d.minDepth
		if d.order[slot] >= 0 {
			return nil, errf("path", ErrInvalid, "two entries at depth %d", d.rows[i].depth)
		}
		d.order[slot] = int32(i)
	}
	last := &d.rows[d.order[n-1]]
	if last.id != leaf || last.execution < 0 {
		return nil, errf("path", ErrInvalid, "the path does not end at its leaf")
	}
	execs := make([]string, len(d.execs))
	execution := func(i int32) string {
		if execs[i] == "" {
			execs[i] = uuidString(d.execs[i])
		}
		return execs[i]
	}
	leafExecution := execution(last.execution)

	// Every ID as text into one string, the keys into another, the JSON
	// values into one buffer.
	var ids strings.Builder
	ids.Grow(36 * n)
	for _, k := range d.order {
		ids.Write(d.text[36*k : 36*k+36])
	}
	allIDs, keys, json := ids.String(), string(d.keys), slices.Clone(d.json)

	path := d.path
	if len(path) != n {
		path = make([]Entry, n)
	}
	for i, k := range d.order {
		r := &d.rows[k]
		e := Entry{ID: allIDs[36*i : 36*(i+1)], OrgID: orgID, ExecutionID: leafExecution,
			Seq: r.seq, Depth: int(r.depth), Step: int(r.step),
			Type: d.str(r.typ), Role: d.str(r.role), TurnID: d.str(r.turn),
			Content: r.content.of(json), Metadata: r.metadata.of(json), IdempotencyKey: keys[r.key.start:r.key.end],
			CreatedAt: pgEpoch.Add(time.Duration(r.createdAt) * time.Microsecond).UTC()}
		if r.execution >= 0 {
			e.ExecutionID = execution(r.execution)
		}
		switch {
		case i > 0:
			if r.parent >= 0 && d.parents[r.parent] != d.rows[d.order[i-1]].id {
				return nil, errf("path", ErrInvalid, "entry at depth %d is not its predecessor's child", r.depth)
			}
			e.ParentID = allIDs[36*(i-1) : 36*i]
		case r.parent >= 0 && r.depth > 0:
			e.ParentID = uuidString(d.parents[r.parent])
		case r.parent >= 0 || r.depth > 0:
			return nil, errf("path", ErrInvalid, "the path's first entry (depth %d) does not start it", r.depth)
		}
		path[i] = e
	}
	return path, nil
}

// str is the interned string i, "" for NULL.
func (d *pathDecoder) str(i int32) string {
	if i < 0 {
		return ""
	}
	return d.strs[i]
}

// of is the JSON value at s in buf, nil for NULL.
func (s span) of(buf []byte) []byte {
	if s.start < 0 {
		return nil
	}
	return buf[s.start:s.end:s.end]
}
