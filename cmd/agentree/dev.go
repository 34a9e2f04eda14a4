package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/gateway"
	"github.com/agentree/agentree/internal/workerconfig"
)

// runDev runs a worker and the gateway in one process for local use, with
// an organization "dev" whose API key is kept in --key-file.
func runDev(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("dev", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8080", "HTTP address of the gateway")
	config := fs.String("config", "", "worker configuration file (default $"+workerconfig.EnvVar+", else built-in defaults; see agentree.example.yaml)")
	queue := fs.String("task-queue", "", "Temporal task queue (default: the configuration's, agentree)")
	org := fs.String("org", "dev", "the organization to create a key for")
	keyFile := fs.String("key-file", ".data/dev-key", "where the dev API key is kept")
	uiAddr := fs.String("temporal-ui", temporalUIDefault(), "the Temporal UI's address, to print ($AGENTREE_TEMPORAL_UI, else port $AGENTREE_TEMPORAL_UI_PORT)")
	metrics := fs.Bool("metrics", false, "serve Prometheus metrics at /metrics on --metrics-addr")
	lim := limitFlags(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, err := loadWorkerConfig(*config, *queue, "")
	if err != nil {
		return fmt.Errorf("dev: %w", err)
	}
	tel, stop, err := startTelemetry(ctx, "agentree", *metrics, cfg.Observability.LogFormat)
	if err != nil {
		return fmt.Errorf("dev: %w", err)
	}
	defer stop()
	s, err := connect(ctx, cfg, tel)
	if err != nil {
		return fmt.Errorf("dev: %w", err)
	}
	defer s.close()
	key, err := devKey(ctx, s.store, *org, *keyFile)
	if err != nil {
		return fmt.Errorf("dev: %w", err)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("dev: gateway address: %w", err)
	}
	stopWorkers, err := s.startWorkers(cfg.TaskQueue)
	if err != nil {
		return fmt.Errorf("dev: worker: %w", err)
	}
	defer stopWorkers()
	base := "http://" + ln.Addr().String()
	fmt.Fprintf(os.Stderr, "agentree dev: worker on task queue %q; gateway on %s\n", cfg.TaskQueue, base)
	// The key itself is never printed: stderr often ends in a log file
	// (make run's .data/dev.log); the 0600 file is where it is kept.
	fmt.Fprintf(os.Stderr, "  REST API     %s/api/orgs/%s/agent-executions\n  OpenAPI      %s/openapi.json\n  Temporal UI  %s\n  API key      %s… in %s (export AGENTREE_API_KEY=$(cat %s))\n",
		base, *org, base, *uiAddr, key[:min(len(key), 12)], *keyFile, *keyFile)
	// The worker above has recorded its capabilities, which the gateway
	// validates requests against.
	return gateway.Run(ctx, lim.apply(gateway.Options{
		HTTPListener: ln, Store: s.store, Temporal: s.tc, TaskQueue: cfg.TaskQueue, Logger: slog.Default(),
		TracerProvider: tel.TracerProvider, MeterProvider: tel.MeterProvider, Propagator: tel.Propagator,
		MetricsHandler: tel.MetricsHandler(),
	}))
}

// devKey returns the key kept in path if it still authenticates for org,
// else creates the org if needed and a new key, and keeps it there.
func devKey(ctx context.Context, es *entrystore.Store, org, path string) (string, error) {
	if b, err := os.ReadFile(path); err == nil {
		key := strings.TrimSpace(string(b))
		if o, _, err := es.AuthenticateAPIKey(ctx, key); err == nil && o.Slug == org {
			return key, nil
		} else if err != nil && !errors.Is(err, entrystore.ErrNotFound) {
			return "", err
		}
	}
	o, err := es.EnsureOrg(ctx, org)
	if err != nil {
		return "", err
	}
	key, _, err := es.CreateAPIKey(ctx, o.ID, "dev")
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	if err := os.WriteFile(path, []byte(key+"\n"), 0o600); err != nil {
		return "", err
	}
	// WriteFile keeps an existing file's mode: the key is the owner's only.
	return key, os.Chmod(path, 0o600)
}
