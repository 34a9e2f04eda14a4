package entrystore

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

// Idempotency is the stored state of one Idempotency-Key.
type Idempotency struct {
	OrgID       string `db:"org_id"`
	Key         string `db:"key"`
	Fingerprint string `db:"fingerprint"`
	// EffectID is chosen when the key is first reserved; the effect uses
	// it as its own ID (a created execution's), so running it again after
	// an interrupted attempt finds what the first one did.
	EffectID string `db:"effect_id"`
	// Status and Body are the first response; Status is 0 while in flight.
	Status    int       `db:"status"`
	Body      []byte    `db:"body"`
	ExpiresAt time.Time `db:"expires_at"`
}

// Reservation says what ReserveIdempotencyKey found.
type Reservation int

const (
	// Reserved: the key is new (or had expired); the caller runs the
	// request and then calls CompleteIdempotencyKey.
	Reserved Reservation = iota
	// TakenOver: an earlier request with the key never completed and its
	// lease ran out (it died, or was released); the caller holds the key
	// now, with the same EffectID.
	TakenOver
	// InFlight: another request with the key holds its lease.
	InFlight
	// Completed: the first response is stored; replay it.
	Completed
)

const idempotencyCols = `org_id::text AS org_id, key, fingerprint, effect_id::text AS effect_id,
	coalesce(status, 0) AS status, body, expires_at`

// ReserveIdempotencyKey claims key for a request with fingerprint, for lease
// (how long the caller may take before another may take over) and ttl (how
// long the record is kept). It reports what it found; the record returned
// is the stored one, whose Fingerprint the caller compares with its own
// (a key reused for another request). A key past its TTL counts as new.
func (s *Store) ReserveIdempotencyKey(ctx context.Context, orgID, key, fingerprint string, lease, ttl time.Duration) (Idempotency, Reservation, error) {
	const op = "reserve idempotency key"
	ids, err := writeIDs(op, orgID)
	if err != nil {
		return Idempotency{}, 0, err
	}
	var rec Idempotency
	var res Reservation
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM idempotency_key WHERE org_id = $1 AND key = $2 AND expires_at <= now()`,
			ids[0], key); err != nil {
			return err
		}
		rec, err = queryOne[Idempotency](ctx, tx, `
			INSERT INTO idempotency_key (org_id, key, fingerprint, effect_id, locked_until, expires_at)
			VALUES ($1, $2, $3, gen_random_uuid(), now() + $4::interval, now() + $5::interval)
			ON CONFLICT (org_id, key) DO NOTHING
			RETURNING `+idempotencyCols, ids[0], key, fingerprint, lease, ttl)
		if err == nil {
			res = Reserved
			return nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		var live bool
		rows, err := tx.Query(ctx, `SELECT `+idempotencyCols+`, coalesce(locked_until > now(), false) AS live
			FROM idempotency_key WHERE org_id = $1 AND key = $2 FOR UPDATE`, ids[0], key)
		if err != nil {
			return err
		}
		row, err := pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[struct {
			Idempotency
			Live bool `db:"live"`
		}])
		if err != nil {
			return err
		}
		rec, live = row.Idempotency, row.Live
		switch {
		case rec.Status != 0:
			res = Completed
		case live || rec.Fingerprint != fingerprint:
			res = InFlight
		default:
			res = TakenOver
			_, err = tx.Exec(ctx, `UPDATE idempotency_key SET locked_until = now() + $3::interval
				WHERE org_id = $1 AND key = $2`, ids[0], key, lease)
		}
		return err
	})
	rec.ExpiresAt = rec.ExpiresAt.UTC()
	return rec, res, wrap(op, err)
}

// CompleteIdempotencyKey stores the first response of the request holding
// the key's reservation with effectID; from then on it is replayed.
func (s *Store) CompleteIdempotencyKey(ctx context.Context, orgID, key, effectID string, status int, body []byte) error {
	const op = "complete idempotency key"
	ids, err := writeIDs(op, orgID, effectID)
	if err != nil {
		return err
	}
	_, err = s.pool.Exec(ctx, `UPDATE idempotency_key SET status = $4, body = $5, locked_until = NULL
		WHERE org_id = $1 AND key = $2 AND effect_id = $3 AND status IS NULL`, ids[0], key, ids[1], status, body)
	return wrap(op, err)
}

// ReleaseIdempotencyKey ends the reservation's lease without a response, so
// the next request with the key runs again (with the same EffectID): for a
// request that could not reach the store or Temporal.
func (s *Store) ReleaseIdempotencyKey(ctx context.Context, orgID, key, effectID string) error {
	const op = "release idempotency key"
	ids, err := writeIDs(op, orgID, effectID)
	if err != nil {
		return err
	}
	_, err = s.pool.Exec(ctx, `UPDATE idempotency_key SET locked_until = now()
		WHERE org_id = $1 AND key = $2 AND effect_id = $3 AND status IS NULL`, ids[0], key, ids[1])
	return wrap(op, err)
}

// PruneIdempotencyKeys deletes records past their TTL and says how many.
func (s *Store) PruneIdempotencyKeys(ctx context.Context) (int64, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM idempotency_key WHERE expires_at <= now()`)
	return tag.RowsAffected(), wrap("prune idempotency keys", err)
}
