package entrystore_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/pgtest"
)

// fixture is a store on a fresh schema with one organization and one
// execution in it, the starting point of nearly every test.
type fixture struct {
	store *entrystore.Store
	org   entrystore.Org
	exec  entrystore.Execution
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	ctx := context.Background()
	s := entrystore.New(pgtest.New(t))
	org, err := s.CreateOrg(ctx, "acme", "Acme")
	require.NoError(t, err)
	exec, err := s.CreateExecution(ctx, entrystore.Execution{OrgID: org.ID, Kind: entrystore.DefaultKind})
	require.NoError(t, err)
	return &fixture{store: s, org: org, exec: exec}
}

// chain builds an n-entry linear conversation with COPY (the benchmark's
// subject is reading it, not writing it) and returns its leaf.
func (f *fixture) chain(t testing.TB, n int) entrystore.Entry {
	t.Helper()
	ctx := context.Background()
	ids := make([]string, n)
	require.NoError(t, f.store.Pool().QueryRow(ctx,
		"SELECT array_agg(gen_random_uuid()::text) FROM generate_series(1, $1)", n).Scan(&ids))
	rows := make([][]any, n)
	for i := range n {
		var parent any
		if i > 0 {
			parent = ids[i-1]
		}
		rows[i] = []any{ids[i], f.org.ID, f.exec.ID, parent, i, "message", "user",
			fmt.Sprintf(`{"text":"message %d of a long conversation"}`, i), fmt.Sprintf("k%d", i), ids[0]}
	}
	_, err := f.store.Pool().CopyFrom(ctx, pgx.Identifier{"agent_entry"},
		[]string{"id", "org_id", "agent_execution_id", "parent_id", "depth", "entry_type", "role", "content", "idempotency_key", "branch_id"},
		pgx.CopyFromRows(rows))
	require.NoError(t, err)
	leaf, err := f.store.GetEntry(ctx, f.org.ID, ids[n-1])
	require.NoError(t, err)
	return leaf
}

// append adds one entry with key under parent and fails the test on error.
func (f *fixture) append(t testing.TB, parent, key string) entrystore.Entry {
	t.Helper()
	e, _, err := f.store.AppendEntry(context.Background(), entrystore.Entry{
		OrgID: f.org.ID, ExecutionID: f.exec.ID, ParentID: parent, Type: "message", Role: "user",
		Content: []byte(`{"text":"` + key + `"}`), IdempotencyKey: key,
	})
	require.NoError(t, err)
	return e
}
