package entrystore

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/agentree/agentree/internal/domain"
)

// Checkpoint is the state a segment hands to the next (domain.Checkpoint).
type Checkpoint = domain.Checkpoint

const checkpointCols = `id::text AS id, org_id::text AS org_id, agent_execution_id::text AS execution_id,
	sequence, coalesce(leaf_entry_id::text, '') AS leaf_entry_id, state, metadata, created_at`

// utcCheckpoint reports c's time in UTC.
func utcCheckpoint(c Checkpoint) Checkpoint { c.CreatedAt = c.CreatedAt.UTC(); return c }

// AppendCheckpoint records c and sets the execution's current checkpoint in
// the same statement. Its sequence must exceed every earlier one of the
// execution (else ErrConflict), so a replayed or stale segment can never move
// an execution backwards. The leaf, if given, must be an entry of the
// execution.
func (s *Store) AppendCheckpoint(ctx context.Context, c Checkpoint) (Checkpoint, error) {
	args, err := checkpointArgs(c)
	if err != nil {
		return Checkpoint{}, err
	}
	out, err := queryOne[Checkpoint](ctx, s.pool, appendCheckpointSQL, args...)
	return checkpointAppended(ctx, s.pool, out, err, args)
}

// appendCheckpointOp names AppendCheckpoint's errors.
const appendCheckpointOp = "append checkpoint"

// checkpointArgs checks c and returns appendCheckpointSQL's parameters:
// $1 organization, $2 execution, $3 sequence, $4 leaf.
func checkpointArgs(c Checkpoint) ([]any, error) {
	const op = appendCheckpointOp
	ids, err := writeIDs(op, c.OrgID, c.ExecutionID)
	if err != nil {
		return nil, err
	}
	leaf, ok := optID(c.LeafEntryID)
	if !ok {
		return nil, errf(op, ErrInvalid, "malformed leaf id %q", c.LeafEntryID)
	}
	if c.Sequence < 0 {
		return nil, errf(op, ErrInvalid, "negative sequence %d", c.Sequence)
	}
	return []any{ids[0], ids[1], c.Sequence, nullIfEmpty(leaf), jsonOr(c.State, "{}"), nullJSON(c.Metadata), c.Steps}, nil
}

// checkpointAppended is AppendCheckpoint's answer to what its statement,
// run with args, returned: when it inserted nothing, why.
func checkpointAppended(ctx context.Context, q querier, out Checkpoint, err error, args []any) (Checkpoint, error) {
	if errors.Is(err, errNoRows) {
		leaf, _ := args[3].(string) // nil: no leaf
		return Checkpoint{}, checkpointRefused(ctx, q, args[0].(string), args[1].(string), leaf, args[2].(int))
	}
	return utcCheckpoint(out), wrap(appendCheckpointOp, err)
}

// appendCheckpointSQL is AppendCheckpoint's one statement: the execution
// row's UPDATE serialises appends per execution, and its condition is
// checked again on the row's newest version when it waited for the lock
// (current_checkpoint_seq is the latest checkpoint's sequence: it is set
// only here). Sequence 0, which the row's 0 cannot tell from "none",
// passes it while the row says 0; a second 0 then breaks the unique
// (execution, sequence): ErrConflict as well. A round trip instead of
// four (BEGIN, lock, insert, COMMIT) at every turn.
const appendCheckpointSQL = `
	WITH x AS (
		UPDATE agent_execution SET current_checkpoint_seq = $3, step_count = step_count + $7, updated_at = now()
		WHERE id = $2 AND org_id = $1 AND (current_checkpoint_seq < $3 OR (current_checkpoint_seq = 0 AND $3 = 0))
		  AND ($4::uuid IS NULL OR EXISTS (
			SELECT 1 FROM agent_entry WHERE id = $4::uuid AND agent_execution_id = $2 AND org_id = $1))
		RETURNING id
	), ins AS (
		INSERT INTO agent_checkpoint (org_id, agent_execution_id, sequence, leaf_entry_id, state, metadata)
		SELECT $1, $2, $3, $4::uuid, $5, $6 FROM x
		RETURNING *
	)
	SELECT ` + checkpointCols + ` FROM ins`

// checkpointRefused says why AppendCheckpoint inserted nothing.
func checkpointRefused(ctx context.Context, q querier, orgID, executionID, leaf string, seq int) error {
	const op = "append checkpoint"
	var latest *int
	var found bool
	if err := q.QueryRow(ctx, `SELECT (SELECT max(sequence) FROM agent_checkpoint WHERE agent_execution_id = $1),
			EXISTS (SELECT 1 FROM agent_execution WHERE id = $1 AND org_id = $2)`,
		executionID, orgID).Scan(&latest, &found); err != nil {
		return wrap(op, err)
	}
	switch {
	case !found:
		return errf(op, ErrNotFound, "execution %s", executionID)
	case latest != nil && seq <= *latest:
		return errf(op, ErrConflict, "sequence %d is not after %d", seq, *latest)
	}
	return errf(op, ErrInvalid, "leaf %s is not an entry of execution %s", leaf, executionID)
}

// LatestCheckpoint returns the execution's highest-sequence checkpoint: where
// a restarted execution resumes.
func (s *Store) LatestCheckpoint(ctx context.Context, orgID, executionID string) (Checkpoint, error) {
	op := "latest checkpoint of " + executionID
	ids, err := readIDs(op, orgID, executionID)
	if err != nil {
		return Checkpoint{}, err
	}
	c, err := queryOne[Checkpoint](ctx, s.pool, `SELECT `+checkpointCols+` FROM agent_checkpoint
		WHERE agent_execution_id = $2 AND org_id = $1 ORDER BY sequence DESC LIMIT 1`, ids[0], ids[1])
	return utcCheckpoint(c), wrap(op, err)
}

// GetCheckpoint returns the checkpoint with sequence seq.
func (s *Store) GetCheckpoint(ctx context.Context, orgID, executionID string, seq int) (Checkpoint, error) {
	op := "get checkpoint " + executionID
	ids, err := readIDs(op, orgID, executionID)
	if err != nil {
		return Checkpoint{}, err
	}
	c, err := queryOne[Checkpoint](ctx, s.pool, `SELECT `+checkpointCols+` FROM agent_checkpoint
		WHERE agent_execution_id = $2 AND sequence = $3 AND org_id = $1`, ids[0], ids[1], seq)
	return utcCheckpoint(c), wrap(op, err)
}

// ListCheckpoints pages through an execution's checkpoints by sequence.
func (s *Store) ListCheckpoints(ctx context.Context, orgID, executionID string, p Page) ([]Checkpoint, string, error) {
	const op = "list checkpoints"
	ids, k, after, err := listStart(op, p, false, orgID, executionID)
	if err != nil {
		return nil, "", err
	}
	from := int64(-1)
	if after {
		from = k.N
	}
	cs, next, err := listPage(ctx, s.pool, p, pgx.RowToStructByName[Checkpoint], func(c Checkpoint) keyset { return keyset{N: int64(c.Sequence)} },
		`SELECT `+checkpointCols+` FROM agent_checkpoint
		WHERE agent_execution_id = $2 AND org_id = $1 AND sequence > $3 ORDER BY sequence LIMIT $4`,
		ids[0], ids[1], from, p.limit()+1)
	if err != nil {
		return nil, "", wrap(op, err)
	}
	return utcAll(cs, utcCheckpoint), next, nil
}

// ReplaceCheckpoint rewrites the execution's latest checkpoint, which must
// have c's sequence, with c's leaf, state and metadata: a segment run
// again after the workflow task that first ran it was lost, which took
// another way to the same sequence (a signal it now sees earlier). The
// engine checks the new leaf extends the old. ErrNotFound when the
// latest checkpoint has another sequence or the leaf is not the
// execution's.
func (s *Store) ReplaceCheckpoint(ctx context.Context, c Checkpoint) (Checkpoint, error) {
	const op = "replace checkpoint"
	ids, err := writeIDs(op, c.OrgID, c.ExecutionID)
	if err != nil {
		return Checkpoint{}, err
	}
	leaf, ok := optID(c.LeafEntryID)
	if !ok {
		return Checkpoint{}, errf(op, ErrInvalid, "malformed leaf id %q", c.LeafEntryID)
	}
	out, err := queryOne[Checkpoint](ctx, s.pool, `
		UPDATE agent_checkpoint SET leaf_entry_id = $4::uuid, state = $5, metadata = $6
		WHERE org_id = $1 AND agent_execution_id = $2 AND sequence = $3
		  AND sequence = (SELECT max(sequence) FROM agent_checkpoint WHERE agent_execution_id = $2)
		  AND ($4::uuid IS NULL OR EXISTS (
			SELECT 1 FROM agent_entry WHERE id = $4::uuid AND agent_execution_id = $2 AND org_id = $1))
		RETURNING `+checkpointCols,
		ids[0], ids[1], c.Sequence, nullIfEmpty(leaf), jsonOr(c.State, "{}"), nullJSON(c.Metadata))
	if errors.Is(err, errNoRows) {
		return Checkpoint{}, errf(op, ErrNotFound, "checkpoint %d is not the latest of %s", c.Sequence, c.ExecutionID)
	}
	return utcCheckpoint(out), wrap(op, err)
}
