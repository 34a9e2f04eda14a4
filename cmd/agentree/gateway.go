package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"

	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"

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
	queue := fs.String("task-queue", entrystore.DefaultQueue, "the workers' Temporal task queue")
	namespace := fs.String("namespace", "", "Temporal namespace (default: Temporal's environment configuration, else default)")
	bodyLimit := fs.Int64("body-limit", gateway.DefaultBodyLimit, "largest request body in bytes (larger: 413)")
	heartbeat := fs.Duration("heartbeat", gateway.DefaultHeartbeat, "SSE heartbeat interval")
	window := fs.Duration("replay-window", gateway.DefaultReplayWindow, "how old an event a stream still replays")
	metrics := fs.Bool("metrics", false, "serve Prometheus metrics at /metrics")
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
	return gateway.Run(ctx, gateway.Options{
		HTTPAddr: *addr, GRPCAddr: *grpcAddr, Store: entrystore.New(pool), Temporal: tc, TaskQueue: *queue,
		Namespace: *namespace, // requests are validated against the live workers of this namespace
		BodyLimit: *bodyLimit, Heartbeat: *heartbeat, ReplayWindow: *window, Logger: logger,
		TracerProvider: tel.TracerProvider, MeterProvider: tel.MeterProvider, Propagator: tel.Propagator,
		MetricsHandler: tel.MetricsHandler(),
	})
}
