package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentree/agentree/migrations"
)

// setupTimeout bounds schema creation and migration, so a wedged database
// fails the test instead of hanging it until the global test timeout.
const setupTimeout = time.Minute

// New returns a pool whose connections all use a fresh, migrated schema that
// is dropped when the test ends. The pool is closed before the schema goes.
func New(t testing.TB) *pgxpool.Pool {
	t.Helper()
	scoped := URL(t)
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	cfg, err := pgxpool.ParseConfig(scoped)
	if err != nil {
		t.Fatalf("pgtest: parse config: %v", err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatalf("pgtest: new pool: %v", err)
	}
	// Registered after URL's cleanup, so it runs first (cleanups are LIFO):
	// no pooled connection holds locks when the schema is dropped.
	t.Cleanup(pool.Close)
	return pool
}

// URL creates a fresh schema, applies the migrations into it and returns
// DATABASE_URL with search_path set to that schema, for code under test that
// opens its own connections (other packages' pools, subprocesses). The
// schema is dropped, with everything in it, when the test ends.
func URL(t testing.TB) string {
	t.Helper()
	scoped := EmptyURL(t)
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	if err := migrations.ApplyURL(ctx, scoped); err != nil {
		t.Fatalf("pgtest: migrate the test schema: %v", err)
	}
	return scoped
}

// EmptyURL is URL without the migrations: the schema is created empty, for
// a test that migrates it with another build's migrations (an upgrade test
// running the previous release's binary).
func EmptyURL(t testing.TB) string {
	t.Helper()
	base := os.Getenv("DATABASE_URL")
	if base == "" {
		t.Fatal("DATABASE_URL is not set: run `make up` and `eval \"$(make -s env)\"`")
	}
	schema := "t_" + randomHex(t, 8)
	scoped, err := withSearchPath(base, schema)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	exec(ctx, t, base, "CREATE SCHEMA "+schema)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
		defer cancel()
		exec(ctx, t, base, "DROP SCHEMA IF EXISTS "+schema+" CASCADE")
	})
	return scoped
}

// exec runs one statement on a short-lived connection to databaseURL.
func exec(ctx context.Context, t testing.TB, databaseURL, sql string) {
	t.Helper()
	conn, err := pgx.Connect(ctx, databaseURL)
	if err != nil {
		t.Fatalf("pgtest: connect: %v", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatalf("pgtest: %s: %v", sql, err)
	}
}

// withSearchPath adds search_path to a URL or keyword/value connection
// string; pgx passes parameters it does not know to the server as runtime
// parameters, so every connection opened from the result starts in schema.
func withSearchPath(databaseURL, schema string) (string, error) {
	if !strings.HasPrefix(databaseURL, "postgres://") && !strings.HasPrefix(databaseURL, "postgresql://") {
		return databaseURL + " search_path=" + schema, nil
	}
	u, err := url.Parse(databaseURL)
	if err != nil {
		return "", err
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

func randomHex(t testing.TB, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatalf("pgtest: random: %v", err)
	}
	return hex.EncodeToString(b)
}
