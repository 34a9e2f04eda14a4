package migrations_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/migrations"
)

// TestBudgetSpendBackfill records model calls before migration 0024 — a
// parent's and its child's, both of one definition — and finds, after it,
// the child's spend rolled up into the parent's and the definition's the
// sum of its executions' own calls; calls recorded after it are counted by
// the trigger the same way.
func TestBudgetSpendBackfill(t *testing.T) {
	ctx := context.Background()
	conn := schemaConn(t)
	require.NoError(t, migrations.ApplyTo(ctx, conn, 23))
	var org, def, parent, child string
	require.NoError(t, conn.QueryRow(ctx, `INSERT INTO organization (slug, name) VALUES ('o', 'o') RETURNING id::text`).Scan(&org))
	require.NoError(t, conn.QueryRow(ctx, `INSERT INTO agent_definition (org_id, name, slug) VALUES ($1, 'd', 'd') RETURNING id::text`, org).Scan(&def))
	require.NoError(t, conn.QueryRow(ctx, `INSERT INTO agent_execution (org_id, kind, agent_definition_id) VALUES ($1, 'k', $2) RETURNING id::text`, org, def).Scan(&parent))
	require.NoError(t, conn.QueryRow(ctx, `INSERT INTO agent_execution (org_id, kind, agent_definition_id, parent_id) VALUES ($1, 'k', $2, $3) RETURNING id::text`,
		org, def, parent).Scan(&child))
	answer := func(ex string, input, output int) {
		_, err := conn.Exec(ctx, `INSERT INTO agent_entry (org_id, agent_execution_id, branch_id, depth, entry_type, role, content, metadata, idempotency_key)
			VALUES ($1, $2, gen_random_uuid(), 0, 'message', 'assistant', json_build_object('role', 'assistant', 'usage', json_build_object('input', $3::int, 'output', $4::int)),
				'{"llmCall":{}}', gen_random_uuid()::text)`, org, ex, input, output)
		require.NoError(t, err)
	}
	answer(parent, 80, 20)
	answer(child, 40, 10)
	require.NoError(t, migrations.Apply(ctx, conn))

	spent := func(table, key, id string) int64 {
		var n int64
		require.NoError(t, conn.QueryRow(ctx, `SELECT tokens FROM `+table+` WHERE `+key+` = $1`, id).Scan(&n))
		return n
	}
	require.Equal(t, int64(150), spent("execution_spend", "agent_execution_id", parent), "the parent's call and its child's")
	require.Equal(t, int64(50), spent("execution_spend", "agent_execution_id", child))
	require.Equal(t, int64(150), spent("definition_spend", "agent_definition_id", def), "each call once")

	answer(child, 5, 5)
	require.Equal(t, int64(160), spent("execution_spend", "agent_execution_id", parent), "the trigger rolls up as the backfill did")
	require.Equal(t, int64(60), spent("execution_spend", "agent_execution_id", child))
	require.Equal(t, int64(160), spent("definition_spend", "agent_definition_id", def))
}
