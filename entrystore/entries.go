package entrystore

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentree/agentree/internal/domain"
)

// PrevParent as an Entry's ParentID in AppendEntries means "the entry
// appended just before this one in the same call".
const PrevParent = "$prev"

// Entry is one immutable node of an execution's conversation tree
// (domain.Entry).
type Entry = domain.Entry

// entryColsOf lists the Entry columns of the agent_entry row aliased t.
func entryColsOf(t string) string {
	return t + `.id::text AS id, ` + t + `.org_id::text AS org_id, ` + t + `.agent_execution_id::text AS execution_id,
	coalesce(` + t + `.parent_id::text, '') AS parent_id, ` + t + `.seq, ` + t + `.depth, ` + t + `.step, ` + t + `.entry_type,
	coalesce(` + t + `.role, '') AS role, ` + t + `.content, coalesce(` + t + `.turn_id, '') AS turn_id,
	` + t + `.idempotency_key, ` + t + `.metadata, ` + t + `.created_at`
}

var entryCols = entryColsOf("agent_entry")

// entryDest points at e's fields in entryColsOf order. Entries are scanned
// by position into plain byte slices: RowToStructByName and json.RawMessage's
// validating unmarshal made a 10,000-entry path several times slower.
func entryDest(e *Entry) []any {
	return []any{&e.ID, &e.OrgID, &e.ExecutionID, &e.ParentID, &e.Seq, &e.Depth, &e.Step, &e.Type, &e.Role,
		(*[]byte)(&e.Content), &e.TurnID, &e.IdempotencyKey, (*[]byte)(&e.Metadata), &e.CreatedAt}
}

func scanEntry(row pgx.CollectableRow) (Entry, error) {
	var e Entry
	err := row.Scan(entryDest(&e)...)
	e.CreatedAt = e.CreatedAt.UTC()
	return e, err
}

// queryEntries runs a query selecting entryColsOf columns.
func queryEntries(ctx context.Context, q querier, sql string, args ...any) ([]Entry, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, scanEntry)
}

// queryEntry runs a query selecting one row of entryColsOf columns.
func queryEntry(ctx context.Context, q querier, sql string, args ...any) (Entry, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return Entry{}, err
	}
	return pgx.CollectExactlyOneRow(rows, scanEntry)
}

// InputKey is the idempotency key of an execution's input entry, its
// first prompt. The row's input drops the prompt once that entry holds it
// (insertEntrySQL) and reads put it back (execution_input, migration 0014).
func InputKey(executionID string) string { return executionID + "/input" }

// insertEntrySQL appends one entry in one round trip: the parent's depth,
// branch and step are read inside the INSERT, and the WHERE refuses a
// parent outside the execution (or an execution outside the org) by
// inserting nothing. The same statement moves the execution's leaf to the
// new entry (unless a newer one is there already), so the leaf is never
// out of step with the tree, whichever transaction the append is part of.
//
// The entry continues its parent's branch unless $11 (fork) is set, in which
// case it starts its own. $12 is the append's write fence (WithWriteFence),
// recorded on the execution; a fork fenced before the one recorded is not
// inserted: a stale writer does not branch the tree. ON CONFLICT without a target swallows every unique
// violation, so a repeated idempotency key, a branch slot a sibling already
// holds and a taken ID all insert nothing (and move no leaf); appendEntry
// tells them apart afterwards, off the common path.
//
// The execution's input entry (key '{execution}/input') holds its first
// prompt, so the same UPDATE drops the prompt from the row's input, which
// reads put back from the entry (execution_input, migration 0014).
//
// The parent and the execution are looked up by id alone (behind MATERIALIZED
// fences) and their org checked afterwards: with the execution in the same WHERE, generic plans
// picked agent_entry_list and read every entry of the execution, making each
// append slower than the last.
const insertEntrySQL = `
	WITH byid AS MATERIALIZED (
		SELECT depth, branch_id, step, agent_execution_id, org_id FROM agent_entry WHERE id = $4::uuid
	), resumed AS (
		SELECT resumed_from, forked_from FROM agent_execution WHERE id = $3
	), parent AS (
		SELECT depth, branch_id, step FROM byid WHERE org_id = $2 AND (agent_execution_id = $3
			OR agent_execution_id = (SELECT resumed_from FROM resumed)
			OR agent_execution_id = (SELECT forked_from FROM resumed))
	), execution AS MATERIALIZED (
		SELECT org_id, write_fence FROM agent_execution WHERE id = $3
	), new AS (
		SELECT coalesce($1::uuid, gen_random_uuid()) AS id
	), ins AS (
		INSERT INTO agent_entry AS e (id, org_id, agent_execution_id, parent_id, depth, branch_id, step, entry_type,
			role, content, turn_id, idempotency_key, metadata)
		SELECT new.id, $2, $3, $4::uuid, coalesce((SELECT depth + 1 FROM parent), 0),
			CASE WHEN $11 THEN new.id ELSE coalesce((SELECT branch_id FROM parent), new.id) END,
			coalesce((SELECT step FROM parent), 0) + CASE WHEN $5 = 'message' AND $6 = 'assistant' THEN 1 ELSE 0 END,
			$5, $6, $7, $8, $9, $10
		FROM new
		WHERE EXISTS (SELECT 1 FROM execution WHERE org_id = $2)
		  AND ($4::uuid IS NULL OR EXISTS (SELECT 1 FROM parent))
		  AND NOT ($11 AND $12::timestamptz IS NOT NULL AND coalesce((SELECT write_fence > $12 FROM execution), false))
		` + insertEntryCond + `
		ON CONFLICT DO NOTHING
		RETURNING *
	), leaf AS (
		UPDATE agent_execution x SET leaf_entry_id = ins.id, leaf_seq = ins.seq,
			write_fence = greatest(x.write_fence, $12::timestamptz),
			input = CASE WHEN ins.idempotency_key = x.id::text || '/input'
				AND x.input->>'userPrompt' = ins.content->'content'->0->>'text' THEN x.input - 'userPrompt' ELSE x.input END
		FROM ins WHERE x.id = ins.agent_execution_id AND (x.leaf_seq IS NULL OR x.leaf_seq < ins.seq)
	)
	SELECT `

// insertEntryCond marks where in insertEntrySQL's WHERE insertEntryIf
// adds its condition; in insertEntrySQL it is a comment.
const insertEntryCond = "-- and"

// insertEntryIf is insertEntryReturning inserting only when cond holds
// too (its parameters from $13 on).
func insertEntryIf(cond string) string {
	return strings.Replace(insertEntryReturning, insertEntryCond, "AND "+cond, 1)
}

// insertEntryReturning is insertEntrySQL returning only what the
// database decides: the documents are stored as sent (json), so the rest
// is the entry given (insertedDest).
const insertEntryReturning = insertEntrySQL + "e.created_at, e.id::text, e.seq, e.depth, e.step FROM ins e"

// insertedDest are the fields of out insertEntryReturning's row fills.
func insertedDest(out *Entry) []any {
	return []any{&out.CreatedAt, &out.ID, &out.Seq, &out.Depth, &out.Step}
}

// entryArgs are insertEntrySQL's parameters for e (its IDs checked and
// its content set), id its preset ID or "": $3 execution, $9 key.
func entryArgs(e Entry, id string, fork bool, fence *time.Time) []any {
	return []any{nullIfEmpty(id), e.OrgID, e.ExecutionID, nullIfEmpty(e.ParentID), e.Type, nullIfEmpty(e.Role), string(e.Content), nullIfEmpty(e.TurnID),
		e.IdempotencyKey, nullJSON(e.Metadata), fork, fence}
}

// AppendEntry appends e to its execution's tree. IdempotencyKey is required:
// a repeat of (execution, key) — sequential or concurrent — writes nothing
// and returns the entry already stored with created=false. The parent must
// be an entry of the same execution, or of the one it resumes or forks
// (else ErrInvalid); depth is computed.
// ID may be preset; a taken one is ErrConflict.
func (s *Store) AppendEntry(ctx context.Context, e Entry) (Entry, bool, error) {
	return appendEntry(ctx, s.pool, e)
}

// appendEntryOp names the errors of an entry's append.
const appendEntryOp = "append entry"

// checkEntry checks e for an append and returns it as stored (its IDs
// canonical, its content set) and its preset ID, "" for none.
func checkEntry(e Entry) (Entry, string, error) {
	const op = appendEntryOp
	ids, err := writeIDs(op, e.OrgID, e.ExecutionID)
	if err != nil {
		return Entry{}, "", err
	}
	id, ok1 := optID(e.ID)
	parent, ok2 := optID(e.ParentID)
	if !ok1 || !ok2 {
		return Entry{}, "", errf(op, ErrInvalid, "malformed id or parent id")
	}
	if e.IdempotencyKey == "" {
		return Entry{}, "", errf(op, ErrInvalid, "idempotency key is required")
	}
	if e.Type == "" {
		return Entry{}, "", errf(op, ErrInvalid, "entry type is required")
	}
	e.OrgID, e.ExecutionID, e.ParentID = ids[0], ids[1], parent
	if e.Content == nil {
		e.Content = json.RawMessage("{}")
	}
	return e, id, nil
}

func appendEntry(ctx context.Context, q querier, e Entry) (Entry, bool, error) {
	const op = appendEntryOp
	e, id, err := checkEntry(e)
	if err != nil {
		return Entry{}, false, err
	}
	ids := []string{e.OrgID, e.ExecutionID}
	// First as the parent's continuation; if that inserted nothing and the
	// key is not a repeat, the parent already has a first child, so fork.
	fence := writeFence(ctx)
	for _, fork := range []bool{false, true} {
		out := e
		err := q.QueryRow(ctx, insertEntryReturning, entryArgs(out, id, fork, fence)...).Scan(insertedDest(&out)...)
		if err == nil {
			out.CreatedAt = out.CreatedAt.UTC()
			return out, true, nil
		}
		if !errors.Is(err, errNoRows) {
			return Entry{}, false, wrap(op, err)
		}
		// Nothing inserted: most likely a repeat, whose row is visible now
		// that the ON CONFLICT wait is over.
		prev, err := getEntryByKey(ctx, q, ids[0], ids[1], e.IdempotencyKey)
		if err == nil {
			return prev, false, nil
		}
		if !errors.Is(err, ErrNotFound) {
			return Entry{}, false, wrap(op, err)
		}
	}
	return Entry{}, false, whyNotAppended(ctx, q, ids[0], ids[1], id, e.ParentID, fence)
}

// whyNotAppended explains an append that inserted nothing even as a fork.
func whyNotAppended(ctx context.Context, q querier, orgID, executionID, id, parentID string, fence *time.Time) error {
	const op = "append entry"
	if _, err := getExecution(ctx, q, orgID, executionID); err != nil {
		return wrap(op, err)
	}
	if fence != nil {
		var stale bool
		if err := q.QueryRow(ctx, `SELECT coalesce(write_fence > $2, false) FROM agent_execution WHERE id = $1`,
			executionID, *fence).Scan(&stale); err != nil {
			return wrap(op, err)
		}
		if stale {
			return errf(op, ErrConflict, "entry %s was continued by a newer workflow task of execution %s; this one (of %s) was timed out and may not branch it",
				parentID, executionID, fence.Format(time.RFC3339Nano))
		}
	}
	if id != "" {
		var taken bool
		if err := q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM agent_entry WHERE id = $1)`, id).Scan(&taken); err != nil {
			return wrap(op, err)
		}
		if taken {
			return errf(op, ErrConflict, "entry id %s is taken", id)
		}
	}
	return errf(op, ErrInvalid, "parent %s is not an entry of execution %s", parentID, executionID)
}

// AppendEntries appends es in order in one transaction, so a turn's entries
// land together or not at all. A ParentID of PrevParent takes the ID of the
// entry before it. Each entry follows AppendEntry's idempotency rule; the
// result holds the stored (new or existing) entries. One entry needs no
// transaction, as AppendEntry's does not: a model call's answer, most
// often, saves its BEGIN and COMMIT round trips.
func (s *Store) AppendEntries(ctx context.Context, es []Entry) ([]Entry, error) {
	if len(es) == 1 && es[0].ParentID != PrevParent {
		stored, _, err := appendEntry(ctx, s.pool, es[0])
		if err != nil {
			return nil, wrap("append entries", err)
		}
		return []Entry{stored}, nil
	}
	out := make([]Entry, 0, len(es))
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		for i, e := range es {
			if e.ParentID == PrevParent {
				if i == 0 {
					return errf("append entries", ErrInvalid, "first entry has parent %s", PrevParent)
				}
				e.ParentID = out[i-1].ID
			}
			stored, _, err := appendEntry(ctx, tx, e)
			if err != nil {
				return err
			}
			out = append(out, stored)
		}
		return nil
	})
	if err != nil {
		return nil, wrap("append entries", err)
	}
	return out, nil
}

// GetEntry returns one entry of the organization.
func (s *Store) GetEntry(ctx context.Context, orgID, id string) (Entry, error) {
	op := "get entry " + id
	ids, err := readIDs(op, orgID, id)
	if err != nil {
		return Entry{}, err
	}
	e, err := queryEntry(ctx, s.pool,
		`SELECT `+entryCols+` FROM agent_entry WHERE org_id = $1 AND id = $2`, ids[0], ids[1])
	return e, wrap(op, err)
}

// GetEntryByKey returns the entry an idempotency key produced, which is how
// a retried activity finds the work its previous attempt already stored.
func (s *Store) GetEntryByKey(ctx context.Context, orgID, executionID, key string) (Entry, error) {
	ids, err := readIDs("get entry by key", orgID, executionID)
	if err != nil {
		return Entry{}, err
	}
	return getEntryByKey(ctx, s.pool, ids[0], ids[1], key)
}

func getEntryByKey(ctx context.Context, q querier, orgID, executionID, key string) (Entry, error) {
	e, err := queryEntry(ctx, q, `SELECT `+entryCols+` FROM agent_entry
		WHERE agent_execution_id = $2 AND idempotency_key = $3 AND org_id = $1`, orgID, executionID, key)
	return e, wrap("get entry by key "+key, err)
}

// ListEntries pages through an execution's entries in arrival order.
func (s *Store) ListEntries(ctx context.Context, orgID, executionID string, p Page) ([]Entry, string, error) {
	const op = "list entries"
	ids, k, _, err := listStart(op, p, false, orgID, executionID)
	if err != nil {
		return nil, "", err
	}
	es, next, err := listPage(ctx, s.pool, p, scanEntry, func(e Entry) keyset { return keyset{N: e.Seq} },
		`SELECT `+entryCols+` FROM agent_entry
		WHERE agent_execution_id = $2 AND org_id = $1 AND seq > $3 ORDER BY seq LIMIT $4`,
		ids[0], ids[1], k.N, p.limit()+1)
	if err != nil {
		return nil, "", wrap(op, err)
	}
	return es, next, nil
}

// Children returns the entries whose parent is entryID, in arrival order:
// more than one means the conversation branched there.
func (s *Store) Children(ctx context.Context, orgID, entryID string) ([]Entry, error) {
	op := "children of " + entryID
	ids, err := readIDs(op, orgID, entryID)
	if err != nil {
		return nil, err
	}
	if _, err := s.GetEntry(ctx, orgID, entryID); err != nil {
		return nil, err
	}
	es, err := queryEntries(ctx, s.pool, `SELECT `+entryCols+` FROM agent_entry
		WHERE parent_id = $2 AND org_id = $1 ORDER BY seq`, ids[0], ids[1])
	return es, wrap(op, err)
}

// nullIfEmpty sends "" as SQL NULL, keeping optional parameters plain
// (index-usable) in generic plans.
func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}
