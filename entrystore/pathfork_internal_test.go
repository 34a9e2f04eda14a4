package entrystore

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/internal/pgtest"
)

// A fork's path runs through the execution it forks: the entries before
// the fork point keep that execution's ID, as reading each alone gives,
// whether the rows come in binary or (on the simple protocol) as text.
func TestPathAcrossAForkKeepsEachEntrysExecution(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	pool, err := pgxpool.New(ctx, url)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	s := New(pool)
	simple, err := pgxpool.New(ctx, url+"&default_query_exec_mode=simple_protocol")
	require.NoError(t, err)
	t.Cleanup(simple.Close)

	org, err := s.CreateOrg(ctx, "acme", "Acme")
	require.NoError(t, err)
	src, err := s.CreateExecution(ctx, Execution{OrgID: org.ID, Kind: DefaultKind})
	require.NoError(t, err)
	add := func(ex, parent, key string) Entry {
		e, _, err := s.AppendEntry(ctx, Entry{OrgID: org.ID, ExecutionID: ex, ParentID: parent, Type: "message",
			Role: "user", Content: []byte(`{"text":"` + key + `"}`), IdempotencyKey: key})
		require.NoError(t, err)
		return e
	}
	root := add(src.ID, "", "root")
	mid := add(src.ID, root.ID, "mid")
	add(src.ID, mid.ID, "after")
	fork, err := s.CreateExecution(ctx, Execution{OrgID: org.ID, Kind: DefaultKind, ForkedFrom: src.ID, ForkedFromEntry: mid.ID})
	require.NoError(t, err)
	first := add(fork.ID, mid.ID, "fork-first")
	leaf := add(fork.ID, first.ID, "fork-leaf")
	want := []Entry{root, mid, first, leaf}
	for i, w := range want {
		want[i], err = s.GetEntry(ctx, org.ID, w.ID)
		require.NoError(t, err)
	}

	for _, store := range []*Store{s, New(simple)} {
		before := decodedPaths.Load()
		for _, read := range []func(context.Context, string, string) ([]Entry, error){store.Path, store.ContextPath} {
			path, err := read(ctx, org.ID, leaf.ID)
			require.NoError(t, err)
			require.Equal(t, want, path)
		}
		binary := store == s
		require.Equal(t, binary, decodedPaths.Load() > before, "binary rows: %v", binary)
	}
}
