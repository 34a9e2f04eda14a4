package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/migrations"
)

// services are the connections the worker and dev commands share.
type services struct {
	pool  *pgxpool.Pool
	store *entrystore.Store
	tc    client.Client
	reg   registry
}

func connect(ctx context.Context, namespace string) (*services, error) {
	dbURL, temporalAddr := os.Getenv("DATABASE_URL"), os.Getenv("TEMPORAL_ADDRESS")
	if dbURL == "" || temporalAddr == "" {
		return nil, errors.New("DATABASE_URL and TEMPORAL_ADDRESS must be set (make up; eval \"$(make -s env)\")")
	}
	if err := migrations.ApplyURL(ctx, dbURL); err != nil {
		return nil, err
	}
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	reg, err := newRegistry()
	if err != nil {
		pool.Close()
		return nil, err
	}
	store := entrystore.New(pool)
	plugin, err := adapter.NewPlugin(adapter.Options{Store: store, Agents: reg.agents, Providers: reg.providers, Tools: reg.tools})
	if err != nil {
		pool.Close()
		return nil, err
	}
	tc, err := client.Dial(client.Options{
		HostPort: temporalAddr, Namespace: namespace, Plugins: []client.Plugin{plugin},
		Logger: tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))),
	})
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("temporal at %s: %w", temporalAddr, err)
	}
	return &services{pool: pool, store: store, tc: tc, reg: reg}, nil
}

func (s *services) close() {
	s.tc.Close()
	s.pool.Close()
}

// runWorker runs a Temporal worker with the Agentree plugin until
// interrupted.
func runWorker(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	queue := fs.String("task-queue", entrystore.DefaultQueue, "Temporal task queue")
	namespace := fs.String("namespace", "default", "Temporal namespace")
	if err := fs.Parse(args); err != nil {
		return err
	}
	s, err := connect(ctx, *namespace)
	if err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	defer s.close()
	w := worker.New(s.tc, *queue, worker.Options{})
	if err := w.Start(); err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	defer w.Stop()
	_, providers, tools := s.reg.names()
	slog.Info("worker running", "taskQueue", *queue, "providers", providers, "tools", tools)
	<-ctx.Done()
	return nil
}
