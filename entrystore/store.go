package entrystore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// SystemOrgID is the organization that owns payloads Temporal's external
// storage driver offloads; migration 0001 creates it.
const SystemOrgID = "00000000-0000-0000-0000-000000000000"

// Store is the side store. It is safe for concurrent use; all state is in
// Postgres.
type Store struct {
	pool *pgxpool.Pool
}

// New returns a Store over pool. The caller owns the pool (and closes it), so
// one pool can serve the store, LISTEN connections and migrations alike.
func New(pool *pgxpool.Pool) *Store {
	return &Store{pool: pool}
}

// Pool returns the injected pool, for callers that need a dedicated
// connection (LISTEN) on the same database.
func (s *Store) Pool() *pgxpool.Pool {
	return s.pool
}

// errNoRows is what CollectExactlyOneRow returns for an empty result.
var errNoRows = pgx.ErrNoRows

// querier is what both the pool and a transaction offer, so one helper can
// run standalone or inside pgx.BeginFunc.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// queryOne runs sql and scans its single row into T by column name.
func queryOne[T any](ctx context.Context, q querier, sql string, args ...any) (T, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		var zero T
		return zero, err
	}
	return pgx.CollectExactlyOneRow(rows, pgx.RowToStructByName[T])
}

// queryAll runs sql and scans every row into T by column name.
func queryAll[T any](ctx context.Context, q querier, sql string, args ...any) ([]T, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToStructByName[T])
}

// getOne reads row id of table, in the organization, through cols: the
// shape every single-item get shares. A malformed ID is ErrNotFound.
func getOne[T any](ctx context.Context, q querier, op, table, cols, orgID, id string) (T, error) {
	ids, err := readIDs(op, orgID, id)
	if err != nil {
		var zero T
		return zero, err
	}
	v, err := queryOne[T](ctx, q, `SELECT `+cols+` FROM `+table+` WHERE id = $2 AND org_id = $1`, ids[0], ids[1])
	return v, wrap(op, err)
}

// utcAll normalises the timestamps of every row of a list.
func utcAll[T any](rows []T, utc func(T) T) []T {
	for i := range rows {
		rows[i] = utc(rows[i])
	}
	return rows
}

// utcPtr normalises an optional timestamp; pgx hands back local time.
func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// nullJSON turns an empty document into SQL NULL for nullable columns.
func nullJSON(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}
