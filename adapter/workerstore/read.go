package workerstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/internal/domain"
)

// The reads below serve a worker-held execution's conversation to the API (the
// adapter answers the gateway's queries with them): the same lists, in
// the same orders, as the Postgres store's, paged by keyset.

// Stored is an entry with what the store adds: its arrival number, its
// step (seed 001's step number) and when it was written.
type Stored struct {
	agentsdk.Entry
	Seq       int64
	Step      int
	CreatedAt time.Time
}

const storedCols = `rowid, ` + entryCols + `, step, created_at`

func scanStored(row interface{ Scan(...any) error }) (Stored, error) {
	var e Stored
	var content, meta []byte
	var at string
	err := row.Scan(&e.Seq, &e.ID, &e.ExecutionID, &e.ParentID, &e.Depth, &e.Type, &e.Role, &content, &e.TurnID, &meta, &e.IdempotencyKey, &e.Step, &at)
	e.Content, e.Metadata, e.CreatedAt = content, meta, parseTime(at)
	return e, err
}

// collect reads every row of a query with scan.
func collect[T any](scan func(interface{ Scan(...any) error }) (T, error)) func(*sql.Rows, error) ([]T, error) {
	return func(rows *sql.Rows, err error) ([]T, error) {
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var out []T
		for rows.Next() {
			v, err := scan(rows)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, rows.Err()
	}
}

// more cuts a page read with one row past limit.
func more[T any](rows []T, limit int) ([]T, bool) {
	if len(rows) > limit {
		return rows[:limit], true
	}
	return rows, false
}

// Entries is a page of the execution's entries in arrival order, after
// the entry numbered after (0: from the first), and whether more follow.
func (s *Store) Entries(ctx context.Context, orgID, executionID string, after int64, limit int) ([]Stored, bool, error) {
	rows, err := collect(scanStored)(s.db.QueryContext(ctx, `SELECT `+storedCols+` FROM entry WHERE execution = ? AND org = ? AND rowid > ?
		ORDER BY rowid LIMIT ?`, executionID, orgID, after, limit+1))
	if err != nil {
		return nil, false, wrap("entries", err)
	}
	out, m := more(rows, limit)
	return out, m, nil
}

// Entry reads one entry with what the store adds.
func (s *Store) Entry(ctx context.Context, orgID, id string) (Stored, error) {
	e, err := scanStored(s.db.QueryRowContext(ctx, `SELECT `+storedCols+` FROM entry WHERE id = ? AND org = ?`, id, orgID))
	return e, notFound("entry "+id, err)
}

// StoredPath is the path from the root to leafID, root first.
func (s *Store) StoredPath(ctx context.Context, orgID, leafID string) ([]Stored, error) {
	return s.pathPage(ctx, orgID, leafID, -1, -1, "")
}

// PathPage is a page of the path from the root to leafID, an entry of
// executionID: its entries of entryType ("" for any) deeper than
// afterDepth, root first, at most limit, and whether more follow.
func (s *Store) PathPage(ctx context.Context, orgID, executionID, leafID string, afterDepth, limit int, entryType string) ([]Stored, bool, error) {
	leaf, err := s.Entry(ctx, orgID, leafID)
	if err != nil {
		return nil, false, err
	}
	if leaf.ExecutionID != executionID {
		return nil, false, fmt.Errorf("workerstore: path page: leaf %s: %w", leafID, agentsdk.ErrNotFound)
	}
	page, err := s.pathPage(ctx, orgID, leafID, afterDepth, limit+1, entryType)
	if err != nil {
		return nil, false, err
	}
	out, m := more(page, limit)
	return out, m, nil
}

// pathPage walks up from leafID and keeps the entries deeper than
// afterDepth of entryType, at most limit (-1: all).
func (s *Store) pathPage(ctx context.Context, orgID, leafID string, afterDepth, limit int, entryType string) ([]Stored, error) {
	rows, err := collect(scanStored)(s.db.QueryContext(ctx, `
		WITH RECURSIVE up(id) AS (
			SELECT id FROM entry WHERE id = ? AND org = ?
			UNION ALL
			SELECT e.parent FROM entry e JOIN up ON e.id = up.id WHERE e.parent IS NOT NULL
		)
		SELECT `+storedCols+` FROM entry WHERE id IN (SELECT id FROM up) AND depth > ? AND (? = '' OR type = ?)
		ORDER BY depth LIMIT ?`, leafID, orgID, afterDepth, entryType, entryType, limit))
	if err != nil {
		return nil, wrap("path", err)
	}
	return rows, nil
}

// Leaf is the entry the execution appended last ("" before its first):
// the end of its active path, as the execution's row names it for an
// execution in Postgres.
func (s *Store) Leaf(ctx context.Context, executionID string) (string, error) {
	var id string
	err := s.db.QueryRowContext(ctx, `SELECT id FROM entry WHERE execution = ? ORDER BY rowid DESC LIMIT 1`, executionID).Scan(&id)
	if err == sql.ErrNoRows {
		return "", nil
	}
	return id, wrap("leaf", err)
}

const checkpointCols = `org, execution, seq, leaf, state, metadata, created_at`

func scanCheckpoint(row interface{ Scan(...any) error }) (domain.Checkpoint, error) {
	var c domain.Checkpoint
	var state, meta []byte
	var at string
	err := row.Scan(&c.OrgID, &c.ExecutionID, &c.Sequence, &c.LeafEntryID, &state, &meta, &at)
	c.State, c.Metadata, c.CreatedAt = state, meta, parseTime(at)
	return c, err
}

// Checkpoints is a page of the execution's checkpoints by sequence, after
// sequence after (-1: from the first), and whether more follow.
func (s *Store) Checkpoints(ctx context.Context, executionID string, after, limit int) ([]domain.Checkpoint, bool, error) {
	rows, err := collect(scanCheckpoint)(s.db.QueryContext(ctx, `SELECT `+checkpointCols+` FROM checkpoint WHERE execution = ? AND seq > ?
		ORDER BY seq LIMIT ?`, executionID, after, limit+1))
	if err != nil {
		return nil, false, wrap("checkpoints", err)
	}
	out, m := more(rows, limit)
	return out, m, nil
}

// LatestCheckpoint is the execution's highest-sequence checkpoint.
func (s *Store) LatestCheckpoint(ctx context.Context, executionID string) (domain.Checkpoint, error) {
	c, err := scanCheckpoint(s.db.QueryRowContext(ctx, `SELECT `+checkpointCols+` FROM checkpoint WHERE execution = ?
		ORDER BY seq DESC LIMIT 1`, executionID))
	return c, notFound("latest checkpoint", err)
}

// StoredCall is a tool call's record with what the store adds.
type StoredCall struct {
	agentsdk.ToolCallRecord
	Seq                  int64
	CreatedAt, UpdatedAt time.Time
}

func scanCall(row interface{ Scan(...any) error }) (StoredCall, error) {
	var c StoredCall
	var b []byte
	var created, updated string
	if err := row.Scan(&c.Seq, &b, &created, &updated); err != nil {
		return c, err
	}
	c.CreatedAt, c.UpdatedAt = parseTime(created), parseTime(updated)
	return c, json.Unmarshal(b, &c.ToolCallRecord)
}

// CallCursor is a position in ToolCalls: the last call's step and
// arrival number.
type CallCursor struct {
	Step int   `json:"s"`
	Seq  int64 `json:"n"`
}

// ToolCalls is a page of the execution's tool calls by step number, then
// arrival, after cur (nil: from the first), of toolName and status when
// given, and whether more follow.
func (s *Store) ToolCalls(ctx context.Context, executionID, toolName, status string, cur *CallCursor, limit int) ([]StoredCall, bool, error) {
	after := CallCursor{Step: -1}
	if cur != nil {
		after = *cur
	}
	rows, err := collect(scanCall)(s.db.QueryContext(ctx, `SELECT rowid, record, created_at, updated_at FROM tool_call
		WHERE execution = ? AND (? = '' OR json_extract(record, '$.ToolName') = ?) AND (? = '' OR status = ?)
		  AND (json_extract(record, '$.StepNumber'), rowid) > (?, ?)
		ORDER BY json_extract(record, '$.StepNumber'), rowid LIMIT ?`,
		executionID, toolName, toolName, status, status, after.Step, after.Seq, limit+1))
	if err != nil {
		return nil, false, wrap("tool calls", err)
	}
	out, m := more(rows, limit)
	return out, m, nil
}

// LatestToolCall is the newest record of the execution with the model's
// tool call ID.
func (s *Store) LatestToolCall(ctx context.Context, executionID, toolCallID string) (StoredCall, error) {
	c, err := scanCall(s.db.QueryRowContext(ctx, `SELECT rowid, record, created_at, updated_at FROM tool_call
		WHERE execution = ? AND tool_call_id = ? ORDER BY rowid DESC LIMIT 1`, executionID, toolCallID))
	return c, notFound("tool call "+toolCallID, err)
}

// ModelCallEntries are the execution's entries that record a model call
// (ModelCalls counts them), in arrival order.
func (s *Store) ModelCallEntries(ctx context.Context, executionID string) ([]Stored, error) {
	rows, err := collect(scanStored)(s.db.QueryContext(ctx, `SELECT `+storedCols+` FROM entry WHERE execution = ? AND (type = 'llm_call'
		OR (type = 'message' AND role = 'assistant' AND json_extract(metadata, '$.llmCall') IS NOT NULL)) ORDER BY rowid`, executionID))
	return rows, wrap("model calls", err)
}
