package entrystore_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/entrystore"
)

// leaf reads the execution's recorded leaf.
func (f *fixture) leaf(t *testing.T) string {
	t.Helper()
	ex, err := f.store.GetExecution(context.Background(), f.org.ID, f.exec.ID)
	require.NoError(t, err)
	return ex.LeafEntryID
}

func TestEveryAppendMovesTheLeaf(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	require.Empty(t, f.leaf(t))

	root := f.append(t, "", "root")
	require.Equal(t, root.ID, f.leaf(t))
	a := f.append(t, root.ID, "a")
	require.Equal(t, a.ID, f.leaf(t))

	// A repeat of an older append moves nothing back.
	_, created, err := f.store.AppendEntry(ctx, entrystore.Entry{OrgID: f.org.ID, ExecutionID: f.exec.ID, ParentID: "", Type: "message", IdempotencyKey: "root"})
	require.NoError(t, err)
	require.False(t, created)
	require.Equal(t, a.ID, f.leaf(t))

	// A turn's entries: the leaf is the last of them.
	turn, err := f.store.AppendEntries(ctx, []entrystore.Entry{
		{OrgID: f.org.ID, ExecutionID: f.exec.ID, ParentID: a.ID, Type: "message", Role: "assistant", IdempotencyKey: "t1"},
		{OrgID: f.org.ID, ExecutionID: f.exec.ID, ParentID: entrystore.PrevParent, Type: "message", Role: "tool_result", IdempotencyKey: "t2"},
	})
	require.NoError(t, err)
	require.Equal(t, turn[1].ID, f.leaf(t))

	// A fork under an earlier entry moves the active path to the fork.
	fork := f.append(t, root.ID, "fork")
	require.Equal(t, fork.ID, f.leaf(t))
	path, err := f.store.Path(ctx, f.org.ID, f.leaf(t))
	require.NoError(t, err)
	require.Equal(t, []string{root.ID, fork.ID}, ids(path))

	// A consumed signal's entry is appended in the same transaction.
	sg, err := f.store.PutSignal(ctx, entrystore.Signal{OrgID: f.org.ID, ExecutionID: f.exec.ID, Name: "userMessage", Value: []byte(`"hi"`)})
	require.NoError(t, err)
	msg, err := f.store.ConsumeSignal(ctx, f.org.ID, sg.ID, entrystore.Entry{ParentID: fork.ID, Type: "message", Role: "user"})
	require.NoError(t, err)
	require.Equal(t, msg.ID, f.leaf(t))
}

func TestStepCountsAssistantMessagesOnThePath(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	add := func(parent, role, typ, key string) entrystore.Entry {
		e, _, err := f.store.AppendEntry(ctx, entrystore.Entry{OrgID: f.org.ID, ExecutionID: f.exec.ID, ParentID: parent, Type: typ, Role: role, IdempotencyKey: key})
		require.NoError(t, err)
		return e
	}
	user := add("", "user", "message", "u")
	call := add(user.ID, "", "llm_call", "c1")
	first := add(call.ID, "assistant", "message", "a1")
	tool := add(first.ID, "tool_result", "message", "r1")
	second := add(tool.ID, "assistant", "message", "a2")
	// A regenerated first answer is step 1 again: steps follow the path.
	regen := add(user.ID, "assistant", "message", "a1'")
	require.Equal(t, []int{0, 0, 1, 1, 2, 1}, []int{user.Step, call.Step, first.Step, tool.Step, second.Step, regen.Step})

	path, err := f.store.Path(ctx, f.org.ID, second.ID)
	require.NoError(t, err)
	var steps []int
	for _, e := range path {
		steps = append(steps, e.Step)
	}
	require.Equal(t, []int{0, 0, 1, 1, 2}, steps)
	got, err := f.store.GetEntry(ctx, f.org.ID, tool.ID)
	require.NoError(t, err)
	require.Equal(t, 1, got.Step)
}

func TestPathPagePagesALongForkedPath(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	// 500 entries, then a fork at depth 250 with 100 more: the active path
	// is 250 of the first branch and 100 of the fork.
	var chain []entrystore.Entry
	parent := ""
	for i := range 500 {
		e := f.append(t, parent, fmt.Sprintf("m%d", i))
		chain, parent = append(chain, e), e.ID
	}
	parent = chain[249].ID
	var fork []entrystore.Entry
	for i := range 100 {
		e := f.append(t, parent, fmt.Sprintf("f%d", i))
		fork, parent = append(fork, e), e.ID
	}
	leaf := f.leaf(t)
	require.Equal(t, fork[99].ID, leaf)
	want := append(ids(chain[:250]), ids(fork)...)

	for _, size := range []int{1, 7, 250, 500} {
		var got []string
		after := -1
		for {
			page, more, err := f.store.PathPage(ctx, f.org.ID, f.exec.ID, leaf, after, size, 0, "message")
			require.NoError(t, err)
			require.LessOrEqual(t, len(page), size)
			got = append(got, ids(page)...)
			if !more {
				break
			}
			after = page[len(page)-1].Depth
		}
		require.Equal(t, want, got, "page size %d", size)
	}

	// The first branch's old leaf still pages its own path.
	page, more, err := f.store.PathPage(ctx, f.org.ID, f.exec.ID, chain[499].ID, 495, 50, 0, "")
	require.NoError(t, err)
	require.False(t, more)
	require.Equal(t, ids(chain[496:]), ids(page))

	// Only entries of the type asked for; a leaf of another execution is
	// not found.
	page, _, err = f.store.PathPage(ctx, f.org.ID, f.exec.ID, leaf, -1, 10, 0, "llm_call")
	require.NoError(t, err)
	require.Empty(t, page)
	other, err := f.store.CreateExecution(ctx, entrystore.Execution{OrgID: f.org.ID, Kind: "k"})
	require.NoError(t, err)
	_, _, err = f.store.PathPage(ctx, f.org.ID, other.ID, leaf, -1, 10, 0, "")
	require.ErrorIs(t, err, entrystore.ErrNotFound)
}

func ids(es []entrystore.Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.ID
	}
	return out
}
