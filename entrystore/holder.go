package entrystore

import (
	"context"
	"time"
)

// ClaimHolder makes worker (polling queue) the holder of the execution's
// worker store, unless another worker holds it already, and returns the
// holder's name and queue: a worker-held execution's conversation lives on
// the first worker that ran it and nowhere else.
func (s *Store) ClaimHolder(ctx context.Context, orgID, executionID, worker, queue string) (string, string, error) {
	op := "claim holder " + executionID
	ids, err := writeIDs(op, orgID, executionID)
	if err != nil {
		return "", "", err
	}
	var holder, holderQueue string
	err = s.pool.QueryRow(ctx, `
		WITH claim AS (
			UPDATE agent_execution SET local_worker = $3, local_queue = $4
			WHERE org_id = $1 AND id = $2 AND local_worker IS NULL
			RETURNING local_worker, local_queue
		)
		SELECT local_worker, local_queue FROM claim
		UNION ALL
		SELECT local_worker, local_queue FROM agent_execution
		WHERE org_id = $1 AND id = $2 AND local_worker IS NOT NULL AND NOT EXISTS (SELECT 1 FROM claim)`,
		ids[0], ids[1], worker, queue).Scan(&holder, &holderQueue)
	return holder, holderQueue, wrap(op, err)
}

// Holding is a live worker-held execution and where its store lives.
type Holding struct {
	OrgID        string     `db:"org_id"`
	ExecutionID  string     `db:"id"`
	Worker       string     `db:"local_worker"`
	Queue        string     `db:"local_queue"`
	MissingSince *time.Time `db:"local_missing_since"`
	// Live says a worker polls Queue now (its capability lease holds).
	Live bool `db:"live"`
}

// Holdings lists live worker-held executions (at most limit) with
// whether a worker on their queue is alive.
func (s *Store) Holdings(ctx context.Context, limit int) ([]Holding, error) {
	hs, err := queryAll[Holding](ctx, s.pool, `
		SELECT x.org_id::text AS org_id, x.id::text AS id, x.local_worker, x.local_queue, x.local_missing_since,
			EXISTS (SELECT 1 FROM worker_capability w WHERE w.task_queue = x.local_queue AND w.lease_expires_at > now()) AS live
		FROM agent_execution x
		WHERE x.local_queue IS NOT NULL AND x.status IN ('PENDING', 'RUNNING', 'WAITING', 'CANCELLING')
		ORDER BY x.local_missing_since NULLS LAST
		LIMIT $1`, limit)
	return hs, wrap("holdings", err)
}

// SetHolderMissing records since as when the execution's store holder was
// first found gone (nil: it is back). It returns the recorded time: the
// first one, when it was set before.
func (s *Store) SetHolderMissing(ctx context.Context, orgID, executionID string, since *time.Time) (*time.Time, error) {
	op := "set holder missing " + executionID
	ids, err := writeIDs(op, orgID, executionID)
	if err != nil {
		return nil, err
	}
	var got *time.Time
	err = s.pool.QueryRow(ctx, `UPDATE agent_execution
		SET local_missing_since = CASE WHEN $3::timestamptz IS NULL THEN NULL ELSE coalesce(local_missing_since, $3) END
		WHERE org_id = $1 AND id = $2 RETURNING local_missing_since`, ids[0], ids[1], since).Scan(&got)
	return got, wrap(op, err)
}

// SignalState is whether the signal was consumed, and whose it is.
func (s *Store) SignalState(ctx context.Context, orgID, signalID string) (executionID string, consumed bool, err error) {
	op := "signal state " + signalID
	ids, err := readIDs(op, orgID, signalID)
	if err != nil {
		return "", false, err
	}
	err = s.pool.QueryRow(ctx, `SELECT agent_execution_id::text, consumed FROM agent_signal WHERE id = $2 AND org_id = $1`,
		ids[0], ids[1]).Scan(&executionID, &consumed)
	return executionID, consumed, wrap(op, err)
}

// MarkSignalConsumed marks a signal consumed whose entry is kept
// elsewhere (a worker-held execution's store). Marking it again changes nothing.
func (s *Store) MarkSignalConsumed(ctx context.Context, orgID, signalID string) error {
	op := "mark signal consumed " + signalID
	ids, err := writeIDs(op, orgID, signalID)
	if err != nil {
		return err
	}
	_, err = s.pool.Exec(ctx, `UPDATE agent_signal SET consumed = true, consumed_at = coalesce(consumed_at, now())
		WHERE id = $2 AND org_id = $1`, ids[0], ids[1])
	return wrap(op, err)
}
