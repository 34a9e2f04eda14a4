package sampleenv

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	tlog "go.temporal.io/sdk/log"

	aclient "github.com/agentree/agentree/adapter/client"
	"github.com/agentree/agentree/entrystore"
)

// OrgSlug is the organization every sample's executions belong to.
const OrgSlug = "samples"

// Conn is a starter's connection: the store, a Temporal client and the
// samples' organization.
type Conn struct {
	Store    *entrystore.Store
	Temporal client.Client
	Org      entrystore.Org
	close    func()
	// stop ends the no-worker watch (WatchForWorker) when the starter
	// closes the connection.
	watch context.Context
	stop  context.CancelFunc
}

// Connect opens a starter's connection. Close it when done.
func Connect(ctx context.Context) (*Conn, error) {
	store, closeStore, err := OpenStore(ctx)
	if err != nil {
		return nil, err
	}
	c, err := Dial(store)
	if err != nil {
		closeStore()
		return nil, err
	}
	org, err := store.EnsureOrg(ctx, OrgSlug)
	if err != nil {
		c.Close()
		closeStore()
		return nil, fmt.Errorf("sampleenv: organization %q: %w", OrgSlug, err)
	}
	watch, stop := context.WithCancel(context.Background())
	return &Conn{Store: store, Temporal: c, Org: org, close: func() { c.Close(); closeStore() }, watch: watch, stop: stop}, nil
}

// Close closes the Temporal client and the Postgres pool.
func (c *Conn) Close() { c.stop(); c.close() }

// Agentree is an execution client that starts executions on taskQueue. It
// writes the store first, then Temporal, so nothing the workflow needs is
// ever only in flight. When no worker polls taskQueue within a few seconds
// the starter says so (WatchForWorker).
func (c *Conn) Agentree(taskQueue string) *aclient.Client {
	c.WatchForWorker(taskQueue)
	return aclient.NewClient(c.Temporal, c.Store, taskQueue)
}

// WatchForWorker is WatchForWorker on stderr for the connection's life,
// for starters that start workflows on taskQueue themselves.
func (c *Conn) WatchForWorker(taskQueue string) {
	_ = WatchForWorker(c.watch, c.Temporal, taskQueue, os.Stderr)
}

// OpenStore connects to DATABASE_URL. Call the returned func to close the
// pool. The schema must be migrated already (`make up` does it).
func OpenStore(ctx context.Context) (*entrystore.Store, func(), error) {
	url := os.Getenv("DATABASE_URL")
	if url == "" {
		return nil, nil, errors.New(`DATABASE_URL is not set: run "make up" and eval "$(make -s env)"`)
	}
	// Sized as the agentree worker's pool is: a sample's worker runs its
	// executions' store operations on it.
	cfg, err := entrystore.PoolConfig(url)
	if err != nil {
		return nil, nil, fmt.Errorf("sampleenv: %w", err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("sampleenv: connect to Postgres: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, nil, fmt.Errorf("sampleenv: connect to Postgres: %w", err)
	}
	return entrystore.New(pool), pool.Close, nil
}

// Dial connects to the Temporal server at TEMPORAL_ADDRESS (default
// localhost:7233). A worker passes the Agentree plugin; a starter passes
// none and still gets the Postgres storage driver, because an execution's
// result past the plugin's payload threshold lives in the content store and
// only that driver can read it back.
func Dial(store *entrystore.Store, plugins ...client.Plugin) (client.Client, error) {
	c, err := client.Dial(client.Options{
		HostPort: os.Getenv("TEMPORAL_ADDRESS"),
		Plugins:  plugins,
		// The SDK's default logger writes a DEBUG line per activity; the
		// samples' output is the agent's, so only warnings get through.
		Logger: tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))),
		ExternalStorage: converter.ExternalStorage{
			Drivers: []converter.StorageDriver{aclient.NewStorageDriver(store)},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("sampleenv: connect to Temporal: %w", err)
	}
	return c, nil
}
