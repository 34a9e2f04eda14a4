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
	DefaultHTTPAddr  = ":8080"
	DefaultBodyLimit = 1 << 20
	// DefaultMCPCallTimeout bounds how long an MCP tool call waits for
	// its execution (Options.MCPCallTimeout).
	DefaultMCPCallTimeout = 10 * time.Minute
	DefaultHeartbeat      = 15 * time.Second
	DefaultReplayWindow   = time.Hour

	// The limits of a gateway in front of strangers (issue 36). A valid
	// key's own bucket allows 100 requests a second, twice what a client
	// polling every 20 ms sends; an address without a valid key gets 10
	// attempts a second, which is what reaches Postgres from it at most.
	DefaultKeyCacheTTL  = 5 * time.Second
	DefaultKeyCacheSize = 10_000
	DefaultKeyRate      = 100
	DefaultKeyBurst     = 200
	DefaultAnonRate     = 10
	DefaultAnonBurst    = 20
	DefaultIdleTimeout  = 2 * time.Minute
	DefaultMaxConns     = 4096
	DefaultMetricsAddr  = "127.0.0.1:9464"
	DefaultTarpit       = time.Second
	DefaultTarpitSlots  = 1024

	// A browser tab holds one stream per execution it shows; 32 is many
	// tabs, and an organization's 256 leave room for several users.
	DefaultMaxStreamsPerKey = 32
	DefaultMaxBestOf        = 10
	DefaultMaxStreamsPerOrg = 256

	// DefaultPageBytes is a page's byte budget: a list of 500 rows of up
	// to ~1 MiB each would otherwise be half a gigabyte in one answer.
	DefaultPageBytes = 1 << 20
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
	// TLSCertFile and TLSKeyFile, both set, serve HTTPS (HTTP/2 and
	// HTTP/1.1) instead of HTTP, and gRPC over TLS, with this PEM
	// certificate chain and key; default none: plain HTTP, for loopback
	// or behind a reverse proxy that terminates TLS.
	TLSCertFile string
	TLSKeyFile  string

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
	// MaxBestOf is the most branches one best-of runs (POST …/best-of's
	// n; default DefaultMaxBestOf), so one request cannot start a fleet.
	MaxBestOf int
	// BudgetCeiling is the operator's ceiling on executions' budgets; zero:
	// none (see BudgetCeiling).
	BudgetCeiling BudgetCeiling
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
	// ExplainModel is the model that explains executions (POST
	// …/explain, seed 004 §10), named as a definition names one; a
	// worker on TaskQueue must serve it. Zero: explanations are refused
	// (400) for want of one.
	ExplainModel agentsdk.ModelRef
	// Signals are the signal names executions accept; default
	// ["userMessage"]. Another name is a 400.
	Signals []string

	// MCPCallTimeout is how long an MCP tool call waits for its execution
	// to answer, wait or end (the SDK serves no tasks extension); past it
	// the call returns the execution ID to follow over the REST API, and
	// the execution runs on. Default DefaultMCPCallTimeout.
	MCPCallTimeout time.Duration

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
	// IdempotencyLease is how long a request with an Idempotency-Key holds
	// the key before a retry may take over, presuming its gateway died;
	// default 60 s, longer than any live request (commitTimeout + 30 s).
	// Tests shorten it to play a crash.
	IdempotencyLease time.Duration
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
	// MetricsHandler, when set, is served at GET /metrics (Prometheus) on
	// a listener of its own — MetricsListener, else MetricsAddr (default
	// 127.0.0.1:9464) — never on the public one: the metrics name every
	// organization's models, tools and costs.
	MetricsHandler  http.Handler
	MetricsAddr     string
	MetricsListener net.Listener

	// KeyCacheTTL is how long an API key lookup, found or not, is reused;
	// default 5 seconds. A revoked key is refused at most this long after
	// its revocation. KeyCacheSize bounds the found and the unknown keys
	// cached, each; default 10,000.
	KeyCacheTTL  time.Duration
	KeyCacheSize int
	// KeyRate and KeyBurst are each API key's token bucket (requests a
	// second, and burst); default 100 and 200. Past it: 429 with
	// Retry-After.
	KeyRate  float64
	KeyBurst int
	// AnonRate and AnonBurst are each client IP's bucket for requests
	// without a known key (none, malformed, unknown, or not yet cached);
	// default 10 and 20. It bounds what one address's junk costs Postgres.
	AnonRate  float64
	AnonBurst int
	// Tarpit is how long the 429 of an address past its bucket is held
	// before it is sent, so a junk flood waits instead of spinning;
	// default one second (its Retry-After). Negative: answered at once.
	// TarpitSlots bounds the refusals held at once; past them, they go
	// out at once. Default 1024.
	Tarpit      time.Duration
	TarpitSlots int
	// IdleTimeout closes a keep-alive connection idle this long; default
	// two minutes. MaxConns caps the HTTP connections open at once
	// (further ones wait to be accepted); default 4096.
	IdleTimeout time.Duration
	MaxConns    int
	// MaxStreamsPerKey and MaxStreamsPerOrg cap the event streams (SSE
	// and gRPC) open at once per API key and per organization; default
	// 32 and 256. Past a cap a stream is refused 429 (RESOURCE_EXHAUSTED)
	// with Retry-After; a closed stream frees its slot.
	MaxStreamsPerKey int
	MaxStreamsPerOrg int
	// PageBytes is the byte budget of one page of conversation data
	// (executions, entries, messages, checkpoints, tasks, tool calls, the
	// messages of an entry's context, the token timeline's entries): a
	// page ends before the row that would take the rows' stored bytes past
	// it, with a nextCursor, as it does at pageSize rows. A row larger than
	// the budget comes alone on its page, whole. Default 1 MiB.
	PageBytes int
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
	if (o.TLSCertFile == "") != (o.TLSKeyFile == "") {
		return nil, errors.New("gateway: TLSCertFile and TLSKeyFile go together: set both or neither")
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
	if o.MCPCallTimeout <= 0 {
		o.MCPCallTimeout = DefaultMCPCallTimeout
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
	if o.IdempotencyLease <= 0 {
		o.IdempotencyLease = idempotencyLease
	}
	if o.KeyCacheTTL < 0 || o.KeyCacheSize < 0 || o.KeyRate < 0 || o.KeyBurst < 0 || o.AnonRate < 0 ||
		o.AnonBurst < 0 || o.IdleTimeout < 0 || o.MaxConns < 0 || o.MaxStreamsPerKey < 0 || o.MaxStreamsPerOrg < 0 ||
		o.PageBytes < 0 || o.TarpitSlots < 0 {
		return nil, errors.New("gateway: the key cache, rate and connection limits must not be negative")
	}
	o.limitDefaults()
	o.telemetryDefaults()
	return &o, nil
}

// limitDefaults fills in the zero limits.
func (o *Options) limitDefaults() {
	if o.KeyCacheTTL == 0 {
		o.KeyCacheTTL = DefaultKeyCacheTTL
	}
	if o.KeyCacheSize == 0 {
		o.KeyCacheSize = DefaultKeyCacheSize
	}
	if o.KeyRate == 0 {
		o.KeyRate = DefaultKeyRate
	}
	if o.KeyBurst == 0 {
		o.KeyBurst = DefaultKeyBurst
	}
	if o.AnonRate == 0 {
		o.AnonRate = DefaultAnonRate
	}
	if o.AnonBurst == 0 {
		o.AnonBurst = DefaultAnonBurst
	}
	if o.Tarpit == 0 {
		o.Tarpit = DefaultTarpit
	}
	if o.TarpitSlots == 0 {
		o.TarpitSlots = DefaultTarpitSlots
	}
	if o.IdleTimeout == 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.MaxConns == 0 {
		o.MaxConns = DefaultMaxConns
	}
	if o.MaxBestOf <= 0 {
		o.MaxBestOf = DefaultMaxBestOf
	}
	if o.MaxStreamsPerKey == 0 {
		o.MaxStreamsPerKey = DefaultMaxStreamsPerKey
	}
	if o.MaxStreamsPerOrg == 0 {
		o.MaxStreamsPerOrg = DefaultMaxStreamsPerOrg
	}
	if o.PageBytes == 0 {
		o.PageBytes = DefaultPageBytes
	}
	if o.MetricsAddr == "" {
		o.MetricsAddr = DefaultMetricsAddr
	}
}
