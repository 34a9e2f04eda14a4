package adapter

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentree/agentree/entrystore"
)

// OpenStore connects to the Postgres side store at databaseURL (a URL or
// keyword/value string; the schema migrated already) with a pool sized as
// a worker's is (entrystore.PoolConfig), for a worker program that has no
// pool of its own to give Options.Store — the samples' workers. It pings
// once, so a wrong URL fails here rather than in the first activity.
// Close the pool (store.Pool().Close()) when done.
func OpenStore(ctx context.Context, databaseURL string) (*entrystore.Store, error) {
	cfg, err := entrystore.PoolConfig(databaseURL)
	if err != nil {
		return nil, fmt.Errorf("adapter: open store: %w", err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("adapter: open store: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("adapter: open store: %w", err)
	}
	return entrystore.New(pool), nil
}
