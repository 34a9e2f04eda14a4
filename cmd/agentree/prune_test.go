package main

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/pgtest"
)

// TestPruneCommand: --dry-run says what would go and removes nothing; the
// prune removes it; bad flags are clear errors.
func TestPruneCommand(t *testing.T) {
	url := pgtest.URL(t)
	t.Setenv("DATABASE_URL", url)
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, url)
	require.NoError(t, err)
	defer pool.Close()
	es := entrystore.New(pool)
	org, err := es.CreateOrg(ctx, "acme", "Acme")
	require.NoError(t, err)
	for _, st := range []entrystore.Status{entrystore.StatusCompleted, entrystore.StatusRunning} {
		ex, err := es.CreateExecution(ctx, entrystore.Execution{OrgID: org.ID, Kind: entrystore.DefaultKind})
		require.NoError(t, err)
		_, _, err = es.AppendEntry(ctx, entrystore.Entry{OrgID: org.ID, ExecutionID: ex.ID, Type: "message", Role: "user",
			Content: []byte(`{"text":"hi"}`), IdempotencyKey: "k"})
		require.NoError(t, err)
		_, err = es.Transition(ctx, org.ID, ex.ID, entrystore.Transition{To: st})
		require.NoError(t, err)
	}
	_, err = pool.Exec(ctx, `UPDATE agent_execution SET completed_at = now() - interval '40 days', created_at = now() - interval '40 days'`)
	require.NoError(t, err)

	out, _, err := cli(ctx, "prune", "--dry-run", "--org", "acme")
	require.NoError(t, err)
	require.Contains(t, out, "would remove 1 executions: 1 entries")
	out, _, err = cli(ctx, "prune", "--keep-history", "--older-than", "30d")
	require.NoError(t, err)
	require.Contains(t, out, "removed 1 executions: 1 entries")
	out, _, err = cli(ctx, "prune", "--keep-history", "--json")
	require.NoError(t, err)
	require.Contains(t, out, `"executions":0`)
	var n int
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(*) FROM agent_execution`).Scan(&n))
	require.Equal(t, 1, n, "the running execution stays")

	_, _, err = cli(ctx, "prune", "--older-than", "soon")
	require.ErrorContains(t, err, `"soon" is not a positive duration`)
	_, _, err = cli(ctx, "prune", "--dry-run", "--org", "nope")
	require.ErrorContains(t, err, `organization "nope"`)
}
