package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/agentree/agentree/internal/telemetry"
)

// startTelemetry builds the process's telemetry — traces and metrics
// exported by the OTEL_* environment variables, Prometheus metrics when
// metrics — makes it OpenTelemetry's global, and sets slog's default
// logger to format. stop flushes the exporters.
func startTelemetry(ctx context.Context, service string, metrics bool, format string) (tel *telemetry.Telemetry, stop func(), err error) {
	logger, err := telemetry.NewLogger(os.Stderr, format, slog.LevelInfo)
	if err != nil {
		return nil, nil, err
	}
	slog.SetDefault(logger)
	tel, err = telemetry.New(ctx, telemetry.Config{ServiceName: service, Metrics: metrics})
	if err != nil {
		return nil, nil, err
	}
	tel.SetGlobal()
	return tel, func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := tel.Shutdown(sctx); err != nil {
			slog.Warn("telemetry: shutdown", "error", err)
		}
	}, nil
}

// serveMetrics serves tel's Prometheus metrics at addr/metrics until ctx
// ends.
func serveMetrics(ctx context.Context, tel *telemetry.Telemetry, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("metrics address: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", tel.MetricsHandler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			slog.Error("metrics endpoint", "error", err)
		}
	}()
	slog.Info("metrics", "addr", "http://"+ln.Addr().String()+"/metrics")
	return nil
}
