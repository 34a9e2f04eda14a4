package main

import (
	"context"
	"fmt"
	"github.com/agentree/agentree/internal/telemetry"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/adapter/localstore"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/entrystore"
)

// queues are the task queues of the two systems under test.
type queues struct{ Agentree, Naive, Traced string }

// of is the named system's queue.
func (q queues) of(system string) string {
	switch system {
	case nameNaive:
		return q.Naive
	case nameTraced:
		return q.Traced
	}
	return q.Agentree
}

// workerOptions are the one set of worker settings both systems run with.
func workerOptions() worker.Options { return worker.Options{} }

// systemOptions configure the workers of both systems.
type systemOptions struct {
	TemporalAddress string
	Queues          queues
	ModelDelay      time.Duration
	// ToolHeartbeat is Agentree's ToolHeartbeatTimeout (0 = its default);
	// the naive agent takes its own from its input.
	ToolHeartbeat time.Duration
	Record        recorder
	// Block, if set, may hold a tool call until its process dies.
	Block func(ctx context.Context, step int)
}

// systems are both systems' Temporal clients and workers on one server:
// Agentree, a client with its plugin; the naive pattern, a plain client
// with Temporal's default payload handling, as its integrations have. Each
// has a worker on a task queue of its own, with the same settings.
type systems struct {
	agentree, naive client.Client
	// traced is Agentree's client with tracing on (its worker polls
	// Queues.Traced).
	traced  client.Client
	workers []worker.Worker
	// local is the Agentree worker's local store, where executions in
	// persistenceMode local keep their conversations (the short
	// scenario's third column).
	local *localstore.Store
}

// benchWorkerName names the Agentree worker's local store and queue.
const benchWorkerName = "bench"

// dialSystems connects both clients and makes (but does not start) their
// workers. The naive worker also runs the floor workflow.
func dialSystems(store *entrystore.Store, o systemOptions) (*systems, error) {
	model := newModel(o.ModelDelay, o.Record)
	tool := newTool(o.Block)
	dir, err := os.MkdirTemp("", "agentree-bench-local-")
	if err != nil {
		return nil, err
	}
	local, err := localstore.Open(dir, benchWorkerName)
	if err != nil {
		return nil, err
	}
	plugin, err := adapter.NewPlugin(adapter.Options{
		Store: store, Agents: []agentsdk.Agent{react.New(react.Options{})},
		Providers: []agentsdk.Provider{model}, Tools: []*agentsdk.Tool{tool},
		ToolHeartbeatTimeout: o.ToolHeartbeat,
		LocalStore:           local, LocalName: benchWorkerName,
	})
	if err != nil {
		return nil, err
	}
	logger := quietLogger()
	s := &systems{local: local}
	s.agentree, err = client.Dial(client.Options{HostPort: o.TemporalAddress, Plugins: []client.Plugin{plugin}, Logger: logger})
	if err != nil {
		return nil, fmt.Errorf("bench: connect to Temporal: %w", err)
	}
	s.naive, err = client.Dial(client.Options{HostPort: o.TemporalAddress, Logger: logger})
	if err != nil {
		s.agentree.Close()
		return nil, fmt.Errorf("bench: connect to Temporal: %w", err)
	}
	tools, err := agentsdk.NewTools(tool)
	if err != nil {
		s.close()
		return nil, err
	}
	naive := &NaiveActivities{Model: model, Tools: tools}
	floor := &floorActivities{rec: o.Record}
	wn := worker.New(s.naive, o.Queues.Naive, workerOptions())
	wn.RegisterWorkflowWithOptions(NaiveAgent, workflow.RegisterOptions{Name: NaiveWorkflowName})
	wn.RegisterActivityWithOptions(naive.CallModel, activity.RegisterOptions{Name: NaiveModelActivity})
	wn.RegisterActivityWithOptions(naive.RunTool, activity.RegisterOptions{Name: NaiveToolActivity})
	wn.RegisterWorkflowWithOptions(FloorWorkflow, workflow.RegisterOptions{Name: FloorWorkflowName})
	wn.RegisterActivityWithOptions(floor.Noop, activity.RegisterOptions{Name: NoopActivity})
	s.workers = []worker.Worker{worker.New(s.agentree, o.Queues.Agentree, workerOptions()),
		worker.New(s.agentree, adapter.LocalQueue(o.Queues.Agentree, benchWorkerName), workerOptions()), wn}
	if o.Queues.Traced != "" {
		if err := s.dialTraced(store, o, model, tool, logger); err != nil {
			s.close()
			return nil, err
		}
	}
	return s, nil
}

// dialTraced adds Agentree with tracing on: its own plugin and client,
// every span recorded by the SDK's tracer provider (Temporal's interceptor
// included) and exported, synchronously, to an exporter that drops it.
func (s *systems) dialTraced(store *entrystore.Store, o systemOptions, model agentsdk.Provider, tool *agentsdk.Tool, logger tlog.Logger) error {
	tel, err := telemetry.New(context.Background(), telemetry.Config{SpanExporter: tracetest.NewNoopExporter(), Metrics: true})
	if err != nil {
		return err
	}
	plugin, err := adapter.NewPlugin(adapter.Options{
		Store: store, Agents: []agentsdk.Agent{react.New(react.Options{})},
		Providers: []agentsdk.Provider{model}, Tools: []*agentsdk.Tool{tool},
		ToolHeartbeatTimeout: o.ToolHeartbeat, TracerProvider: tel.TracerProvider, MeterProvider: tel.MeterProvider,
	})
	if err != nil {
		return err
	}
	co := client.Options{HostPort: o.TemporalAddress, Plugins: []client.Plugin{plugin}, Logger: logger}
	if err := tel.Instrument(&co); err != nil {
		return err
	}
	if s.traced, err = client.Dial(co); err != nil {
		return fmt.Errorf("bench: connect to Temporal: %w", err)
	}
	s.workers = append(s.workers, worker.New(s.traced, o.Queues.Traced, workerOptions()))
	return nil
}

// quietLogger is the Temporal clients' logger: errors only, to stderr.
func quietLogger() tlog.Logger {
	return tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
}

// start starts every worker.
func (s *systems) start() error {
	for _, w := range s.workers {
		if err := w.Start(); err != nil {
			return fmt.Errorf("bench: start worker: %w", err)
		}
	}
	return nil
}

// close stops the workers and closes the clients.
func (s *systems) close() {
	for _, w := range s.workers {
		w.Stop()
	}
	s.naive.Close()
	s.agentree.Close()
	if s.traced != nil {
		s.traced.Close()
	}
	if s.local != nil {
		_ = s.local.Close()
		_ = os.RemoveAll(filepath.Dir(s.local.File()))
	}
}
