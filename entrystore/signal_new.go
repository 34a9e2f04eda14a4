package entrystore

import (
	"context"
	"errors"
)

// PutNewSignal is PutSignal for a message's first delivery, in one round
// trip: it stores sg for a live execution unless a signal with sg.ID is
// already stored, and returns it with the execution's traceparent (which
// the Temporal signal carries). stored is false when it stored nothing (a
// repeat of sg.ID, an ended execution, or none of that ID): the caller
// then reads why (GetSignal, GetExecution) as PutSignal's callers do.
func (s *Store) PutNewSignal(ctx context.Context, sg Signal) (out Signal, traceparent string, stored bool, err error) {
	const op = "put signal"
	_, args, err := signalArgs(op, sg)
	if err != nil {
		return Signal{}, "", false, err
	}
	// The share lock orders it with CompleteUnlessSignalled, as
	// PutSignal's does.
	row, err := queryOne[struct {
		Signal
		Traceparent string `db:"traceparent"`
	}](ctx, s.pool, `WITH x AS (
			SELECT traceparent FROM agent_execution WHERE id = $2 AND org_id = $1 AND `+signalableSQL+` FOR SHARE
		), ins AS (
			INSERT INTO agent_signal (id, org_id, agent_execution_id, signal_name, signal_value)
			SELECT coalesce($5::uuid, gen_random_uuid()), $1, $2, $3, $4 FROM x
			ON CONFLICT (id) DO NOTHING
			RETURNING `+signalCols+`)
		SELECT ins.*, x.traceparent FROM ins, x`, args...)
	if errors.Is(err, errNoRows) {
		return Signal{}, "", false, nil
	}
	if err != nil {
		return Signal{}, "", false, wrap(op, err)
	}
	return row.Signal.utc(), row.Traceparent, true, nil
}
