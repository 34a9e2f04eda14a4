package entrystore_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/entrystore"
)

// TestStaleWriterCannotBranch is the race chaos -failover -temporal-server
// found: a workflow task the server timed out (t1) still runs its model
// call while the task that replaced it (t2) consumes a message under the
// same entry; the late answer must not be written beside the message.
// Appends fenced no earlier than the execution's fence, and appends
// without one, go on as before: a repeat finds its entry, a branch after
// the leaf was moved back is still a branch.
func TestStaleWriterCannotBranch(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	t1 := time.Date(2026, 11, 27, 23, 21, 54, 748_000_000, time.UTC)
	t2 := t1.Add(5 * time.Second)
	at := func(tm time.Time) context.Context { return entrystore.WithWriteFence(ctx, tm) }
	entry := func(parent, key string) entrystore.Entry {
		return entrystore.Entry{OrgID: f.org.ID, ExecutionID: f.exec.ID, ParentID: parent, Type: "message", IdempotencyKey: key}
	}
	root := f.append(t, "", "k/root")
	tool, created, err := f.store.AppendEntry(at(t1), entry(root.ID, "0/2"))
	require.NoError(t, err)
	require.True(t, created)

	// The new task (t2) takes the message under the tool result.
	msg, created, err := f.store.AppendEntry(at(t2), entry(tool.ID, "signal/m1"))
	require.NoError(t, err)
	require.True(t, created)

	// The lost task's late answer (t1) under the same entry: refused.
	_, _, err = f.store.AppendEntry(at(t1), entry(tool.ID, "3/1"))
	require.ErrorIs(t, err, entrystore.ErrConflict)
	require.ErrorContains(t, err, "newer workflow task")
	_, err = f.store.GetEntryByKey(ctx, f.org.ID, f.exec.ID, "3/1")
	require.ErrorIs(t, err, entrystore.ErrNotFound, "nothing written")
	ex, err := f.store.GetExecution(ctx, f.org.ID, f.exec.ID)
	require.NoError(t, err)
	require.Equal(t, msg.ID, ex.LeafEntryID, "the leaf stays at the message")

	// A repeat of a stale task's own append still finds its entry.
	again, created, err := f.store.AppendEntry(at(t1), entry(root.ID, "0/2"))
	require.NoError(t, err)
	require.False(t, created)
	require.Equal(t, tool.ID, again.ID)

	// The new task goes on under the message; a stale continuation of the
	// leaf is not a branch and is not refused.
	answer, created, err := f.store.AppendEntry(at(t2), entry(msg.ID, "3/1"))
	require.NoError(t, err)
	require.True(t, created)
	require.Equal(t, msg.ID, answer.ParentID)

	// Appends without a fence (activities, the gateway) branch as before,
	// and a newer task may branch where the leaf was moved back to.
	_, created, err = f.store.AppendEntry(ctx, entry(tool.ID, "gateway/branch"))
	require.NoError(t, err)
	require.True(t, created)
	_, created, err = f.store.AppendEntry(at(t2.Add(time.Minute)), entry(tool.ID, "4/1"))
	require.NoError(t, err)
	require.True(t, created)
}
