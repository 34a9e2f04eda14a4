package entrystore

import (
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
)

// DefaultPoolConns is the most connections a pool made by PoolConfig holds
// when the database URL does not say (pool_max_conns). pgxpool's own
// default, max(4, CPUs), is sized for CPU-bound clients; a worker's store
// operations wait on Postgres, and a worker runs hundreds of them at once
// (every conversation's steps). On `make bench`'s concurrent scenario (200
// conversations, 2 cores) 4 connections made a model call's p99 overhead
// 240–310 ms and 10 made it 119 ms, at the same throughput. Past a few
// workers, size it to what Postgres's max_connections shares out.
const DefaultPoolConns = 10

// DefaultMinPoolConns is how many connections a pool made by PoolConfig
// keeps open when the database URL does not say (pool_min_conns). A pool
// opens them in the background as it starts, so a worker that replaces a
// dead one takes its first steps on connections ready for them: on `make
// bench`'s resume scenario, a cold pool made the replacement's first tool
// call take about 100 ms (each step's statements waiting on a new
// connection) and a warm one about 30 ms.
const DefaultMinPoolConns = 4

// PoolConfig parses a database URL (or keyword/value string) into a pool
// configuration whose MaxConns is DefaultPoolConns and MinConns
// DefaultMinPoolConns unless the string sets pool_max_conns or
// pool_min_conns.
func PoolConfig(dbURL string) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	// ParseConfig takes pool_max_conns out of the connection settings and
	// leaves no sign it was there: the string itself says, in either form.
	if !strings.Contains(dbURL, "pool_max_conns") {
		cfg.MaxConns = DefaultPoolConns
	}
	if !strings.Contains(dbURL, "pool_min_conns") {
		cfg.MinConns = min(DefaultMinPoolConns, cfg.MaxConns)
	}
	return cfg, nil
}
