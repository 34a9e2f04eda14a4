package entrystore_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/entrystore"
)

func TestAppendEntryIsIdempotent(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	root := f.append(t, "", "k/root")
	require.Equal(t, 0, root.Depth)
	require.Equal(t, f.org.ID, root.OrgID)

	again, created, err := f.store.AppendEntry(ctx, entrystore.Entry{
		OrgID: f.org.ID, ExecutionID: f.exec.ID, Type: "message", Content: []byte(`{"other":true}`), IdempotencyKey: "k/root",
	})
	require.NoError(t, err)
	require.False(t, created)
	require.Equal(t, root.ID, again.ID)
	require.JSONEq(t, `{"text":"k/root"}`, string(again.Content))

	child := f.append(t, root.ID, "k/child")
	require.Equal(t, 1, child.Depth)
	got, err := f.store.GetEntryByKey(ctx, f.org.ID, f.exec.ID, "k/child")
	require.NoError(t, err)
	require.Equal(t, child, got)
	byID, err := f.store.GetEntry(ctx, f.org.ID, child.ID)
	require.NoError(t, err)
	require.Equal(t, child, byID)
}

func TestAppendEntryRejectsBadInput(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	other, err := f.store.CreateExecution(ctx, entrystore.Execution{OrgID: f.org.ID, Kind: "k"})
	require.NoError(t, err)
	foreign, _, err := f.store.AppendEntry(ctx, entrystore.Entry{OrgID: f.org.ID, ExecutionID: other.ID, Type: "message", IdempotencyKey: "x"})
	require.NoError(t, err)

	for name, e := range map[string]entrystore.Entry{
		"no key":            {OrgID: f.org.ID, ExecutionID: f.exec.ID, Type: "message"},
		"no type":           {OrgID: f.org.ID, ExecutionID: f.exec.ID, IdempotencyKey: "a"},
		"malformed parent":  {OrgID: f.org.ID, ExecutionID: f.exec.ID, Type: "message", IdempotencyKey: "b", ParentID: "nope"},
		"missing parent":    {OrgID: f.org.ID, ExecutionID: f.exec.ID, Type: "message", IdempotencyKey: "c", ParentID: "5b0d7d8e-7c43-4c49-9d0f-2b6d1b8f0a11"},
		"other exec parent": {OrgID: f.org.ID, ExecutionID: f.exec.ID, Type: "message", IdempotencyKey: "d", ParentID: foreign.ID},
		"malformed exec":    {OrgID: f.org.ID, ExecutionID: "x", Type: "message", IdempotencyKey: "e"},
		"bad json":          {OrgID: f.org.ID, ExecutionID: f.exec.ID, Type: "message", IdempotencyKey: "f", Content: []byte("{")},
	} {
		_, _, err := f.store.AppendEntry(ctx, e)
		require.ErrorIs(t, err, entrystore.ErrInvalid, name)
	}
	_, _, err = f.store.AppendEntry(ctx, entrystore.Entry{OrgID: f.org.ID, ExecutionID: "5b0d7d8e-7c43-4c49-9d0f-2b6d1b8f0a11", Type: "message", IdempotencyKey: "g"})
	require.ErrorIs(t, err, entrystore.ErrNotFound)
	_, _, err = f.store.AppendEntry(ctx, entrystore.Entry{ID: foreign.ID, OrgID: f.org.ID, ExecutionID: f.exec.ID, Type: "message", IdempotencyKey: "h"})
	require.ErrorIs(t, err, entrystore.ErrConflict)
}

func TestConcurrentAppendsWithOneKeyMakeOneEntry(t *testing.T) {
	f := newFixture(t)
	root := f.append(t, "", "root")
	for round := range 10 {
		key := fmt.Sprintf("same/%d", round)
		var wg sync.WaitGroup
		results := make([]entrystore.Entry, 2)
		created := make([]bool, 2)
		errs := make([]error, 2)
		for i := range 2 {
			wg.Go(func() {
				results[i], created[i], errs[i] = f.store.AppendEntry(context.Background(), entrystore.Entry{
					OrgID: f.org.ID, ExecutionID: f.exec.ID, ParentID: root.ID, Type: "message", IdempotencyKey: key,
				})
			})
		}
		wg.Wait()
		require.NoError(t, errs[0])
		require.NoError(t, errs[1])
		require.Equal(t, results[0].ID, results[1].ID)
		require.True(t, created[0] != created[1], "exactly one creates")
	}
	var n int
	require.NoError(t, f.store.Pool().QueryRow(context.Background(),
		"SELECT count(*) FROM agent_entry WHERE idempotency_key LIKE 'same/%'").Scan(&n))
	require.Equal(t, 10, n)
}

func TestConcurrentAppendsBuildAConsistentTree(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	f.append(t, "", "root")
	const workers, each = 8, 15
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				var leaf string
				if err := f.store.Pool().QueryRow(ctx, `SELECT id::text FROM agent_entry
					WHERE agent_execution_id = $1 ORDER BY seq DESC LIMIT 1`, f.exec.ID).Scan(&leaf); err != nil {
					errs <- err
					return
				}
				if _, _, err := f.store.AppendEntry(ctx, entrystore.Entry{
					OrgID: f.org.ID, ExecutionID: f.exec.ID, ParentID: leaf, Type: "message",
					IdempotencyKey: fmt.Sprintf("w%d/%d", w, i),
				}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}

	all, next, err := f.store.ListEntries(ctx, f.org.ID, f.exec.ID, entrystore.Page{Limit: 500})
	require.NoError(t, err)
	require.Empty(t, next)
	require.Len(t, all, 1+workers*each)
	byID := map[string]entrystore.Entry{}
	for _, e := range all {
		byID[e.ID] = e
	}
	roots := 0
	for _, e := range all {
		if e.ParentID == "" {
			roots++
			require.Equal(t, 0, e.Depth)
			continue
		}
		parent, ok := byID[e.ParentID]
		require.True(t, ok, "parent of %s exists", e.ID)
		require.Equal(t, parent.Depth+1, e.Depth)
		require.Less(t, parent.Seq, e.Seq)
	}
	require.Equal(t, 1, roots)
	// Every entry's path is its ancestor chain, whatever branches the race made.
	for _, e := range all {
		path, err := f.store.Path(ctx, f.org.ID, e.ID)
		require.NoError(t, err)
		require.Len(t, path, e.Depth+1)
		require.Equal(t, e.ID, path[len(path)-1].ID)
		for i := 1; i < len(path); i++ {
			require.Equal(t, path[i-1].ID, path[i].ParentID)
		}
	}
}

func TestPathOfABranchExcludesTheOther(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	// root → a1 → a2 → a3, and a second branch a1 → b2 → b3 → b4, plus a
	// branch off the branch, b3 → c4.
	root := f.append(t, "", "root")
	a1 := f.append(t, root.ID, "a1")
	a2 := f.append(t, a1.ID, "a2")
	a3 := f.append(t, a2.ID, "a3")
	b2 := f.append(t, a1.ID, "b2")
	b3 := f.append(t, b2.ID, "b3")
	b4 := f.append(t, b3.ID, "b4")
	c4 := f.append(t, b3.ID, "c4")

	ids := func(es []entrystore.Entry) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.ID)
		}
		return out
	}
	for leaf, want := range map[string][]entrystore.Entry{
		a3.ID: {root, a1, a2, a3},
		a2.ID: {root, a1, a2},
		b4.ID: {root, a1, b2, b3, b4},
		c4.ID: {root, a1, b2, b3, c4},
		b2.ID: {root, a1, b2},
	} {
		path, err := f.store.Path(ctx, f.org.ID, leaf)
		require.NoError(t, err)
		require.Equal(t, ids(want), ids(path))
	}
	path, err := f.store.Path(ctx, f.org.ID, c4.ID)
	require.NoError(t, err)
	require.Equal(t, c4, path[4])

	kids, err := f.store.Children(ctx, f.org.ID, a1.ID)
	require.NoError(t, err)
	require.Equal(t, []string{a2.ID, b2.ID}, ids(kids))
}

func TestAppendEntriesInOneTransaction(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	root := f.append(t, "", "root")
	batch := []entrystore.Entry{
		{OrgID: f.org.ID, ExecutionID: f.exec.ID, ParentID: root.ID, Type: "message", Role: "assistant", IdempotencyKey: "t/1"},
		{OrgID: f.org.ID, ExecutionID: f.exec.ID, ParentID: entrystore.PrevParent, Type: "llm_call", IdempotencyKey: "t/2"},
	}
	es, err := f.store.AppendEntries(ctx, batch)
	require.NoError(t, err)
	require.Len(t, es, 2)
	require.Equal(t, es[0].ID, es[1].ParentID)
	require.Equal(t, 2, es[1].Depth)

	again, err := f.store.AppendEntries(ctx, batch)
	require.NoError(t, err)
	require.Equal(t, es, again)

	// A bad entry rolls the whole batch back.
	_, err = f.store.AppendEntries(ctx, []entrystore.Entry{
		{OrgID: f.org.ID, ExecutionID: f.exec.ID, ParentID: root.ID, Type: "message", IdempotencyKey: "u/1"},
		{OrgID: f.org.ID, ExecutionID: f.exec.ID, ParentID: "bad", Type: "message", IdempotencyKey: "u/2"},
	})
	require.ErrorIs(t, err, entrystore.ErrInvalid)
	_, err = f.store.GetEntryByKey(ctx, f.org.ID, f.exec.ID, "u/1")
	require.ErrorIs(t, err, entrystore.ErrNotFound)
}
