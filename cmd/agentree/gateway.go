package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/gateway"
)

// runGateway serves the REST/SSE gateway (and gRPC with --grpc-addr) over
// $DATABASE_URL and the Temporal server of TEMPORAL_ADDRESS or a Temporal
// profile (see temporalOptions).
func runGateway(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("gateway", flag.ContinueOnError)
	addr := fs.String("addr", gateway.DefaultHTTPAddr, "HTTP address for REST, SSE, /healthz and /openapi.json")
	grpcAddr := fs.String("grpc-addr", "", "gRPC address (empty: no gRPC)")
	tlsCert := fs.String("tls-cert", "", "PEM certificate chain: serve HTTPS and gRPC over TLS (with --tls-key; empty: plain HTTP, e.g. behind a TLS-terminating reverse proxy)")
	tlsKey := fs.String("tls-key", "", "PEM private key of --tls-cert")
	queue := fs.String("task-queue", entrystore.DefaultQueue, "the workers' Temporal task queue")
	namespace := fs.String("namespace", "", "Temporal namespace (default: Temporal's environment configuration, else default)")
	bodyLimit := fs.Int64("body-limit", gateway.DefaultBodyLimit, "largest request body in bytes (larger: 413)")
	heartbeat := fs.Duration("heartbeat", gateway.DefaultHeartbeat, "SSE heartbeat interval")
	window := fs.Duration("replay-window", gateway.DefaultReplayWindow, "how old an event a stream still replays")
	mcpTimeout := fs.Duration("mcp-call-timeout", gateway.DefaultMCPCallTimeout, "how long an MCP tool call waits for its execution (then it returns the execution ID; the run goes on)")
	metrics := fs.Bool("metrics", false, "serve Prometheus metrics at /metrics on --metrics-addr")
	lim := limitFlags(fs)
	logFormat := fs.String("log-format", "text", "log format: text or json")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: agentree gateway [flags]   (env DATABASE_URL, TEMPORAL_ADDRESS)")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	dbURL := os.Getenv("DATABASE_URL")
	if dbURL == "" {
		return errors.New("gateway: DATABASE_URL must be set (eval \"$(make -s env)\")")
	}
	topts, err := temporalOptions(*namespace)
	if err != nil {
		return fmt.Errorf("gateway: %w", err)
	}
	tel, stop, err := startTelemetry(ctx, "agentree-gateway", *metrics, *logFormat)
	if err != nil {
		return fmt.Errorf("gateway: %w", err)
	}
	defer stop()
	pool, err := newPool(ctx, dbURL, tel)
	if err != nil {
		return fmt.Errorf("gateway: %w", err)
	}
	defer pool.Close()
	logger := slog.Default()
	topts.Logger = tlog.NewStructuredLogger(logger)
	if err := tel.Instrument(&topts); err != nil {
		return fmt.Errorf("gateway: %w", err)
	}
	tc, err := client.Dial(topts)
	if err != nil {
		return fmt.Errorf("gateway: temporal: %w", err)
	}
	defer tc.Close()
	return gateway.Run(ctx, lim.apply(gateway.Options{
		HTTPAddr: *addr, GRPCAddr: *grpcAddr, TLSCertFile: *tlsCert, TLSKeyFile: *tlsKey, Store: entrystore.New(pool), Temporal: tc, TaskQueue: *queue,
		Namespace: *namespace, // requests are validated against the live workers of this namespace
		BodyLimit: *bodyLimit, Heartbeat: *heartbeat, ReplayWindow: *window, MCPCallTimeout: *mcpTimeout, Logger: logger,
		TracerProvider: tel.TracerProvider, MeterProvider: tel.MeterProvider, Propagator: tel.Propagator,
		MetricsHandler: tel.MetricsHandler(),
	}))
}

// gatewayLimits are the flags of the gateway's limits (gateway.Options).
type gatewayLimits struct {
	metricsAddr         string
	keyCacheTTL         time.Duration
	keyRate, anonRate   float64
	keyBurst, anonBurst int
	idleTimeout         time.Duration
	maxConns            int
	streamsPerKey       int
	streamsPerOrg       int
	maxBestOf           int
	tarpit              time.Duration
	pageBytes           int
	explainModel        agentsdk.ModelRef
	budget              gateway.BudgetCeiling
}

// limitFlags declares the limit flags on fs, for gateway and dev alike.
func limitFlags(fs *flag.FlagSet) *gatewayLimits {
	l := &gatewayLimits{}
	fs.StringVar(&l.metricsAddr, "metrics-addr", gateway.DefaultMetricsAddr, "the metrics listener's address (with --metrics); never the public one")
	fs.DurationVar(&l.keyCacheTTL, "key-cache-ttl", gateway.DefaultKeyCacheTTL, "how long an API key lookup is reused (a revoked key works at most this long)")
	fs.Float64Var(&l.keyRate, "key-rate", gateway.DefaultKeyRate, "requests a second per API key (past it: 429)")
	fs.IntVar(&l.keyBurst, "key-burst", gateway.DefaultKeyBurst, "burst per API key")
	fs.Float64Var(&l.anonRate, "anon-rate", gateway.DefaultAnonRate, "requests a second per client IP without a known key")
	fs.IntVar(&l.anonBurst, "anon-burst", gateway.DefaultAnonBurst, "burst per client IP without a known key")
	fs.DurationVar(&l.idleTimeout, "idle-timeout", gateway.DefaultIdleTimeout, "close keep-alive connections idle this long")
	fs.IntVar(&l.maxConns, "max-conns", gateway.DefaultMaxConns, "most HTTP connections open at once")
	fs.IntVar(&l.streamsPerKey, "max-streams-per-key", gateway.DefaultMaxStreamsPerKey, "most event streams open at once per API key (past it: 429)")
	fs.IntVar(&l.streamsPerOrg, "max-streams-per-org", gateway.DefaultMaxStreamsPerOrg, "most event streams open at once per organization (past it: 429)")
	fs.IntVar(&l.maxBestOf, "max-best-of", gateway.DefaultMaxBestOf, "most branches one best-of runs (POST …/best-of's n; its default)")
	fs.DurationVar(&l.tarpit, "tarpit", gateway.DefaultTarpit, "how long a 429 to an address past its bucket is held (negative: not held)")
	fs.IntVar(&l.pageBytes, "page-bytes", gateway.DefaultPageBytes, "byte budget of a page of conversation data (a page ends early, with a nextCursor)")
	fs.Func("explain-model", "provider/modelId of the model that explains executions (POST …/explain); a worker must serve it (unset: explanations refused)", func(v string) error {
		p, id, ok := strings.Cut(v, "/")
		if !ok || p == "" || id == "" {
			return fmt.Errorf("%q is not provider/modelId", v)
		}
		l.explainModel = agentsdk.ModelRef{Provider: p, ModelID: id}
		return nil
	})
	fs.Int64Var(&l.budget.MaxTokens, "max-budget-tokens", 0, "ceiling on an execution's budget.maxTokens; an execution that sets none gets it (0: no ceiling)")
	fs.Float64Var(&l.budget.MaxCostUsd, "max-budget-cost-usd", 0, "ceiling on an execution's budget.maxCostUsd in USD; an execution that sets none gets it (0: no ceiling)")
	return l
}

// apply sets o's limits from the flags.
func (l *gatewayLimits) apply(o gateway.Options) gateway.Options {
	o.MetricsAddr, o.KeyCacheTTL, o.KeyRate, o.KeyBurst = l.metricsAddr, l.keyCacheTTL, l.keyRate, l.keyBurst
	o.AnonRate, o.AnonBurst, o.IdleTimeout, o.MaxConns = l.anonRate, l.anonBurst, l.idleTimeout, l.maxConns
	o.MaxStreamsPerKey, o.MaxStreamsPerOrg = l.streamsPerKey, l.streamsPerOrg
	o.Tarpit, o.PageBytes = l.tarpit, l.pageBytes
	o.MaxBestOf = l.maxBestOf
	o.ExplainModel = l.explainModel
	o.BudgetCeiling = l.budget
	return o
}
