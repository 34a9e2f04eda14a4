package main

import (
	"cmp"
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
	"github.com/agentree/agentree/adapter/workerstore"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/telemetry"
	"github.com/agentree/agentree/internal/workerconfig"
	"github.com/agentree/agentree/migrations"
)

// services are the connections the worker and dev commands share.
type services struct {
	pool   *pgxpool.Pool
	store  *entrystore.Store
	tc     client.Client
	worker workerconfig.Worker
	// held is the worker's store, if it has one.
	held *workerstore.Store
}

func connect(ctx context.Context, cfg workerconfig.Config, tel *telemetry.Telemetry) (*services, error) {
	dbURL := os.Getenv("DATABASE_URL")
	if dbURL == "" {
		return nil, errors.New("DATABASE_URL must be set (make up; eval \"$(make -s env)\")")
	}
	topts, err := temporalOptions(cfg.Namespace)
	if err != nil {
		return nil, err
	}
	if err := migrations.ApplyURL(ctx, dbURL); err != nil {
		return nil, err
	}
	pool, err := newPool(ctx, dbURL, tel)
	if err != nil {
		return nil, err
	}
	store := entrystore.New(pool)
	// An MCP server's organizations are named by slug: one named before
	// its first key is made exists from here on.
	w, err := cfg.BuildFor(func(slug string) (string, error) {
		o, err := store.EnsureOrg(ctx, slug)
		return o.ID, err
	})
	if err != nil {
		pool.Close()
		return nil, err
	}
	connected := false
	defer func() {
		if !connected {
			_ = w.Close()
		}
	}()
	var held *workerstore.Store
	if w.WorkerStore.Dir != "" {
		if held, err = workerstore.Open(w.WorkerStore.Dir, w.WorkerStore.Name); err != nil {
			pool.Close()
			return nil, err
		}
	}
	orgTools, err := orgsByID(ctx, store, w.Orgs)
	if err != nil {
		pool.Close()
		return nil, err
	}
	plugin, err := adapter.NewPlugin(adapter.Options{Store: store, Agents: w.Agents, Providers: w.Providers, Tools: w.Tools, ToolPolicy: w.ToolPolicy, SafeCommands: w.SafeCommands,
		OrgTools: orgTools, ContextWindows: w.ContextWindows, PruneEvery: cmp.Or(w.PruneEvery, -1), Retention: w.Retention,
		WorkerStore: held, WorkerName: w.WorkerStore.Name, HolderGrace: w.WorkerStore.Grace, ActivityModelCalls: w.ActivityModelCalls,
		ActivityToolCalls: w.ActivityToolCalls,
		RemoteAgents:      w.RemoteAgents,
		MaxSleep:          w.MaxSleep,
		ExecutionEnded:    w.ExecutionEnded,
		Workspaces:        adapter.WorkspaceSnapshots{Root: w.SnapshotRoot, Limits: w.SnapshotLimits},
		TracerProvider:    tel.TracerProvider, MeterProvider: tel.MeterProvider})
	if err != nil {
		pool.Close()
		return nil, err
	}
	topts.Plugins = append(topts.Plugins, plugin)
	if err := tel.Instrument(&topts); err != nil {
		pool.Close()
		return nil, err
	}
	sdkLog, err := telemetry.NewLogger(os.Stderr, cfg.Observability.LogFormat, slog.LevelWarn)
	if err != nil {
		pool.Close()
		return nil, err
	}
	topts.Logger = tlog.NewStructuredLogger(sdkLog)
	tc, err := client.Dial(topts)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("temporal at %s: %w", topts.HostPort, err)
	}
	connected = true
	return &services{pool: pool, store: store, tc: tc, worker: w, held: held}, nil
}

// orgsByID keys the configuration's organizations by ID, creating any that
// does not exist yet: its slug is then held by the organization the
// operator configured, never by one created later that would get the
// worker-wide settings instead.
func orgsByID(ctx context.Context, store *entrystore.Store, bySlug map[string]agentsdk.OrgTools) (map[string]agentsdk.OrgTools, error) {
	if len(bySlug) == 0 {
		return nil, nil
	}
	out := make(map[string]agentsdk.OrgTools, len(bySlug))
	for slug, ot := range bySlug {
		org, err := store.EnsureOrg(ctx, slug)
		if err != nil {
			return nil, fmt.Errorf("worker config: orgs.%s: %w", slug, err)
		}
		out[org.ID] = ot
	}
	return out, nil
}

// startWorkers starts the worker on queue and, when it has a worker store,
// a second one on its own queue (adapter.WorkerQueue), where its worker-held
// executions run. stop stops them all.
func (s *services) startWorkers(queue string) (stop func(), err error) {
	queues := []string{queue}
	if s.held != nil {
		queues = append(queues, adapter.WorkerQueue(queue, s.worker.WorkerStore.Name))
	}
	var started []worker.Worker
	stop = func() {
		for i := len(started) - 1; i >= 0; i-- {
			started[i].Stop()
		}
	}
	for _, q := range queues {
		w := worker.New(s.tc, q, worker.Options{})
		if err := w.Start(); err != nil {
			stop()
			return nil, err
		}
		started = append(started, w)
	}
	return stop, nil
}

// close runs after the worker stopped: no tool runs any more, so the MCP
// servers can go.
func (s *services) close() {
	_ = s.worker.Close()
	s.tc.Close()
	s.pool.Close()
	if s.held != nil {
		_ = s.held.Close()
	}
}

// runWorker runs a Temporal worker with the Agentree plugin until
// interrupted.
func runWorker(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	config := fs.String("config", "", "worker configuration file (default $"+workerconfig.EnvVar+", else built-in defaults; see agentree.example.yaml)")
	queue := fs.String("task-queue", "", "Temporal task queue (default: the configuration's, agentree)")
	namespace := fs.String("namespace", "", "Temporal namespace (default: the configuration's, else Temporal's environment configuration, else default)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, err := loadWorkerConfig(*config, *queue, *namespace)
	if err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	tel, stop, err := startTelemetry(ctx, "agentree-worker", cfg.Observability.MetricsAddr != "", cfg.Observability.LogFormat)
	if err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	defer stop()
	if cfg.Observability.MetricsAddr != "" {
		if err := serveMetrics(ctx, tel, cfg.Observability.MetricsAddr); err != nil {
			return fmt.Errorf("worker: %w", err)
		}
	}
	s, err := connect(ctx, cfg, tel)
	if err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	defer s.close()
	stopWorkers, err := s.startWorkers(cfg.TaskQueue)
	if err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	defer stopWorkers()
	_, providers, tools := names(s.worker)
	slog.Info("worker running", "taskQueue", cfg.TaskQueue, "providers", providers, "tools", tools)
	<-ctx.Done()
	return nil
}

// newPool connects to Postgres with every statement traced by tel.
func newPool(ctx context.Context, dbURL string, tel *telemetry.Telemetry) (*pgxpool.Pool, error) {
	cfg, err := entrystore.PoolConfig(dbURL)
	if err != nil {
		return nil, err
	}
	tel.InstrumentPool(cfg)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	return pool, nil
}
