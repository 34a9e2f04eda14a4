package entrystore_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/entrystore"
)

// TestNearestSnapshotWalksUpTheTree: the workspace at an entry is its own
// snapshot or its nearest ancestor's, across a branch point, and never a
// sibling branch's; a second snapshot of an entry keeps the first; another
// organization sees none of it; MissingContent names only what is not
// stored.
func TestNearestSnapshotWalksUpTheTree(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	root := f.append(t, "", "root")
	a := f.append(t, root.ID, "a")
	b := f.append(t, a.ID, "b")
	c := f.append(t, b.ID, "c")
	// A branch from a: x, then y.
	x := f.append(t, a.ID, "x")
	y := f.append(t, x.ID, "y")

	_, err := f.store.NearestSnapshot(ctx, f.org.ID, c.ID)
	require.ErrorIs(t, err, entrystore.ErrNotFound, "no snapshot yet")
	manifest := func(body string) string {
		sha, _, err := f.store.PutContent(ctx, f.org.ID, []byte(body), entrystore.ManifestMediaType)
		require.NoError(t, err)
		return sha
	}
	mA, mB, mOther := manifest(`{"files":[]}`), manifest(`{"files":[{"path":"b"}]}`), manifest(`{"files":[{"path":"o"}]}`)
	for _, s := range []entrystore.WorkspaceSnapshot{{EntryID: a.ID, Manifest: mA, Files: 0}, {EntryID: b.ID, Manifest: mB, Files: 1, Bytes: 3}} {
		s.OrgID = f.org.ID
		got, err := f.store.PutSnapshot(ctx, s)
		require.NoError(t, err)
		require.Equal(t, s.Manifest, got.Manifest)
		require.Equal(t, f.exec.ID, got.ExecutionID)
	}
	again, err := f.store.PutSnapshot(ctx, entrystore.WorkspaceSnapshot{OrgID: f.org.ID, EntryID: b.ID, Manifest: mOther, Files: 9})
	require.NoError(t, err)
	require.Equal(t, mB, again.Manifest, "the first snapshot of an entry stays")

	for entry, want := range map[string]string{c.ID: b.ID, b.ID: b.ID, y.ID: a.ID, x.ID: a.ID, a.ID: a.ID} {
		got, err := f.store.NearestSnapshot(ctx, f.org.ID, entry)
		require.NoError(t, err)
		require.Equal(t, want, got.EntryID)
	}
	_, err = f.store.NearestSnapshot(ctx, f.org.ID, root.ID)
	require.ErrorIs(t, err, entrystore.ErrNotFound)

	other, err := f.store.CreateOrg(ctx, "other", "Other")
	require.NoError(t, err)
	_, err = f.store.NearestSnapshot(ctx, other.ID, c.ID)
	require.ErrorIs(t, err, entrystore.ErrNotFound)
	_, _, err = f.store.SnapshotOf(ctx, other.ID, b.ID)
	require.ErrorIs(t, err, entrystore.ErrNotFound)
	_, err = f.store.PutSnapshot(ctx, entrystore.WorkspaceSnapshot{OrgID: other.ID, EntryID: c.ID, Manifest: mA})
	require.ErrorIs(t, err, entrystore.ErrNotFound, "an entry of another organization takes no snapshot")

	absent := sha256.Sum256([]byte("never stored"))
	missing, err := f.store.MissingContent(ctx, f.org.ID, []string{mA, hex.EncodeToString(absent[:]), mB})
	require.NoError(t, err)
	require.Equal(t, []string{hex.EncodeToString(absent[:])}, missing)
	missing, err = f.store.MissingContent(ctx, other.ID, []string{mA})
	require.NoError(t, err)
	require.Equal(t, []string{mA}, missing, "content is per organization")
}
