package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/migrations"
)

// bench is one benchmark's world: a Postgres schema of its own, an
// organization, both systems' clients and in-process workers, and the log
// of the model calls those workers answer.
type bench struct {
	cfg config
	// set is the set whose modes the systems run in.
	set      benchSet
	dbURL    string // DATABASE_URL scoped to the bench's schema
	temporal string
	suffix   string // makes the task queues and plan IDs this run's own
	store    *entrystore.Store
	org      entrystore.Org
	sys      *systems
	queues   queues
	calls    *callLog
	ids      int
	// naiveIDs are the naive agents started: the bench deletes them when it
	// ends, for their histories (one of 50 MB) would stay on the server.
	// mu guards it.
	naiveIDs []string
	mu       sync.Mutex
}

// openBench creates the schema, migrates it and starts the workers. close
// stops them and drops the schema.
func openBench(ctx context.Context, cfg config, addr string, set benchSet) (b *bench, close func(), err error) {
	base := os.Getenv("DATABASE_URL")
	if base == "" || addr == "" {
		return nil, nil, errors.New(`bench: DATABASE_URL and TEMPORAL_ADDRESS must be set: run "make up" and eval "$(make -s env)"`)
	}
	suffix := randomHex(4)
	schema := "bench_" + suffix
	if err := execSQL(ctx, base, "CREATE SCHEMA "+schema); err != nil {
		return nil, nil, err
	}
	var undo []func()
	close = func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	undo = append(undo, func() { _ = execSQL(context.WithoutCancel(ctx), base, "DROP SCHEMA IF EXISTS "+schema+" CASCADE") })
	defer func() {
		if err != nil {
			close()
		}
	}()
	scoped, err := withSearchPath(base, schema)
	if err != nil {
		return nil, nil, err
	}
	if err := migrations.ApplyURL(ctx, scoped); err != nil {
		return nil, nil, err
	}
	pool, err := pgxpool.New(ctx, scoped)
	if err != nil {
		return nil, nil, fmt.Errorf("bench: connect to Postgres: %w", err)
	}
	undo = append(undo, pool.Close)
	b = &bench{cfg: cfg, set: set, dbURL: scoped, temporal: addr, suffix: suffix, store: entrystore.New(pool), calls: newCallLog(),
		queues: queues{Agentree: "bench-agentree-" + suffix, Naive: "bench-naive-" + suffix, Traced: "bench-traced-" + suffix}}
	if b.org, err = b.store.CreateOrg(ctx, "bench", "benchmark"); err != nil {
		return nil, nil, err
	}
	b.sys, err = dialSystems(b.store, systemOptions{TemporalAddress: addr, Queues: b.queues, ModelDelay: cfg.ModelDelay, Record: b.calls.record,
		Mode: set.Mode, WorkerStore: true})
	if err != nil {
		return nil, nil, err
	}
	undo = append(undo, b.sys.close, func() { b.deleteNaive(context.WithoutCancel(ctx)) })
	return b, close, b.sys.start()
}

// deleteNaive deletes the naive agents' workflows, running or not.
func (b *bench) deleteNaive(ctx context.Context) {
	for _, id := range b.naiveIDs {
		_, err := b.sys.naive.WorkflowService().DeleteWorkflowExecution(ctx, &workflowservice.DeleteWorkflowExecutionRequest{
			Namespace: client.DefaultNamespace, WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: id},
		})
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench: delete %s: %v\n", id, err)
		}
	}
}

// newPlanID names a conversation uniquely on this server.
func (b *bench) newPlanID(scenario string) string {
	b.ids++
	return fmt.Sprintf("%s-%s-%d", scenario, b.suffix, b.ids)
}

// execSQL runs one statement on a short-lived connection.
func execSQL(ctx context.Context, databaseURL, sql string) error {
	conn, err := pgx.Connect(ctx, databaseURL)
	if err != nil {
		return fmt.Errorf("bench: connect to Postgres: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, sql); err != nil {
		return fmt.Errorf("bench: %s: %w", sql, err)
	}
	return nil
}

// withSearchPath scopes a connection string to schema: pgx passes
// parameters it does not know to the server as runtime parameters.
func withSearchPath(databaseURL, schema string) (string, error) {
	return withParam(databaseURL, "search_path", schema)
}

// withParam sets a connection parameter in a URL or key=value string.
func withParam(databaseURL, key, value string) (string, error) {
	if !strings.HasPrefix(databaseURL, "postgres://") && !strings.HasPrefix(databaseURL, "postgresql://") {
		return databaseURL + " " + key + "=" + value, nil
	}
	u, err := url.Parse(databaseURL)
	if err != nil {
		return "", fmt.Errorf("bench: DATABASE_URL: %w", err)
	}
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
