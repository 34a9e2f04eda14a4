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
	"github.com/agentree/agentree/adapter/workerstore"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/agentsdk/scripted"
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
	// RecordEnd, if set, learns when each model call's answer is complete.
	RecordEnd recorder
	// Only, when set (nameAgentree or nameNaive), makes that system's
	// client and workers alone.
	Only string
	// TempDir holds the worker store's directory; "" is the system's. A
	// worker process that may be killed puts it in the bench's directory,
	// which the bench removes.
	TempDir string
	// Mode is how Agentree's worker runs its calls (the naive pattern's
	// mode is in each workflow's input).
	Mode mode
	// OnHeartbeat, if set, learns of every activity heartbeat a client
	// sends.
	OnHeartbeat func(n int64)
	// WorkerStore gives Agentree's worker a worker store (and the second
	// worker, on its own queue, that executions in persistenceMode local
	// need), as the bench's own process has for the short scenario's
	// agentree_local column. A worker process (concurrent, resume) runs
	// without one, as `agentree worker` does by default: one worker on the
	// queue, executions' conversations in Postgres.
	WorkerStore bool
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
	// held is the Agentree worker's store, where executions in
	// persistenceMode local keep their conversations (the short
	// scenario's third column).
	held *workerstore.Store
	// beats count each client's activity heartbeats (traced's are not
	// counted).
	agentreeBeats, naiveBeats heartbeatCounter
}

// benchWorkerName names the Agentree worker's store and queue.
const benchWorkerName = "bench"

// dialSystems connects both clients and makes (but does not start) their
// workers. The naive worker also runs the floor workflow. With o.Only set,
// only that system's client and workers.
func dialSystems(store *entrystore.Store, o systemOptions) (*systems, error) {
	model := newModel(o.ModelDelay, o.Record)
	var provider agentsdk.Provider = model
	if o.RecordEnd != nil {
		provider = endRecorder{model, o.RecordEnd}
	}
	tool := newTool(o.Block)
	// Agentree's own copy of the tool.
	atool := newTool(o.Block)
	logger := quietLogger()
	s := &systems{}
	s.agentreeBeats.on, s.naiveBeats.on = o.OnHeartbeat, o.OnHeartbeat
	if o.Only == "" || o.Only == nameAgentree {
		ao := adapter.Options{
			Store: store, Agents: []agentsdk.Agent{react.New(react.Options{})},
			Providers: []agentsdk.Provider{provider}, Tools: []*agentsdk.Tool{atool},
			ToolHeartbeatTimeout: o.ToolHeartbeat, ActivityModelCalls: o.Mode.ActivityModelCalls, ActivityToolCalls: o.Mode.ActivityToolCalls,
		}
		if o.WorkerStore {
			dir, err := os.MkdirTemp(o.TempDir, "agentree-bench-local-")
			if err != nil {
				return nil, err
			}
			if s.held, err = workerstore.Open(dir, benchWorkerName); err != nil {
				return nil, err
			}
			ao.WorkerStore, ao.WorkerName = s.held, benchWorkerName
		}
		plugin, err := adapter.NewPlugin(ao)
		if err != nil {
			s.close()
			return nil, err
		}
		co := client.Options{HostPort: o.TemporalAddress, Plugins: []client.Plugin{plugin}, Logger: logger}
		s.agentreeBeats.dial(&co)
		if s.agentree, err = client.Dial(co); err != nil {
			s.close()
			return nil, fmt.Errorf("bench: connect to Temporal: %w", err)
		}
		s.workers = append(s.workers, worker.New(s.agentree, o.Queues.Agentree, workerOptions()))
		if o.WorkerStore {
			s.workers = append(s.workers, worker.New(s.agentree, adapter.WorkerQueue(o.Queues.Agentree, benchWorkerName), workerOptions()))
		}
	}
	if o.Only == "" || o.Only == nameNaive {
		var err error
		co := client.Options{HostPort: o.TemporalAddress, Logger: logger}
		s.naiveBeats.dial(&co)
		if s.naive, err = client.Dial(co); err != nil {
			s.close()
			return nil, fmt.Errorf("bench: connect to Temporal: %w", err)
		}
		tools, err := agentsdk.NewTools(tool)
		if err != nil {
			s.close()
			return nil, err
		}
		naive := &NaiveActivities{Model: provider, Tools: tools}
		floor := &floorActivities{rec: o.Record}
		wn := worker.New(s.naive, o.Queues.Naive, workerOptions())
		wn.RegisterWorkflowWithOptions(NaiveAgent, workflow.RegisterOptions{Name: NaiveWorkflowName})
		wn.RegisterWorkflowWithOptions(NaiveChat, workflow.RegisterOptions{Name: NaiveChatWorkflowName})
		wn.RegisterActivityWithOptions(naive.CallModel, activity.RegisterOptions{Name: NaiveModelActivity})
		wn.RegisterActivityWithOptions(naive.RunTool, activity.RegisterOptions{Name: NaiveToolActivity})
		wn.RegisterWorkflowWithOptions(FloorWorkflow, workflow.RegisterOptions{Name: FloorWorkflowName})
		wn.RegisterActivityWithOptions(floor.Noop, activity.RegisterOptions{Name: NoopActivity})
		s.workers = append(s.workers, wn)
	}
	if o.Queues.Traced != "" && o.Only == "" {
		if err := s.dialTraced(store, o, provider, atool, logger); err != nil {
			s.close()
			return nil, err
		}
	}
	return s, nil
}

// endRecorder is a provider that records when each call's answer is
// complete, as a worker process tells the bench (event "end").
type endRecorder struct {
	*scripted.Provider
	rec recorder
}

// Stream implements agentsdk.Provider.
func (p endRecorder) Stream(ctx context.Context, req agentsdk.ModelRequest, on agentsdk.StreamFunc) (agentsdk.ModelResponse, error) {
	resp, err := p.Provider.Stream(ctx, req, on)
	if pl, perr := readPlan(req.Messages); err == nil && perr == nil {
		p.rec(pl.ID, assistantMessages(req.Messages), time.Now())
	}
	return resp, err
}

// assistantMessages counts a conversation's answers: the step of the model
// call it is the request of.
func assistantMessages(msgs []agentsdk.Message) int {
	n := 0
	for _, m := range msgs {
		if m.Role == agentsdk.RoleAssistant {
			n++
		}
	}
	return n
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
		ToolHeartbeatTimeout: o.ToolHeartbeat, ActivityModelCalls: o.Mode.ActivityModelCalls, ActivityToolCalls: o.Mode.ActivityToolCalls,
		TracerProvider: tel.TracerProvider, MeterProvider: tel.MeterProvider,
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
	if s.naive != nil {
		s.naive.Close()
	}
	if s.agentree != nil {
		s.agentree.Close()
	}
	if s.traced != nil {
		s.traced.Close()
	}
	if s.held != nil {
		_ = s.held.Close()
		_ = os.RemoveAll(filepath.Dir(s.held.File()))
	}
}
