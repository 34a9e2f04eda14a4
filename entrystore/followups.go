package entrystore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// The statuses of a follow-up (migration 0022).
const (
	FollowUpScheduled   = "scheduled"
	FollowUpDelivered   = "delivered"
	FollowUpCancelled   = "cancelled"
	FollowUpUndelivered = "undelivered"
)

// FollowUp is a user message scheduled for delivery to an execution.
type FollowUp struct {
	ID          string    `db:"id"`
	OrgID       string    `db:"org_id"`
	ExecutionID string    `db:"agent_execution_id"`
	Text        string    `db:"text"`
	DeliverAt   time.Time `db:"deliver_at"`
	Status      string    `db:"status"`
	SignalID    string    `db:"signal_id"`
	Error       string    `db:"error"`
	CreatedAt   time.Time `db:"created_at"`
	UpdatedAt   time.Time `db:"updated_at"`
}

const followUpCols = `id::text, org_id::text, agent_execution_id::text, text, deliver_at, status,
	coalesce(signal_id::text, '') AS signal_id, error, created_at, updated_at`

// PutFollowUp stores a scheduled follow-up under f.ID; a repeat with the
// same ID returns the stored row unchanged (a retried request).
func (s *Store) PutFollowUp(ctx context.Context, f FollowUp) (FollowUp, error) {
	ids, err := writeIDs("put follow-up", f.ID, f.OrgID, f.ExecutionID)
	if err != nil {
		return FollowUp{}, err
	}
	rows, err := s.pool.Query(ctx, `
		WITH ins AS (
			INSERT INTO agent_followup (id, org_id, agent_execution_id, text, deliver_at)
			VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (id) DO NOTHING
			RETURNING `+followUpCols+`)
		SELECT * FROM ins
		UNION ALL
		SELECT `+followUpCols+` FROM agent_followup WHERE id = $1 AND org_id = $2 AND agent_execution_id = $3`,
		ids[0], ids[1], ids[2], f.Text, f.DeliverAt)
	if err != nil {
		return FollowUp{}, wrap("put follow-up", err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowToStructByName[FollowUp])
	if err != nil {
		return FollowUp{}, wrap("put follow-up", err)
	}
	if len(got) == 0 {
		return FollowUp{}, errf("put follow-up", ErrConflict, "follow-up %s belongs to another execution", f.ID)
	}
	return got[0], nil
}

// GetFollowUp returns one follow-up of an execution.
func (s *Store) GetFollowUp(ctx context.Context, orgID, executionID, id string) (FollowUp, error) {
	ids, err := readIDs("get follow-up", orgID, executionID, id)
	if err != nil {
		return FollowUp{}, err
	}
	rows, err := s.pool.Query(ctx, `SELECT `+followUpCols+` FROM agent_followup
		WHERE org_id = $1 AND agent_execution_id = $2 AND id = $3`, ids[0], ids[1], ids[2])
	if err != nil {
		return FollowUp{}, wrap("get follow-up", err)
	}
	f, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[FollowUp])
	return f, wrap("get follow-up", err)
}

// ListFollowUps pages through an execution's follow-ups, oldest first.
func (s *Store) ListFollowUps(ctx context.Context, orgID, executionID string, p Page) ([]FollowUp, string, error) {
	const op = "list follow-ups"
	ids, k, after, err := listStart(op, p, true, orgID, executionID)
	if err != nil {
		return nil, "", err
	}
	var w where
	w.and("org_id = ?", ids[0])
	w.and("agent_execution_id = ?", ids[1])
	if after {
		w.and("(created_at, id) > (?, ?::uuid)", k.T, k.ID)
	}
	out, next, err := listPage(ctx, s.pool, p, pgx.RowToStructByName[FollowUp],
		func(f FollowUp) keyset { return keyset{T: f.CreatedAt, ID: f.ID} },
		`SELECT `+followUpCols+` FROM agent_followup WHERE `+w.String()+` ORDER BY created_at, id LIMIT `+w.param(p.limit()+1), w.args...)
	if err != nil {
		return nil, "", wrap(op, err)
	}
	return out, next, nil
}

// SettleFollowUp moves a scheduled follow-up to status (delivered with its
// inbox row signalID, cancelled, or undelivered with why) and returns it;
// a delivered one may still become undelivered (its execution ended
// before the message could be stored).
// One already settled is returned as it is, with ErrConflict unless it
// was settled the same way (a repeat): a cancel and a delivery race, and
// exactly one wins.
func (s *Store) SettleFollowUp(ctx context.Context, orgID, executionID, id, status, signalID, why string) (FollowUp, error) {
	const op = "settle follow-up"
	ids, err := readIDs(op, orgID, executionID, id)
	if err != nil {
		return FollowUp{}, err
	}
	sig, ok := optID(signalID)
	if !ok {
		return FollowUp{}, errf(op, ErrInvalid, "malformed signal id %q", signalID)
	}
	rows, err := s.pool.Query(ctx, `
		UPDATE agent_followup SET status = $4, signal_id = nullif($5, '')::uuid, error = $6, updated_at = now()
		WHERE org_id = $1 AND agent_execution_id = $2 AND id = $3
			AND (status = 'scheduled' OR (status = 'delivered' AND $4 = 'undelivered'))
		RETURNING `+followUpCols, ids[0], ids[1], ids[2], status, sig, why)
	if err != nil {
		return FollowUp{}, wrap(op, err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowToStructByName[FollowUp])
	if err != nil {
		return FollowUp{}, wrap(op, err)
	}
	if len(got) == 1 {
		return got[0], nil
	}
	f, err := s.GetFollowUp(ctx, orgID, executionID, id)
	if err != nil {
		return f, err
	}
	if f.Status != status {
		return f, errf(op, ErrConflict, "follow-up %s is %s", id, f.Status)
	}
	return f, nil
}
