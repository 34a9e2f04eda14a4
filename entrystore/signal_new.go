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
	ids, err := writeIDs(op, sg.OrgID, sg.ExecutionID)
	if err != nil {
		return Signal{}, "", false, err
	}
	if sg.Name == "" {
		return Signal{}, "", false, errf(op, ErrInvalid, "name is required")
	}
	var id any
	if sg.ID != "" {
		own, err := writeIDs(op, sg.ID)
		if err != nil {
			return Signal{}, "", false, err
		}
		id = own[0]
	}
	// The share lock orders it with CompleteUnlessSignalled, as
	// PutSignal's does.
	row, err := queryOne[struct {
		Signal
		Traceparent string `db:"traceparent"`
	}](ctx, s.pool, `WITH x AS (
			SELECT traceparent FROM agent_execution WHERE id = $2 AND org_id = $1
				AND status NOT IN ('COMPLETED', 'FAILED', 'CANCELLED', 'PAUSED', 'CANCELLING') FOR SHARE
		), ins AS (
			INSERT INTO agent_signal (id, org_id, agent_execution_id, signal_name, signal_value)
			SELECT coalesce($5::uuid, gen_random_uuid()), $1, $2, $3, $4 FROM x
			ON CONFLICT (id) DO NOTHING
			RETURNING `+signalCols+`)
		SELECT ins.*, x.traceparent FROM ins, x`, ids[0], ids[1], sg.Name, nullJSON(sg.Value), id)
	if errors.Is(err, errNoRows) {
		return Signal{}, "", false, nil
	}
	if err != nil {
		return Signal{}, "", false, wrap(op, err)
	}
	return row.Signal.utc(), row.Traceparent, true, nil
}
