package workspace_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk/tools/workspace"
)

// TestWorkspacesArePrivateAndGo: the root and each workspace are 0700;
// Remove deletes one (even with a directory a command made read-only),
// twice without error; Sweep removes only those unused for longer than
// it is given, and never the root's own hidden files.
func TestWorkspacesArePrivateAndGo(t *testing.T) {
	s := workspace.Workspaces{Root: filepath.Join(t.TempDir(), "ws")}
	for _, id := range []string{"old", "new", "gone"} {
		w, err := s.Open(id)
		require.NoError(t, err)
		require.NoError(t, w.Root().MkdirAll("a/b", 0o700))
		require.NoError(t, w.Root().WriteFile("a/b/f", []byte("x"), workspace.FileMode))
		require.NoError(t, os.Chmod(filepath.Join(w.Dir(), "a"), 0o500))
		w.Close()
	}
	for _, p := range []string{s.Root, s.Dir("old")} {
		fi, err := os.Stat(p)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o700), fi.Mode().Perm(), p)
	}
	_, err := s.Open(".sandbox")
	require.ErrorContains(t, err, "cannot name a workspace")

	require.NoError(t, s.Remove("gone"))
	require.NoDirExists(t, s.Dir("gone"))
	require.NoError(t, s.Remove("gone"), "removing twice is fine")

	long := time.Now().Add(-48 * time.Hour)
	require.NoError(t, os.Chtimes(s.Dir("old"), long, long))
	require.NoError(t, os.Mkdir(filepath.Join(s.Root, ".sandbox"), 0o700))
	require.NoError(t, os.Chtimes(filepath.Join(s.Root, ".sandbox"), long, long))
	n, err := s.Sweep(24 * time.Hour)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.NoDirExists(t, s.Dir("old"))
	require.DirExists(t, s.Dir("new"))
	require.DirExists(t, filepath.Join(s.Root, ".sandbox"))
}

// TestQuotaCountsDiskNotClaims: a sparse file costs what it holds; a
// written one its size, and past the quota CheckQuota says so.
func TestQuotaCountsDiskNotClaims(t *testing.T) {
	s := workspace.Workspaces{Root: t.TempDir(), Quota: 1 << 20}
	w, err := s.Open("e")
	require.NoError(t, err)
	defer w.Close()
	f, err := w.Root().Create("sparse")
	require.NoError(t, err)
	require.NoError(t, f.Truncate(1<<30))
	f.Close()
	require.NoError(t, w.CheckQuota())
	require.NoError(t, w.Root().WriteFile("full", make([]byte, 2<<20), workspace.FileMode))
	require.ErrorIs(t, w.CheckQuota(), workspace.ErrOverQuota)
	require.ErrorContains(t, w.CheckQuota(), "of the 1 MiB allowed")
	require.Equal(t, "1.5 GiB", workspace.Bytes(3<<29))
}
