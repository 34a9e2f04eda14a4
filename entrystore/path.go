package entrystore

import (
	"context"
	"sync/atomic"

	"github.com/google/uuid"
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
// checked on append to be of the entry's execution or the one it resumes
// or forks, all of one organization, so scoping the leaf to the
// organization scopes the path; each entry keeps its own execution.
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

// readPath runs query, a path query with pathColumns, and builds the path
// from its rows (pathDecoder).
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
	d := newPathDecoder()
	defer d.release()
	if binaryPath(rows.FieldDescriptions()) {
		decodedPaths.Add(1)
		for rows.Next() {
			d.row(rows.RawValues())
		}
	} else {
		for rows.Next() {
			vals, err := scanPathRow(rows)
			if err != nil {
				return nil, wrap(op, err)
			}
			d.row(vals)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, wrap(op, err)
	}
	path, err := d.finish(ids[0], uuid.MustParse(ids[1]))
	return path, wrap(op, err)
}

// pathCols is the select list of a path query (pathColumns) over the
// agent_entry rows e of the path of leaf $2, read from depth from (an SQL
// expression; "" for the root). Columns go out in binary and uncast: text
// conversion of 10,000 rows cost as much as reading them. Each column a
// row sends costs the server a conversion, so what the caller can derive
// is NULL (sent as a length alone): the execution on entries of the
// leaf's, and the parent on entries inside a branch, which continue the
// entry before them (the first entry read's parent is sent). The rows
// that send a parent also send the path's length, so the decoder
// allocates the result while rows still stream in (the first row is
// usually one of them).
func pathCols(from string) string {
	first, size := "e.id = e.branch_id", "(SELECT max(max_depth) FROM seg) + 1"
	if from != "" {
		first += " OR e.depth = " + from
		size += " - " + from
	}
	return `CASE WHEN e.id = $2 OR e.agent_execution_id <> (SELECT agent_execution_id FROM agent_entry WHERE id = $2)
			THEN e.agent_execution_id END,
		e.id, CASE WHEN ` + first + ` THEN e.parent_id END, e.seq, e.depth, e.step, e.entry_type, e.role,
		e.content, e.turn_id, e.idempotency_key, e.metadata, e.created_at,
		CASE WHEN ` + first + ` THEN ` + size + ` END`
}

// pathBranchesSQL is seg: the branches of the path from the root to entry
// $2 of org $1, each with the deepest depth the path takes from it — one
// index probe per branch, never the path's entries.
const pathBranchesSQL = `
	WITH RECURSIVE seg (branch_id, max_depth) AS (
		SELECT branch_id, depth FROM agent_entry WHERE id = $2 AND org_id = $1
		UNION ALL
		SELECT p.branch_id, p.depth
		FROM seg
		JOIN agent_entry h ON h.id = seg.branch_id
		JOIN agent_entry p ON p.id = h.parent_id
	)`

// pathSQL walks branch by branch and reads each branch's share as an index
// range. It has no ORDER BY: sorting 10,000 wide rows spilled past work_mem
// and tripled the query's time, and Path places rows by depth anyway.
var pathSQL = pathBranchesSQL + `
	SELECT ` + pathCols("") + `
	FROM seg JOIN agent_entry e ON e.branch_id = seg.branch_id AND e.depth <= seg.max_depth
	WHERE e.org_id = $1`

// contextPathSQL is pathSQL from the latest compaction's first kept
// entry: the compaction is the deepest compaction entry of the path's
// branches (each an index probe of agent_entry_compaction), and the
// branches are then read from its firstKeptDepth only.
var contextPathSQL = pathBranchesSQL + `,
	kept (depth) AS MATERIALIZED (
		SELECT coalesce((
			SELECT (c.content->>'firstKeptDepth')::int
			FROM seg CROSS JOIN LATERAL (
				SELECT content, depth FROM agent_entry
				WHERE branch_id = seg.branch_id AND depth <= seg.max_depth AND entry_type = 'compaction'
					AND content->'skipped' IS NULL
				ORDER BY depth DESC LIMIT 1
			) c
			ORDER BY c.depth DESC LIMIT 1
		), 0)
	)
	SELECT ` + pathCols("kept.depth") + `
	FROM kept, seg CROSS JOIN LATERAL (
		SELECT * FROM agent_entry
		WHERE branch_id = seg.branch_id AND depth BETWEEN kept.depth AND seg.max_depth AND org_id = $1
		OFFSET 0
	) e`

// PathPage returns one page of the path from the root to leafID: the
// entries of type entryType ("" for any) deeper than afterDepth, root
// first, at most limit (MaxPageLimit at most) and, when bytes is positive,
// within bytes of stored data (as Page.Bytes), and whether more follow.
// Depth is a position on the path, so it is the cursor: the next page
// starts after the last entry's depth, and the path never changes under it (entries are immutable). It
// reads only the page — each branch of the path (one per fork on the way
// up) at most limit entries of it — never the whole path. The leaf must be
// an entry of executionID, else ErrNotFound.
func (s *Store) PathPage(ctx context.Context, orgID, executionID, leafID string, afterDepth, limit, bytes int, entryType string) ([]Entry, bool, error) {
	op := "path page " + leafID
	ids, err := readIDs(op, orgID, executionID, leafID)
	if err != nil {
		return nil, false, err
	}
	p := Page{Limit: limit, Bytes: bytes}
	// One more than the page tells whether another follows.
	es, next, err := listPage(ctx, s.pool, p, scanEntry, func(e Entry) keyset { return keyset{N: int64(e.Depth)} },
		pathPageSQL, ids[0], ids[1], ids[2], afterDepth, p.limit()+1, entryType)
	if err != nil {
		return nil, false, wrap(op, err)
	}
	if len(es) > 0 {
		return es, next != "", nil
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

// decodedPaths counts the paths read from binary rows (its tests check
// the binary path is the one taken).
var decodedPaths atomic.Int64
