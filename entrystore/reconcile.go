package entrystore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// The reconciler's reads span every organization: it finishes work a
// crashed gateway left half done, whoever it belongs to. Each is driven
// from the organization table so it walks the per-organization indexes
// (agent_execution_status, agent_signal_pending) rather than scanning.

// StalePendingExecutions returns executions still PENDING that were
// created more than olderThan ago (by the database's clock) and have no
// parent (a parent workflow starts its own children): candidates for a
// workflow that was never started. At most limit.
func (s *Store) StalePendingExecutions(ctx context.Context, olderThan time.Duration, limit int) ([]Execution, error) {
	const op = "stale pending executions"
	es, err := queryAll[Execution](ctx, s.pool, `SELECT x.* FROM organization o CROSS JOIN LATERAL (
			SELECT `+executionCols+` FROM agent_execution
			WHERE org_id = o.id AND status = 'PENDING' AND parent_id IS NULL
			  AND created_at < now() - make_interval(secs => $1)
			ORDER BY created_at DESC, id DESC LIMIT $2) x
		LIMIT $2`, olderThan.Seconds(), limit)
	return utcAll(es, utcExecution), wrap(op, err)
}

// StaleUnconsumedSignals returns signals stored more than olderThan ago
// and not yet consumed, of executions that are still live: candidates for
// a Temporal signal that was never sent. At most limit, in arrival order
// per execution.
func (s *Store) StaleUnconsumedSignals(ctx context.Context, olderThan time.Duration, limit int) ([]Signal, error) {
	const op = "stale unconsumed signals"
	sgs, err := queryAll[Signal](ctx, s.pool, `SELECT `+signalCols+` FROM agent_signal sg
		WHERE NOT consumed AND created_at < now() - make_interval(secs => $1)
		  AND EXISTS (SELECT 1 FROM agent_execution x WHERE x.id = sg.agent_execution_id
			AND x.status NOT IN ('COMPLETED', 'FAILED', 'CANCELLED', 'PAUSED'))
		ORDER BY agent_execution_id, seq LIMIT $2`, olderThan.Seconds(), limit)
	return utcAll(sgs, Signal.utc), wrap(op, err)
}

// TryExclusive runs fn if no other caller of TryExclusive with the same
// name holds it in this database schema, and reports whether it ran. The
// lock is a transaction-level advisory lock, so a caller that dies (or
// loses its connection) releases it at once; fn runs while it is held.
func (s *Store) TryExclusive(ctx context.Context, name string, fn func(context.Context) error) (bool, error) {
	op := "try exclusive " + name
	ran := false
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var got bool
		// Keyed by schema too: tests share one database, a schema each.
		if err := tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock(hashtext(current_schema() || '/' || $1))`, name).Scan(&got); err != nil {
			return wrap(op, err)
		}
		if !got {
			return nil
		}
		ran = true
		return fn(ctx)
	})
	return ran, err
}
