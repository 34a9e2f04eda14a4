package entrystore

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/internal/pgtest"
)

// The path queries' rows come in binary and are decoded by pathDecoder,
// to exactly what reading each entry alone gives: IDs, parents (the
// root's none, a fork's first entry's its branch point), nullable role,
// turn and metadata, content and times.
func TestPathIsDecodedFromBinaryRows(t *testing.T) {
	ctx := context.Background()
	s := New(pgtest.New(t))
	org, err := s.CreateOrg(ctx, "acme", "Acme")
	require.NoError(t, err)
	ex, err := s.CreateExecution(ctx, Execution{OrgID: org.ID, Kind: DefaultKind})
	require.NoError(t, err)
	add := func(parent, key, role, turn, meta string) Entry {
		e := Entry{OrgID: org.ID, ExecutionID: ex.ID, ParentID: parent, Type: "message", Role: role, TurnID: turn,
			Content: []byte(`{"text":"` + key + ` é \"quoted\""}`), IdempotencyKey: key}
		if meta != "" {
			e.Metadata = []byte(meta)
		}
		if role == "" {
			e.Type = "llm_call"
		}
		got, _, err := s.AppendEntry(ctx, e)
		require.NoError(t, err)
		return got
	}
	root := add("", "root", "user", "", "")
	a := add(root.ID, "a", "", "t1", `{"usage":{"input":3}}`)
	b := add(a.ID, "b", "assistant", "t1", "")
	add(b.ID, "c", "user", "t2", "")
	fork := add(b.ID, "fork", "user", "t2", `{"x":1}`)
	leaf := add(fork.ID, "leaf", "assistant", "t2", "")

	before := decodedPaths.Load()
	path, err := s.Path(ctx, org.ID, leaf.ID)
	require.NoError(t, err)
	require.Equal(t, before+1, decodedPaths.Load(), "the binary decoder read it")
	want := []Entry{root, a, b, fork, leaf}
	require.Len(t, path, len(want))
	for i, w := range want {
		one, err := s.GetEntry(ctx, org.ID, w.ID)
		require.NoError(t, err)
		require.Equal(t, one, path[i], "entry %d", i)
	}
	ctxPath, err := s.ContextPath(ctx, org.ID, leaf.ID)
	require.NoError(t, err)
	require.Equal(t, path, ctxPath)
}
