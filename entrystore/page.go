package entrystore

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// Page sizes: a zero Limit means DefaultPageLimit; anything above
// MaxPageLimit is clamped so one request cannot pull a whole table.
const (
	DefaultPageLimit = 50
	MaxPageLimit     = 500
)

// Page asks for one page of a list. Cursor is the nextCursor of the previous
// page ("" for the first); it is opaque to callers. Bytes, when positive,
// also ends the page before the row that would take its rows' stored
// bytes (every column as Postgres sends it) past Bytes; the first row
// comes whatever its size, so a page always moves on. A list of rows up to
// ~1 MiB each would otherwise hold MaxPageLimit of them in memory at once
// (issue 36).
type Page struct {
	Limit  int
	Cursor string
	Bytes  int
}

func (p Page) limit() int {
	switch {
	case p.Limit <= 0:
		return DefaultPageLimit
	case p.Limit > MaxPageLimit:
		return MaxPageLimit
	}
	return p.Limit
}

// keyset is the position after the last row of a page, in the list's sort
// columns. Lists use keyset pagination, never OFFSET, so rows inserted while
// a client pages neither repeat nor shift what it has yet to see.
type keyset struct {
	T  time.Time `json:"t,omitzero"`
	N  int64     `json:"n,omitempty"`
	ID string    `json:"id,omitempty"`
}

func (k keyset) encode() string {
	b, _ := json.Marshal(k) // a struct of plain fields cannot fail
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeCursor parses a cursor; needID says the list's keyset ends in a row
// ID. The zero keyset stands for "from the start" when cursor is "".
func decodeCursor(op, cursor string, needID bool) (keyset, bool, error) {
	if cursor == "" {
		return keyset{}, false, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return keyset{}, false, errf(op, ErrInvalid, "bad cursor")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var k keyset
	if err := dec.Decode(&k); err != nil {
		return keyset{}, false, errf(op, ErrInvalid, "bad cursor")
	}
	if needID {
		id, ok := parseID(k.ID)
		if !ok {
			return keyset{}, false, errf(op, ErrInvalid, "bad cursor")
		}
		k.ID = id
	}
	return k, true, nil
}

// listStart validates a list's scope IDs (a malformed one names nothing, so
// ErrNotFound) and its cursor: the preamble every list shares.
func listStart(op string, p Page, needID bool, scope ...string) ([]string, keyset, bool, error) {
	ids, err := readIDs(op, scope...)
	if err != nil {
		return nil, keyset{}, false, err
	}
	k, after, err := decodeCursor(op, p.Cursor, needID)
	return ids, k, after, err
}

// listPage runs sql, a list query asking for p.limit()+1 rows, and keeps
// what fits the page: at most p.limit() rows and, with p.Bytes, the rows
// within that many stored bytes. The cursor is key's of the last row kept,
// "" when no row was left out. Rows past the page are drained off the
// connection one at a time, never decoded or kept, so a page holds at most
// its budget and one row in memory.
func listPage[T any](ctx context.Context, q querier, p Page, scan pgx.RowToFunc[T], key func(T) keyset, sql string, args ...any) ([]T, string, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, "", err
	}
	defer rows.Close()
	limit := p.limit()
	var out []T
	used := 0
	for rows.Next() {
		size := 0
		for _, v := range rows.RawValues() {
			size += len(v)
		}
		if len(out) == limit || (p.Bytes > 0 && len(out) > 0 && used+size > p.Bytes) {
			rows.Close()
			return out, key(out[len(out)-1]).encode(), nil
		}
		v, err := scan(rows)
		if err != nil {
			return nil, "", err
		}
		out = append(out, v)
		used += size
	}
	return out, "", rows.Err()
}

// listOldestFirst pages through one organization's rows of table (cols its
// columns, T their struct), oldest first by (created_at, id): the lists
// of definitions and of API keys.
func listOldestFirst[T any](ctx context.Context, q querier, op, table, cols, orgID string, p Page, key func(T) keyset) ([]T, string, error) {
	ids, k, after, err := listStart(op, p, true, orgID)
	if err != nil {
		return nil, "", err
	}
	var w where
	w.and("org_id = ?", ids[0])
	if after {
		w.and("(created_at, id) > (?, ?::uuid)", k.T, k.ID)
	}
	rows, next, err := listPage(ctx, q, p, pgx.RowToStructByName[T], key,
		`SELECT `+cols+` FROM `+table+` WHERE `+w.String()+` ORDER BY created_at, id LIMIT `+w.param(p.limit()+1), w.args...)
	if err != nil {
		return nil, "", wrap(op, err)
	}
	return rows, next, nil
}

// where builds the WHERE clause of a list query from optional filters, so
// each filter combination gets its own (index-friendly) statement instead of
// "$n = ” OR col = $n" guards a generic plan cannot use.
type where struct {
	conds []string
	args  []any
}

// and adds a condition; each "?" in cond takes the next of args.
func (w *where) and(cond string, args ...any) {
	for _, a := range args {
		w.args = append(w.args, a)
		cond = strings.Replace(cond, "?", "$"+strconv.Itoa(len(w.args)), 1)
	}
	w.conds = append(w.conds, cond)
}

// status adds col = st when st is set, refusing a status that is none.
func (w *where) status(op, col string, st Status) error {
	if st == "" {
		return nil
	}
	if !st.Valid() {
		return errf(op, ErrInvalid, "status %q", st)
	}
	w.and(col+" = ?", string(st))
	return nil
}

// definition adds col = id when id is set, refusing a malformed one.
func (w *where) definition(op, col, id string) error {
	if id == "" {
		return nil
	}
	v, ok := parseID(id)
	if !ok {
		return errf(op, ErrInvalid, "malformed definition id %q", id)
	}
	w.and(col+" = ?", v)
	return nil
}

// param adds a bare parameter (a LIMIT, say) and returns its placeholder.
func (w *where) param(v any) string {
	w.args = append(w.args, v)
	return "$" + strconv.Itoa(len(w.args))
}

func (w *where) String() string { return strings.Join(w.conds, " AND ") }
