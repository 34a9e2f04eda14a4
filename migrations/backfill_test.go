package migrations_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/migrations"
)

// TestLeafAndStepBackfill writes a conversation under migration 3 (no
// leaf, no steps), applies 0004 and finds each execution's leaf at its
// newest entry and every entry's step counted down its path.
func TestLeafAndStepBackfill(t *testing.T) {
	ctx := context.Background()
	conn := schemaConn(t)
	require.NoError(t, migrations.ApplyTo(ctx, conn, 3))
	var org, ex, empty string
	require.NoError(t, conn.QueryRow(ctx, `INSERT INTO organization (slug, name) VALUES ('o', 'o') RETURNING id::text`).Scan(&org))
	require.NoError(t, conn.QueryRow(ctx, `INSERT INTO agent_execution (org_id, kind) VALUES ($1, 'k') RETURNING id::text`, org).Scan(&ex))
	require.NoError(t, conn.QueryRow(ctx, `INSERT INTO agent_execution (org_id, kind) VALUES ($1, 'k') RETURNING id::text`, org).Scan(&empty))
	// user → assistant → tool_result → assistant, and a fork: a second
	// answer to the user, written last.
	add := func(parent any, role string) string {
		var id string
		require.NoError(t, conn.QueryRow(ctx, `INSERT INTO agent_entry (org_id, agent_execution_id, parent_id, branch_id, depth, entry_type, role, content, idempotency_key)
			VALUES ($1, $2, $3, gen_random_uuid(), coalesce((SELECT depth + 1 FROM agent_entry WHERE id = $3), 0), 'message', $4, '{}', gen_random_uuid()::text)
			RETURNING id::text`, org, ex, parent, role).Scan(&id))
		return id
	}
	user := add(nil, "user")
	first := add(user, "assistant")
	tool := add(first, "tool_result")
	second := add(tool, "assistant")
	fork := add(user, "assistant")

	require.NoError(t, migrations.Apply(ctx, conn))
	var leaf *string
	require.NoError(t, conn.QueryRow(ctx, `SELECT leaf_entry_id::text FROM agent_execution WHERE id = $1`, ex).Scan(&leaf))
	require.NotNil(t, leaf)
	require.Equal(t, fork, *leaf, "the newest entry")
	require.NoError(t, conn.QueryRow(ctx, `SELECT leaf_entry_id::text FROM agent_execution WHERE id = $1`, empty).Scan(&leaf))
	require.Nil(t, leaf, "no entries, no leaf")
	for id, step := range map[string]int{user: 0, first: 1, tool: 1, second: 2, fork: 1} {
		var got int
		require.NoError(t, conn.QueryRow(ctx, `SELECT step FROM agent_entry WHERE id = $1`, id).Scan(&got))
		require.Equal(t, step, got, "entry %s", id)
	}
}

// schemaConn is a connection to a fresh, empty schema of its own, dropped
// when the test ends: a test migrates it to the version before the one it
// checks.
func schemaConn(t *testing.T) *pgx.Conn {
	t.Helper()
	ctx := context.Background()
	base := os.Getenv("DATABASE_URL")
	require.NotEmpty(t, base, "DATABASE_URL is not set: run `make up` and `eval \"$(make -s env)\"`")
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	schema := "t_mig_" + hex.EncodeToString(b)
	admin(t, base, "CREATE SCHEMA "+schema)
	t.Cleanup(func() { admin(t, base, "DROP SCHEMA "+schema+" CASCADE") })
	// The schema goes in as a startup parameter, never a SET: tern runs
	// RESET ALL before it records a version, which would send the record
	// to the database's default schema.
	cfg, err := pgx.ParseConfig(base)
	require.NoError(t, err)
	cfg.RuntimeParams["search_path"] = schema
	conn, err := pgx.ConnectConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close(context.Background()) })
	var got string
	require.NoError(t, conn.QueryRow(ctx, "SELECT current_schema()").Scan(&got))
	require.Equal(t, schema, got)
	return conn
}

// admin runs one statement on a connection of its own.
func admin(t *testing.T, url, sql string) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	_, err = conn.Exec(context.Background(), sql)
	require.NoError(t, err)
}
