package entrystore

import (
	"context"
	"sync/atomic"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// Path returns the entries from the root down to leafID — the conversation a
// model call sees — in one round trip, root first.
//
// A row-by-row recursive walk over (id, parent_id) cost 15-20 ms of
// server time alone for 10,000 entries (93 ms end to end), so entries carry
// branch_id instead: a branch is a linear run of first children, one entry
// per depth. The recursive part hops only from branch to branch (once per
// fork on the way up, through the covering index
// agent_entry_walk); each branch's share of the path is then one range of
// agent_entry_branch: depth up to where the path leaves it. Parents are
// checked on append to share the leaf's execution, so scoping the leaf to
// the organization scopes the path.
func (s *Store) Path(ctx context.Context, orgID, leafID string) ([]Entry, error) {
	return s.readPath(ctx, "path "+leafID, pathSQL, orgID, leafID)
}

// ContextPath returns the part of the path to leafID a model's context
// needs: from the first entry the latest compaction on the path kept down
// to leafID (the whole path when there is none), root first. However long
// the conversation, a model call then reads only what it sends. The
// latest compaction is found through the partial index
// agent_entry_compaction, one probe per branch of the path.
func (s *Store) ContextPath(ctx context.Context, orgID, leafID string) ([]Entry, error) {
	return s.readPath(ctx, "context path "+leafID, contextPathSQL, orgID, leafID)
}

// readPath runs query, a path query whose rows start with the leaf's
// depth and the depth the path is read from, and places its rows by depth.
func (s *Store) readPath(ctx context.Context, op, query, orgID, leafID string) ([]Entry, error) {
	ids, err := readIDs(op, orgID, leafID)
	if err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, query, ids[0], ids[1])
	if err != nil {
		return nil, wrap(op, err)
	}
	defer rows.Close()
	if binaryPath(rows.FieldDescriptions()) {
		return decodePath(op, rows, ids[0])
	}
	var path []Entry
	var leafDepth, from int
	var executionID string
	var execution, id, parent pgtype.UUID
	var role, turn pgtype.Text
	for rows.Next() {
		var e Entry
		err := rows.Scan(&leafDepth, &from, &execution, &id, &parent, &e.Seq, &e.Depth, &e.Step, &e.Type, &role,
			(*[]byte)(&e.Content), &turn, &e.IdempotencyKey, (*[]byte)(&e.Metadata), &e.CreatedAt)
		if err != nil {
			return nil, wrap(op, err)
		}
		if path == nil {
			if from < 0 || from > leafDepth {
				return nil, errf(op, ErrInvalid, "path read from depth %d of %d", from, leafDepth+1)
			}
			path = make([]Entry, leafDepth+1-from)
			executionID = uuid.UUID(execution.Bytes).String()
		}
		// Depths on a path are exactly from..leafDepth, so each row has its slot.
		if e.Depth < from || e.Depth > leafDepth || path[e.Depth-from].ID != "" {
			return nil, errf(op, ErrInvalid, "entry at depth %d does not fit a path of %d", e.Depth, leafDepth+1)
		}
		e.ID = uuid.UUID(id.Bytes).String()
		if parent.Valid {
			e.ParentID = uuid.UUID(parent.Bytes).String()
		}
		e.OrgID, e.ExecutionID, e.Role, e.TurnID = ids[0], executionID, role.String, turn.String
		e.CreatedAt = e.CreatedAt.UTC()
		path[e.Depth-from] = e
	}
	if err := rows.Err(); err != nil {
		return nil, wrap(op, err)
	}
	if path == nil {
		return nil, wrap(op, ErrNotFound)
	}
	for _, e := range path {
		if e.ID == "" {
			return nil, errf(op, ErrInvalid, "path to %s has a gap", leafID)
		}
	}
	return path, nil
}

// pathSQL walks branch by branch and reads each branch's share as an index
// range. It has no ORDER BY: sorting 10,000 wide rows spilled past work_mem
// and tripled the query's time, and Path places rows by depth anyway. The
// leaf's depth comes first on every row so Path can size its slice once.
// Columns go out in binary and uncast (the org, the caller's, not at all):
// text conversion of 10,000 rows cost as much as reading them.
var pathSQL = `
	WITH RECURSIVE seg (branch_id, max_depth) AS (
		SELECT branch_id, depth FROM agent_entry WHERE id = $2 AND org_id = $1
		UNION ALL
		SELECT p.branch_id, p.depth
		FROM seg
		JOIN agent_entry h ON h.id = seg.branch_id
		JOIN agent_entry p ON p.id = h.parent_id
	)
	SELECT (SELECT max(max_depth) FROM seg), 0, e.agent_execution_id, e.id, e.parent_id, e.seq, e.depth, e.step, e.entry_type, e.role,
		e.content, e.turn_id, e.idempotency_key, e.metadata, e.created_at
	FROM seg JOIN agent_entry e ON e.branch_id = seg.branch_id AND e.depth <= seg.max_depth
	WHERE e.org_id = $1`

// contextPathSQL is pathSQL from the latest compaction's first kept
// entry: the compaction is the deepest compaction entry of the path's
// branches (each an index probe of agent_entry_compaction), and the
// branches are then read from its firstKeptDepth only.
var contextPathSQL = `
	WITH RECURSIVE seg (branch_id, max_depth) AS (
		SELECT branch_id, depth FROM agent_entry WHERE id = $2 AND org_id = $1
		UNION ALL
		SELECT p.branch_id, p.depth
		FROM seg
		JOIN agent_entry h ON h.id = seg.branch_id
		JOIN agent_entry p ON p.id = h.parent_id
	),
	kept (depth) AS MATERIALIZED (
		SELECT coalesce((
			SELECT (c.content->>'firstKeptDepth')::int
			FROM seg CROSS JOIN LATERAL (
				SELECT content, depth FROM agent_entry
				WHERE branch_id = seg.branch_id AND depth <= seg.max_depth AND entry_type = 'compaction'
					AND NOT content ? 'skipped'
				ORDER BY depth DESC LIMIT 1
			) c
			ORDER BY c.depth DESC LIMIT 1
		), 0)
	)
	SELECT (SELECT max(max_depth) FROM seg), kept.depth, e.agent_execution_id, e.id, e.parent_id, e.seq, e.depth, e.step, e.entry_type, e.role,
		e.content, e.turn_id, e.idempotency_key, e.metadata, e.created_at
	FROM kept, seg CROSS JOIN LATERAL (
		SELECT * FROM agent_entry
		WHERE branch_id = seg.branch_id AND depth BETWEEN kept.depth AND seg.max_depth AND org_id = $1
		OFFSET 0
	) e`

// PathPage returns one page of the path from the root to leafID: the
// entries of type entryType ("" for any) deeper than afterDepth, root
// first, at most limit (MaxPageLimit at most), and whether more follow.
// Depth is a position on the path, so it is the cursor: the next page
// starts after the last entry's depth, and the path never changes under it (entries are immutable). It
// reads only the page — each branch of the path (one per fork on the way
// up) at most limit entries of it — never the whole path. The leaf must be
// an entry of executionID, else ErrNotFound.
func (s *Store) PathPage(ctx context.Context, orgID, executionID, leafID string, afterDepth, limit int, entryType string) ([]Entry, bool, error) {
	op := "path page " + leafID
	ids, err := readIDs(op, orgID, executionID, leafID)
	if err != nil {
		return nil, false, err
	}
	limit = Page{Limit: limit}.limit()
	// One more than the page tells whether another follows.
	es, err := queryEntries(ctx, s.pool, pathPageSQL, ids[0], ids[1], ids[2], afterDepth, limit+1, entryType)
	if err != nil {
		return nil, false, wrap(op, err)
	}
	if len(es) > limit {
		return es[:limit], true, nil
	}
	if len(es) > 0 {
		return es, false, nil
	}
	var ok bool
	err = s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM agent_entry WHERE id = $3 AND org_id = $1 AND agent_execution_id = $2)`,
		ids[0], ids[1], ids[2]).Scan(&ok)
	if err != nil {
		return nil, false, wrap(op, err)
	}
	if !ok {
		return nil, false, wrap(op, ErrNotFound)
	}
	return nil, false, nil
}

// pathPageSQL walks branch by branch as pathSQL does, then reads at most a
// page from each branch's share of the path (an ordered range of
// agent_entry_branch) and keeps the first page of those.
var pathPageSQL = `
	WITH RECURSIVE seg (branch_id, max_depth) AS (
		SELECT branch_id, depth FROM agent_entry WHERE id = $3 AND org_id = $1 AND agent_execution_id = $2
		UNION ALL
		SELECT p.branch_id, p.depth
		FROM seg
		JOIN agent_entry h ON h.id = seg.branch_id
		JOIN agent_entry p ON p.id = h.parent_id
	)
	SELECT page.* FROM seg CROSS JOIN LATERAL (
		SELECT ` + entryColsOf("e") + `
		FROM agent_entry e
		WHERE e.branch_id = seg.branch_id AND e.depth > $4 AND e.depth <= seg.max_depth AND e.org_id = $1
		  AND ($6 = '' OR e.entry_type = $6)
		ORDER BY e.depth LIMIT $5
	) page
	ORDER BY page.depth LIMIT $5`

// decodedPaths counts the paths decodePath read (its tests check the
// binary path is the one taken).
var decodedPaths atomic.Int64

// decodePath is readPath's loop over rows in binary (pathDecoder).
func decodePath(op string, rows pgx.Rows, orgID string) ([]Entry, error) {
	decodedPaths.Add(1)
	var path []Entry
	var d *pathDecoder
	var from int
	var executionID string
	for rows.Next() {
		vals := rows.RawValues()
		if path == nil {
			leafDepth := int4(vals[0])
			from = int4(vals[1])
			if from < 0 || from > leafDepth {
				return nil, errf(op, ErrInvalid, "path read from depth %d of %d", from, leafDepth+1)
			}
			path = make([]Entry, leafDepth+1-from)
			d = newPathDecoder(len(path))
			var ex [16]byte
			copy(ex[:], vals[2])
			var b [36]byte
			formatUUID(b[:], ex)
			executionID = string(b[:])
		}
		if _, err := d.row(vals, path, from); err != nil {
			return nil, wrap(op, err)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, wrap(op, err)
	}
	if path == nil {
		return nil, wrap(op, ErrNotFound)
	}
	if err := d.finish(path, from); err != nil {
		return nil, wrap(op, err)
	}
	for i := range path {
		path[i].OrgID, path[i].ExecutionID = orgID, executionID
		path[i].CreatedAt = path[i].CreatedAt.UTC()
	}
	return path, nil
}
