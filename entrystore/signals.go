package entrystore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agentree/agentree/internal/domain"
)

// Signal is a message to a running execution, kept in an inbox so the
// Temporal signal itself carries only its ID and name. Seq is arrival order.
type Signal struct {
	ID          string          `db:"id"`
	OrgID       string          `db:"org_id"`
	ExecutionID string          `db:"execution_id"`
	Seq         int64           `db:"seq"`
	Name        string          `db:"signal_name"`
	Value       json.RawMessage `db:"signal_value"`
	Consumed    bool            `db:"consumed"`
	CreatedAt   time.Time       `db:"created_at"`
}

const signalCols = `id::text AS id, org_id::text AS org_id, agent_execution_id::text AS execution_id,
	seq, signal_name, signal_value, consumed, created_at`

func (sg Signal) utc() Signal { sg.CreatedAt = sg.CreatedAt.UTC(); return sg }

// ErrExecutionEnded is PutSignal's answer for an execution that has ended
// or is being cancelled: nothing would consume the signal, so it is
// refused before it is stored. It is an ErrConflict.
var ErrExecutionEnded = fmt.Errorf("%w: the execution has ended", ErrConflict)

// ErrSignalConsumed is ConsumeSignal's answer for a signal consumed before,
// elsewhere in the tree: a redelivery, to be ignored. It is an ErrConflict.
// It is domain.ErrSignalConsumed, so the engine matches it as it is.
var ErrSignalConsumed = domain.ErrSignalConsumed

// signalableSQL holds for an execution that can still take a signal: not
// ended, paused or being cancelled.
const signalableSQL = `status NOT IN ('COMPLETED', 'FAILED', 'CANCELLED', 'PAUSED', 'CANCELLING')`

// signalArgs are a signal's insert parameters ($1 organization, $2
// execution, $3 name, $4 value, $5 its own ID or NULL), checked; ids are
// the first two.
func signalArgs(op string, sg Signal) (ids []string, args []any, err error) {
	if ids, err = writeIDs(op, sg.OrgID, sg.ExecutionID); err != nil {
		return nil, nil, err
	}
	if sg.Name == "" {
		return nil, nil, errf(op, ErrInvalid, "name is required")
	}
	var id any
	if sg.ID != "" {
		own, err := writeIDs(op, sg.ID)
		if err != nil {
			return nil, nil, err
		}
		id = own[0]
	}
	return ids, []any{ids[0], ids[1], sg.Name, nullJSON(sg.Value), id}, nil
}

// PutSignal stores a signal for a live execution of the organization (else
// ErrNotFound, or ErrExecutionEnded when it has ended or is cancelling). It
// takes a share lock on the execution row, so it and
// CompleteUnlessSignalled are ordered: either the signal is stored first
// and the execution does not complete without it, or the execution
// completes first and the signal is refused. A stored signal is thereby
// always one the execution will act on. sg.ID, when set, is the row's ID
// (a keyed request's effect ID, so its re-run finds the row); else one is
// made.
func (s *Store) PutSignal(ctx context.Context, sg Signal) (Signal, error) {
	const op = "put signal"
	ids, args, err := signalArgs(op, sg)
	if err != nil {
		return Signal{}, err
	}
	out, err := queryOne[Signal](ctx, s.pool, `
		INSERT INTO agent_signal (id, org_id, agent_execution_id, signal_name, signal_value)
		SELECT coalesce($5::uuid, gen_random_uuid()), $1, $2, $3, $4
		WHERE EXISTS (SELECT 1 FROM agent_execution WHERE id = $2 AND org_id = $1 AND `+signalableSQL+` FOR SHARE)
		RETURNING `+signalCols, args...)
	if errors.Is(err, errNoRows) {
		if ex, gerr := getExecution(ctx, s.pool, ids[0], ids[1]); gerr == nil {
			return Signal{}, fmt.Errorf("entrystore: %s: %w (%s)", op, ErrExecutionEnded, ex.Status)
		}
	}
	return out.utc(), wrap(op, err)
}

// GetSignal returns one signal.
func (s *Store) GetSignal(ctx context.Context, orgID, id string) (Signal, error) {
	sg, err := getOne[Signal](ctx, s.pool, "get signal "+id, "agent_signal", signalCols, orgID, id)
	return sg.utc(), err
}

// PendingSignals returns the execution's unconsumed signals in arrival
// order: what a new segment must still act on.
func (s *Store) PendingSignals(ctx context.Context, orgID, executionID string) ([]Signal, error) {
	op := "pending signals of " + executionID
	ids, err := readIDs(op, orgID, executionID)
	if err != nil {
		return nil, err
	}
	sgs, err := queryAll[Signal](ctx, s.pool, `SELECT `+signalCols+` FROM agent_signal
		WHERE agent_execution_id = $2 AND org_id = $1 AND NOT consumed ORDER BY seq`, ids[0], ids[1])
	return utcAll(sgs, Signal.utc), wrap(op, err)
}

// ConsumeSignal appends e (the entry the signal becomes, usually a user
// message) and marks the signal consumed in one transaction, so a crash
// leaves either both or neither. e's org and execution default to the
// signal's, and its idempotency key to "signal/<id>". Calling again with the
// same parent — a retry of this consumption — returns the same entry. A
// signal already consumed under another parent (or without an entry) is a
// redelivery: ErrSignalConsumed, and nothing changes, so the leaf never
// moves back to the old entry.
func (s *Store) ConsumeSignal(ctx context.Context, orgID, signalID string, e Entry) (Entry, error) {
	op := "consume signal " + signalID
	ids, err := readIDs(op, orgID, signalID)
	if err != nil {
		return Entry{}, err
	}
	if e.IdempotencyKey == "" {
		e.IdempotencyKey = "signal/" + ids[1]
	}
	if out, ok, err := s.consumeFresh(ctx, ids, e); err != nil || ok {
		return out, err
	}
	var out Entry
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// One statement locks the signal, reads it and marks it consumed
		// (the transaction undoes the mark if the entry is not
		// appended); it reads where a branch moved the leaf while the
		// workflow waited at e's parent (variants.go, MoveLeaf) too: the
		// entry goes where the leaf now is.
		var executionID, branchTo string
		var consumed bool
		err := tx.QueryRow(ctx, `WITH old AS (
				SELECT s.id, s.agent_execution_id, s.consumed,
					coalesce(CASE WHEN x.branch_from = nullif($3, '')::uuid THEN x.branch_to::text END, '') AS branch_to
				FROM agent_signal s JOIN agent_execution x ON x.id = s.agent_execution_id
				WHERE s.id = $2 AND s.org_id = $1 FOR UPDATE OF s)
			UPDATE agent_signal u SET consumed = true, consumed_at = coalesce(u.consumed_at, now())
			FROM old WHERE u.id = old.id
			RETURNING old.agent_execution_id::text, old.consumed, old.branch_to`,
			ids[0], ids[1], e.ParentID).Scan(&executionID, &consumed, &branchTo)
		if err != nil {
			return wrap(op, err)
		}
		if e.ExecutionID != "" && e.ExecutionID != executionID {
			return errf(op, ErrInvalid, "entry is for execution %s, signal for %s", e.ExecutionID, executionID)
		}
		e.OrgID, e.ExecutionID = ids[0], executionID
		if branchTo != "" {
			e.ParentID = branchTo
		}
		if consumed {
			prev, err := getEntryByKey(ctx, tx, ids[0], executionID, e.IdempotencyKey)
			if err == nil && prev.ParentID == e.ParentID {
				out = prev
				return nil
			}
			if err != nil && !errors.Is(err, ErrNotFound) {
				return err
			}
			return fmt.Errorf("entrystore: %s: %w", op, ErrSignalConsumed)
		}
		out, _, err = appendEntry(ctx, tx, e)
		return err
	})
	return out, err
}

// insertConsumedEntrySQL inserts a consumed signal's entry only when the
// signal ($13) was marked consumed by this transaction (consumeFresh).
var insertConsumedEntrySQL = insertEntryIf(`EXISTS (SELECT 1 FROM agent_signal WHERE id = $13 AND xmin = ` + thisTx + `)`)

// consumeFresh is ConsumeSignal's common case in one round trip and one
// transaction: a signal not consumed yet, of e's execution (which e
// names), whose entry goes in as the continuation of e's parent, where
// no branch moved the leaf. It marks the signal consumed, inserts e only
// when that mark is this transaction's, and takes the mark back when e did
// not go in. ok reports that e went in; when not, nothing changed, and
// ConsumeSignal's general way decides.
func (s *Store) consumeFresh(ctx context.Context, ids []string, e Entry) (out Entry, ok bool, err error) {
	if e.ExecutionID == "" {
		return Entry{}, false, nil
	}
	e.OrgID = ids[0]
	out, id, err := checkEntry(e)
	if err != nil {
		return Entry{}, false, err
	}
	b := &pgx.Batch{}
	b.Queue(`UPDATE agent_signal u SET consumed = true, consumed_at = now()
		FROM agent_execution x
		WHERE u.id = $2 AND u.org_id = $1 AND NOT u.consumed AND u.agent_execution_id = $3
		  AND x.id = u.agent_execution_id AND NOT coalesce(x.branch_from = nullif($4, '')::uuid, false)`,
		ids[0], ids[1], out.ExecutionID, out.ParentID)
	b.Queue(insertConsumedEntrySQL, append(entryArgs(out, id, false, writeFence(ctx)), ids[1])...).Query(insertedInto(&out, &ok))
	b.Queue(`UPDATE agent_signal SET consumed = false, consumed_at = NULL
		WHERE id = $1 AND xmin = `+thisTx+` AND NOT EXISTS (SELECT 1 FROM agent_entry
			WHERE agent_execution_id = $2 AND idempotency_key = $3 AND xmin = `+thisTx+`)`,
		ids[1], out.ExecutionID, out.IdempotencyKey)
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return Entry{}, false, wrap("consume signal "+ids[1], err)
	}
	if !ok {
		return Entry{}, false, nil
	}
	out.CreatedAt = out.CreatedAt.UTC()
	return out, true, nil
}

// CompleteUnlessSignalled moves the execution to tr.To (an ending) at
// leafID unless it has signals other than those in known (the ones its
// workflow already holds) that are unconsumed, or were consumed under
// leafID: a workflow task that took a signal from the inbox, answered it
// and was lost (a worker died) went past leafID, and its re-run, which
// never saw the signal, must go that task's way rather than end at
// leafID with the message answered beyond it (make chaos, a one-shot sent
// a message while it wrote its final answer). Then it changes nothing and
// returns them, so the agent acts on them first. The execution row is
// locked for the check, so a concurrent PutSignal is either seen here or
// refused (see PutSignal).
func (s *Store) CompleteUnlessSignalled(ctx context.Context, orgID, executionID, leafID string, known []string, tr Transition) (Execution, []Signal, error) {
	op := "complete " + executionID
	ids, err := readIDs(op, orgID, executionID)
	if err != nil {
		return Execution{}, nil, err
	}
	if !tr.To.Valid() {
		return Execution{}, nil, errf(op, ErrInvalid, "status %q", tr.To)
	}
	if known == nil {
		known = []string{}
	}
	var ex Execution
	var pending []Signal
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		cur, err := queryOne[Execution](ctx, tx, `SELECT `+executionCols+` FROM agent_execution
			WHERE org_id = $1 AND id = $2 FOR UPDATE`, ids[0], ids[1])
		if err != nil {
			return wrap(op, err)
		}
		if cur.Status == tr.To {
			ex = utcExecution(cur)
			return nil
		}
		// A signal's entry has the key "signal/<id>" (ConsumeSignal).
		pending, err = queryAll[Signal](ctx, tx, `SELECT `+signalCols+` FROM agent_signal s
			WHERE agent_execution_id = $2 AND org_id = $1 AND NOT (id::text = ANY($3))
			  AND (NOT consumed OR EXISTS (SELECT 1 FROM agent_entry e WHERE e.agent_execution_id = $2
				AND e.idempotency_key = 'signal/' || s.id::text AND e.parent_id = nullif($4, '')::uuid))
			ORDER BY seq`, ids[0], ids[1], known, leafID)
		if err != nil || len(pending) > 0 {
			return wrap(op, err)
		}
		ex, err = updateStatus(ctx, tx, op, ids, cur.Version, tr)
		return err
	})
	if err != nil {
		return Execution{}, nil, err
	}
	return ex, utcAll(pending, Signal.utc), nil
}

// MarkSignalsConsumed marks signals consumed without an entry (those whose
// effect is not a message, such as cancel). Repeats are harmless; an ID the
// organization does not have is ErrNotFound, after the others are marked.
func (s *Store) MarkSignalsConsumed(ctx context.Context, orgID string, ids ...string) error {
	const op = "mark signals consumed"
	org, err := readIDs(op, orgID)
	if err != nil {
		return err
	}
	valid, err := writeIDs(op, ids...)
	if err != nil {
		return err
	}
	var found int
	err = s.pool.QueryRow(ctx, `
		WITH upd AS (
			UPDATE agent_signal SET consumed = true, consumed_at = coalesce(consumed_at, now())
			WHERE org_id = $1 AND id = ANY($2::uuid[]) RETURNING id
		) SELECT count(*) FROM upd`, org[0], valid).Scan(&found)
	if err != nil {
		return wrap(op, err)
	}
	if found < len(distinct(valid)) {
		return wrap(op, ErrNotFound)
	}
	return nil
}

func distinct(ss []string) map[string]struct{} {
	m := make(map[string]struct{}, len(ss))
	for _, s := range ss {
		m[s] = struct{}{}
	}
	return m
}
