package workerstore

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/google/uuid"
	_ "modernc.org/sqlite" // the database/sql driver "sqlite"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/internal/domain"
)

// Store is one worker's store.
type Store struct {
	db   *sql.DB
	path string
}

// Open opens (creating if needed) the store of the worker named name
// under dir.
func Open(dir, name string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("workerstore: %w", err)
	}
	path := filepath.Join(dir, "agentree-"+name+".db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)&_pragma=foreign_keys(on)&_pragma=synchronous(NORMAL)")
	if err != nil {
		return nil, fmt.Errorf("workerstore: open %s: %w", path, err)
	}
	// One writer at a time is SQLite's rule; one connection keeps the
	// driver from queueing behind its own busy lock.
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(schema); err != nil {
		db.Close()
		return nil, fmt.Errorf("workerstore: schema of %s: %w", path, err)
	}
	if err := upgrade(db); err != nil {
		db.Close()
		return nil, fmt.Errorf("workerstore: upgrade %s: %w", path, err)
	}
	return &Store{db: db, path: path}, nil
}

// File is the store's file.
func (s *Store) File() string { return s.path }

// Close closes the file.
func (s *Store) Close() error { return s.db.Close() }

const schema = `
CREATE TABLE IF NOT EXISTS entry (
	id TEXT PRIMARY KEY,
	org TEXT NOT NULL,
	execution TEXT NOT NULL,
	parent TEXT REFERENCES entry(id),
	depth INTEGER NOT NULL,
	type TEXT NOT NULL,
	role TEXT NOT NULL DEFAULT '',
	content BLOB NOT NULL,
	turn TEXT NOT NULL DEFAULT '',
	metadata BLOB,
	key TEXT NOT NULL,
	created_at TEXT NOT NULL,
	UNIQUE (execution, key)
);
CREATE TABLE IF NOT EXISTS content (
	org TEXT NOT NULL,
	sha256 TEXT NOT NULL,
	media_type TEXT NOT NULL,
	data BLOB NOT NULL,
	PRIMARY KEY (org, sha256)
);
CREATE TABLE IF NOT EXISTS checkpoint (
	execution TEXT NOT NULL,
	seq INTEGER NOT NULL,
	org TEXT NOT NULL,
	leaf TEXT NOT NULL,
	state BLOB,
	metadata BLOB,
	PRIMARY KEY (execution, seq)
);
CREATE TABLE IF NOT EXISTS tool_call (
	execution TEXT NOT NULL,
	message_id TEXT NOT NULL,
	tool_call_id TEXT NOT NULL,
	status TEXT NOT NULL,
	record BLOB NOT NULL,
	PRIMARY KEY (execution, message_id, tool_call_id)
);
`

// Has reports whether the entry id is in this store.
func (s *Store) Has(ctx context.Context, id string) (bool, error) {
	var one int
	err := s.db.QueryRowContext(ctx, `SELECT 1 FROM entry WHERE id = ?`, id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, wrap("has "+id, err)
}

// Count is how many entries the execution has here.
func (s *Store) Count(ctx context.Context, executionID string) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM entry WHERE execution = ?`, executionID).Scan(&n)
	return n, wrap("count", err)
}

// ModelCalls is how many model calls the execution recorded here: its
// llm_call entries and the answers that hold their call's record
// (step.CallOf).
func (s *Store) ModelCalls(ctx context.Context, executionID string) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM entry WHERE execution = ? AND (type = 'llm_call'
		OR (type = 'message' AND role = 'assistant' AND json_extract(metadata, '$.llmCall') IS NOT NULL))`, executionID).Scan(&n)
	return n, wrap("count", err)
}

const entryCols = `id, execution, coalesce(parent, ''), depth, type, role, content, turn, metadata, key`

func scanEntry(row interface{ Scan(...any) error }) (agentsdk.Entry, error) {
	var e agentsdk.Entry
	var content, meta []byte
	err := row.Scan(&e.ID, &e.ExecutionID, &e.ParentID, &e.Depth, &e.Type, &e.Role, &content, &e.TurnID, &meta, &e.IdempotencyKey)
	e.Content, e.Metadata = content, meta
	return e, err
}

// Path is the entries from the root to leafID, root first.
func (s *Store) Path(ctx context.Context, orgID, leafID string) ([]agentsdk.Entry, error) {
	rows, err := s.db.QueryContext(ctx, `
		WITH RECURSIVE up(id) AS (
			SELECT id FROM entry WHERE id = ? AND org = ?
			UNION ALL
			SELECT e.parent FROM entry e JOIN up ON e.id = up.id WHERE e.parent IS NOT NULL
		)
		SELECT `+entryCols+` FROM entry WHERE id IN (SELECT id FROM up) ORDER BY depth`, leafID, orgID)
	if err != nil {
		return nil, wrap("path", err)
	}
	defer rows.Close()
	var out []agentsdk.Entry
	for rows.Next() {
		e, err := scanEntry(rows)
		if err != nil {
			return nil, wrap("path", err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("path", err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("workerstore: path to %s: %w", leafID, agentsdk.ErrNotFound)
	}
	return out, nil
}

// GetEntry reads one entry.
func (s *Store) GetEntry(ctx context.Context, orgID, id string) (agentsdk.Entry, error) {
	e, err := scanEntry(s.db.QueryRowContext(ctx, `SELECT `+entryCols+` FROM entry WHERE id = ? AND org = ?`, id, orgID))
	return e, notFound("entry "+id, err)
}

// EntryByKey finds an entry by its idempotency key.
func (s *Store) EntryByKey(ctx context.Context, _, executionID, key string) (agentsdk.Entry, error) {
	e, err := scanEntry(s.db.QueryRowContext(ctx, `SELECT `+entryCols+` FROM entry WHERE execution = ? AND key = ?`, executionID, key))
	return e, notFound("entry by key "+key, err)
}

// AppendEntries appends es in order, in one transaction. A ParentID of
// agentsdk.PrevEntry takes the entry before; a key appended before
// returns that entry.
func (s *Store) AppendEntries(ctx context.Context, orgID string, es []agentsdk.Entry) ([]agentsdk.Entry, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, wrap("append", err)
	}
	defer func() { _ = tx.Rollback() }()
	out := make([]agentsdk.Entry, 0, len(es))
	for i, e := range es {
		if e.ParentID == agentsdk.PrevEntry {
			if i == 0 {
				return nil, fmt.Errorf("%w: workerstore: the first entry has parent %s", agentsdk.ErrInvalidInput, agentsdk.PrevEntry)
			}
			e.ParentID = out[i-1].ID
		}
		if e.IdempotencyKey == "" {
			return nil, fmt.Errorf("%w: workerstore: an entry needs an idempotency key", agentsdk.ErrInvalidInput)
		}
		got, err := scanEntry(tx.QueryRowContext(ctx, `SELECT `+entryCols+` FROM entry WHERE execution = ? AND key = ?`, e.ExecutionID, e.IdempotencyKey))
		if err == nil {
			out = append(out, got)
			continue
		} else if !errors.Is(err, sql.ErrNoRows) {
			return nil, wrap("append", err)
		}
		depth, step := 0, 0
		var parent any
		if e.ParentID != "" {
			var pexec string
			if err := tx.QueryRowContext(ctx, `SELECT depth, step, execution FROM entry WHERE id = ? AND org = ?`, e.ParentID, orgID).Scan(&depth, &step, &pexec); err != nil {
				return nil, notFound("append: parent "+e.ParentID, err)
			}
			if pexec != e.ExecutionID {
				return nil, fmt.Errorf("%w: workerstore: parent %s is not an entry of execution %s", agentsdk.ErrInvalidInput, e.ParentID, e.ExecutionID)
			}
			depth++
			parent = e.ParentID
		}
		e.ID, e.Depth = uuid.NewString(), depth
		if e.Type == agentsdk.EntryMessage && e.Role == agentsdk.RoleAssistant {
			step++
		}
		content := []byte(e.Content)
		if content == nil {
			content = []byte("{}")
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO entry (id, org, execution, parent, depth, step, type, role, content, turn, metadata, key, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, e.ID, orgID, e.ExecutionID, parent, depth, step, string(e.Type), string(e.Role),
			content, e.TurnID, []byte(e.Metadata), e.IdempotencyKey, now()); err != nil {
			return nil, wrap("append", err)
		}
		out = append(out, e)
	}
	return out, wrap("append", tx.Commit())
}

// PutContent stores data by its sha256, once, and returns the hash.
func (s *Store) PutContent(ctx context.Context, orgID string, data []byte, mediaType string) (string, error) {
	sum := sha256.Sum256(data)
	h := hex.EncodeToString(sum[:])
	_, err := s.db.ExecContext(ctx, `INSERT INTO content (org, sha256, media_type, data) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING`, orgID, h, mediaType, data)
	return h, wrap("put content", err)
}

// Content reads stored content.
func (s *Store) Content(ctx context.Context, orgID, sha string) ([]byte, error) {
	var data []byte
	err := s.db.QueryRowContext(ctx, `SELECT data FROM content WHERE org = ? AND sha256 = ?`, orgID, sha).Scan(&data)
	return data, notFound("content "+sha, err)
}

// RecordToolCall upserts a tool call's record under
// agentsdk.ToolCallRecord.Merge's rules (an ended call never goes back to
// running; fields the new record leaves empty keep what was recorded),
// the rules every store follows. The read and the write are one
// transaction, so two writers of one call cannot lose either's fields.
func (s *Store) RecordToolCall(ctx context.Context, rec agentsdk.ToolCallRecord) error {
	_, err := s.StartToolCall(ctx, rec)
	return err
}

// StartToolCall is RecordToolCall returning the record as it then stands
// (step.ToolStarter): ended when another run of the call ended it first.
func (s *Store) StartToolCall(ctx context.Context, rec agentsdk.ToolCallRecord) (agentsdk.ToolCallRecord, error) {
	var none agentsdk.ToolCallRecord
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return none, wrap("record tool call", err)
	}
	defer func() { _ = tx.Rollback() }()
	var b []byte
	err = tx.QueryRowContext(ctx, `SELECT record FROM tool_call WHERE execution = ? AND message_id = ? AND tool_call_id = ?`,
		rec.ExecutionID, rec.MessageID, rec.ToolCallID).Scan(&b)
	switch {
	case err == nil:
		var old agentsdk.ToolCallRecord
		if err := json.Unmarshal(b, &old); err != nil {
			return none, wrap("record tool call", err)
		}
		rec = old.Merge(rec)
	case !errors.Is(err, sql.ErrNoRows):
		return none, wrap("record tool call", err)
	}
	if b, err = json.Marshal(rec); err != nil {
		return none, wrap("record tool call", err)
	}
	at := now()
	_, err = tx.ExecContext(ctx, `INSERT INTO tool_call (execution, message_id, tool_call_id, status, record, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (execution, message_id, tool_call_id) DO UPDATE SET status = excluded.status, record = excluded.record, updated_at = excluded.updated_at`,
		rec.ExecutionID, rec.MessageID, rec.ToolCallID, string(rec.Status), b, at, at)
	if err != nil {
		return none, wrap("record tool call", err)
	}
	if err := tx.Commit(); err != nil {
		return none, wrap("record tool call", err)
	}
	return rec, nil
}

// ToolCall reads a tool call's record.
func (s *Store) ToolCall(ctx context.Context, _, executionID, messageID, toolCallID string) (agentsdk.ToolCallRecord, error) {
	var b []byte
	err := s.db.QueryRowContext(ctx, `SELECT record FROM tool_call WHERE execution = ? AND message_id = ? AND tool_call_id = ?`,
		executionID, messageID, toolCallID).Scan(&b)
	if err != nil {
		return agentsdk.ToolCallRecord{}, notFound("tool call "+toolCallID, err)
	}
	var rec agentsdk.ToolCallRecord
	return rec, wrap("tool call", json.Unmarshal(b, &rec))
}

// CancelAwaitingToolCalls marks the execution's calls waiting for a
// decision cancelled.
func (s *Store) CancelAwaitingToolCalls(ctx context.Context, executionID string) error {
	rows, err := s.db.QueryContext(ctx, `SELECT record FROM tool_call WHERE execution = ? AND status IN (?, ?)`, executionID,
		string(agentsdk.ToolAwaitingApproval), string(agentsdk.ToolAwaitingResult))
	if err != nil {
		return wrap("cancel awaiting", err)
	}
	var recs []agentsdk.ToolCallRecord
	for rows.Next() {
		var b []byte
		var rec agentsdk.ToolCallRecord
		if err := rows.Scan(&b); err == nil && json.Unmarshal(b, &rec) == nil {
			recs = append(recs, rec)
		}
	}
	rows.Close()
	for _, rec := range recs {
		rec.Status = agentsdk.ToolCancelled
		if err := s.RecordToolCall(ctx, rec); err != nil {
			return err
		}
	}
	return nil
}

// AppendCheckpoint records c; domain.ErrConflict when its sequence exists.
func (s *Store) AppendCheckpoint(ctx context.Context, c domain.Checkpoint) error {
	res, err := s.db.ExecContext(ctx, `INSERT INTO checkpoint (execution, seq, org, leaf, state, metadata, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING`, c.ExecutionID, c.Sequence, c.OrgID, c.LeafEntryID, []byte(c.State), []byte(c.Metadata), now())
	if err != nil {
		return wrap("checkpoint", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("%w: checkpoint %d of %s exists", domain.ErrConflict, c.Sequence, c.ExecutionID)
	}
	return nil
}

// GetCheckpoint reads one checkpoint.
func (s *Store) GetCheckpoint(ctx context.Context, _, executionID string, seq int) (domain.Checkpoint, error) {
	c, err := scanCheckpoint(s.db.QueryRowContext(ctx, `SELECT `+checkpointCols+` FROM checkpoint WHERE execution = ? AND seq = ?`, executionID, seq))
	return c, notFound(fmt.Sprintf("checkpoint %d", seq), err)
}

func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("workerstore: %s: %w", op, err)
}

func notFound(op string, err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("workerstore: %s: %w", op, agentsdk.ErrNotFound)
	}
	return wrap(op, err)
}
