package entrystore

import (
	"context"
	"errors"

	"github.com/agentree/agentree/internal/domain"
)

// Transition is a status change and what comes with it
// (domain.Transition).
type Transition = domain.Transition

// maxTransitionAttempts bounds Transition's read-and-swap loop; each retry
// means another writer won, so a handful is plenty.
const maxTransitionAttempts = 16

// UpdateStatus applies tr if the execution is still at expectedVersion and
// the move is allowed from its current status (see Transition); otherwise
// ErrConflict. It bumps version and updated_at, sets started_at the first
// time the execution runs and completed_at when it ends.
func (s *Store) UpdateStatus(ctx context.Context, orgID, id string, expectedVersion int, tr Transition) (Execution, error) {
	op := "update status " + id
	ids, err := readIDs(op, orgID, id)
	if err != nil {
		return Execution{}, err
	}
	if !tr.To.Valid() {
		return Execution{}, errf(op, ErrInvalid, "status %q", tr.To)
	}
	if expectedVersion < 0 {
		return Execution{}, errf(op, ErrInvalid, "version %d", expectedVersion)
	}
	return updateStatus(ctx, s.pool, op, ids, expectedVersion, tr)
}

// moveStatusSQL moves an execution (org $1, id $2) to status $4 from one
// of the statuses $8, with error $5, stop reason $6, output $7 and $9 steps
// (see Transition), if it is still at version $3 — or, with $3 = anyVersion,
// at whatever version, unless it is at status $4 already (a no-op the
// caller reads instead). It returns the moved row.
const moveStatusSQL = moveStatusUpdate + ` RETURNING ` + executionCols

// moveStatusUpdate is moveStatusSQL without its RETURNING, for a move
// under one more condition.
const moveStatusUpdate = `
		UPDATE agent_execution SET
			status = $4,
			error = CASE WHEN $5 <> '' THEN $5 ELSE error END,
			stop_reason = CASE WHEN $6 <> '' THEN $6 ELSE stop_reason END,
			output = coalesce($7::jsonb, output),
			started_at = CASE WHEN $4 = 'RUNNING' THEN coalesce(started_at, now()) ELSE started_at END,
			completed_at = CASE WHEN $4 IN ('COMPLETED', 'FAILED', 'CANCELLED', 'PAUSED') THEN coalesce(completed_at, now())
				ELSE completed_at END,
			step_count = step_count + CASE WHEN status <> $4 THEN $9 ELSE 0 END,
			version = version + 1,
			updated_at = now()
		WHERE org_id = $1 AND id = $2 AND status = ANY($8)
			AND CASE WHEN $3 = -1 THEN status <> $4 ELSE version = $3 END`

// anyVersion is moveStatusSQL's "whatever the version".
const anyVersion = -1

// updateStatus is UpdateStatus on q, so a transaction that has checked
// more than the version (CompleteUnlessSignalled) can make the same move.
func updateStatus(ctx context.Context, q querier, op string, ids []string, expectedVersion int, tr Transition) (Execution, error) {
	e, err := moveStatus(ctx, q, ids, expectedVersion, tr)
	if !errors.Is(err, errNoRows) {
		return e, wrap(op, err)
	}
	cur, err := getExecution(ctx, q, ids[0], ids[1])
	if err != nil {
		return Execution{}, err
	}
	if cur.Version != expectedVersion {
		return Execution{}, errf(op, ErrConflict, "version %d, expected %d", cur.Version, expectedVersion)
	}
	return Execution{}, errf(op, ErrConflict, "cannot move from %s to %s", cur.Status, tr.To)
}

// moveStatus runs moveStatusSQL on q; errNoRows when it moved nothing.
func moveStatus(ctx context.Context, q querier, ids []string, version int, tr Transition) (Execution, error) {
	e, err := queryOne[Execution](ctx, q, moveStatusSQL, moveStatusArgs(ids, version, tr)...)
	return utcExecution(e), err
}

// moveStatusArgs are moveStatusSQL's parameters.
func moveStatusArgs(ids []string, version int, tr Transition) []any {
	return []any{ids[0], ids[1], version, string(tr.To), tr.Error, tr.StopReason, nullJSON(tr.Output), allowedFrom(tr.To), tr.Steps}
}

// isNoRows reports whether a statement that returns one row returned none.
func isNoRows(err error) bool { return errors.Is(err, errNoRows) }

// Transition moves the execution to tr.To whatever its version, retrying on
// a concurrent writer. Moving to the current status is a no-op that returns
// the row; a terminal status is final; CANCELLING may only end (CANCELLED,
// FAILED or COMPLETED); any live status may go to CANCELLING.
func (s *Store) Transition(ctx context.Context, orgID, id string, tr Transition) (Execution, error) {
	op := "transition " + id
	if !tr.To.Valid() {
		return Execution{}, errf(op, ErrInvalid, "status %q", tr.To)
	}
	ids, err := readIDs(op, orgID, id)
	if err != nil {
		return Execution{}, err
	}
	// The common case in one statement: the move is allowed from the
	// status the row has now, which the statement's guard checks as it
	// writes. A turn begins and ends with a Transition; the read-and-swap
	// below made each two round trips.
	e, err := moveStatus(ctx, s.pool, ids, anyVersion, tr)
	if !errors.Is(err, errNoRows) {
		return e, wrap(op, err)
	}
	// Not moved: the execution is missing, at tr.To already (a no-op), or
	// at a status it may not leave for tr.To; the read says which.
	for range maxTransitionAttempts {
		cur, err := s.GetExecution(ctx, orgID, id)
		if err != nil {
			return Execution{}, err
		}
		if cur.Status == tr.To {
			return cur, nil
		}
		if !cur.Status.CanMoveTo(tr.To) {
			return Execution{}, errf(op, ErrConflict, "cannot move from %s to %s", cur.Status, tr.To)
		}
		e, err := s.UpdateStatus(ctx, orgID, id, cur.Version, tr)
		if !errors.Is(err, ErrConflict) {
			return e, err
		}
		if err := ctx.Err(); err != nil {
			return Execution{}, wrap(op, err)
		}
	}
	return Execution{}, errf(op, ErrConflict, "gave up after %d concurrent updates", maxTransitionAttempts)
}

// AddSteps adds n to the execution's cumulative step count, which carries
// across resumes. It leaves version alone: version guards status changes,
// and counting steps must not make a concurrent Transition retry.
func (s *Store) AddSteps(ctx context.Context, orgID, id string, n int) error {
	op := "add steps " + id
	ids, err := readIDs(op, orgID, id)
	if err != nil {
		return err
	}
	if n < 0 {
		return errf(op, ErrInvalid, "negative step count %d", n)
	}
	tag, err := s.pool.Exec(ctx,
		`UPDATE agent_execution SET step_count = step_count + $3, updated_at = now() WHERE org_id = $1 AND id = $2`,
		ids[0], ids[1], n)
	if err != nil {
		return wrap(op, err)
	}
	if tag.RowsAffected() == 0 {
		return wrap(op, ErrNotFound)
	}
	return nil
}
