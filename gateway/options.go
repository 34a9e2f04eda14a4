package gateway

import (
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.temporal.io/sdk/client"

	aclient "github.com/agentree/agentree/adapter/client"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
)

// Defaults for Options' zero fields.
const (
	DefaultHTTPAddr     = ":8080"
	DefaultBodyLimit    = 1 << 20
	DefaultHeartbeat    = 15 * time.Second
	DefaultReplayWindow = time.Hour
)

// Options configure Run. Store and one of Temporal or Executions are
// required; every other zero value is the default its comment gives.
type Options struct {
	// HTTPAddr is where REST, SSE, /healthz and /openapi.json are served;
	// default ":8080". Ignored when HTTPListener is set.
	HTTPAddr string
	// HTTPListener, when set, is served instead of listening on HTTPAddr
	// (tests pass one on 127.0.0.1:0). Run closes it.
	HTTPListener net.Listener
	// GRPCAddr, when set, also serves AgentService as gRPC there; default
	// none. Ignored when GRPCListener is set.
	GRPCAddr string
	// GRPCListener, when set, serves gRPC on it. Run closes it.
	GRPCListener net.Listener

	// Store is the Postgres side store; its pool also provides the one
	// dedicated LISTEN connection.
	Store *entrystore.Store
	// Temporal is the client executions are started, signalled and
	// cancelled with, on TaskQueue.
	Temporal client.Client
	// Executions, when set, is used instead of an adapter client built from
	// Temporal, Store and TaskQueue.
	Executions *aclient.Client
	// MaxTotalSteps bounds a run's steps across all its resumes: a resume
	// of a run that has taken them all is refused; default 500
	// (agentsdk.MaxTotalSteps, seed 001's MaxTotalStepsPerRun).
	MaxTotalSteps int
	// TaskQueue is the workers' task queue; default "agentree"
	// (entrystore.DefaultQueue).
	TaskQueue string

	// Namespace is the Temporal namespace executions run in: only workers
	// that recorded it count as live. Empty: workers of any namespace.
	Namespace string
	// CapabilityCacheTTL is how long a snapshot of the live workers'
	// capabilities (worker_capability) is reused to validate creates;
	// default 1 second. A request the snapshot would refuse is checked
	// again against a fresh one.
	CapabilityCacheTTL time.Duration
	// ContextWindows extend the built-in table of models' context
	// windows the token timeline measures against (the workers' table:
	// give both the same configuration).
	ContextWindows agentsdk.ContextWindows
	// Signals are the signal names executions accept; default
	// ["userMessage"]. Another name is a 400.
	Signals []string

	// BodyLimit is the largest request body, in bytes; a larger one is a
	// 413 (over gRPC, RESOURCE_EXHAUSTED). Default 1 MiB.
	BodyLimit int64
	// Heartbeat is how often an idle SSE stream sends a ": ping" comment;
	// default 15 seconds.
	Heartbeat time.Duration
	// ReplayWindow is how old an event a stream still replays on connect
	// or resume; default one hour. Older events are skipped: the
	// execution's entries are the durable record.
	ReplayWindow time.Duration
	// PruneInterval is how often events older than ReplayWindow are
	// deleted from agent_stream_event; default a quarter of the window,
	// between one and fifteen minutes. Negative: never (another process
	// prunes).
	PruneInterval time.Duration
	// Logger receives errors the client does not see; default
	// slog.Default().
	Logger *slog.Logger

	// TracerProvider, MeterProvider and Propagator trace every HTTP and
	// gRPC request (otelhttp, otelgrpc) and record the gateway's metrics;
	// nil ones are OpenTelemetry's globals (no-ops unless set). An
	// execution created in a traced request records its trace context,
	// and its workflow continues that trace when Temporal's client has
	// the SDK's tracing interceptor.
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
	Propagator     propagation.TextMapPropagator
	// MetricsHandler, when set, is served at GET /metrics (Prometheus).
	MetricsHandler http.Handler
}

// validate checks opts and fills in the defaults.
func (o Options) validate() (*Options, error) {
	if o.Store == nil {
		return nil, errors.New("gateway: Options.Store is required")
	}
	if o.Executions == nil && o.Temporal == nil {
		return nil, errors.New("gateway: Options.Temporal or Options.Executions is required")
	}
	if o.BodyLimit < 0 || o.Heartbeat < 0 || o.ReplayWindow < 0 {
		return nil, errors.New("gateway: BodyLimit, Heartbeat and ReplayWindow must not be negative")
	}
	if o.HTTPAddr == "" {
		o.HTTPAddr = DefaultHTTPAddr
	}
	if o.TaskQueue == "" {
		o.TaskQueue = entrystore.DefaultQueue
	}
	if o.Executions == nil {
		o.Executions = aclient.NewClient(o.Temporal, o.Store, o.TaskQueue)
	}
	if o.MaxTotalSteps <= 0 {
		o.MaxTotalSteps = agentsdk.MaxTotalSteps
	}
	if o.CapabilityCacheTTL == 0 {
		o.CapabilityCacheTTL = time.Second
	}
	if len(o.Signals) == 0 {
		o.Signals = []string{agentsdk.SignalUserMessage}
	}
	if o.BodyLimit == 0 {
		o.BodyLimit = DefaultBodyLimit
	}
	if o.Heartbeat == 0 {
		o.Heartbeat = DefaultHeartbeat
	}
	if o.ReplayWindow == 0 {
		o.ReplayWindow = DefaultReplayWindow
	}
	if o.PruneInterval == 0 {
		o.PruneInterval = min(max(o.ReplayWindow/4, time.Minute), 15*time.Minute)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	o.telemetryDefaults()
	return &o, nil
}
