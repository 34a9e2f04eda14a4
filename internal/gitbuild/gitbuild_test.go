package gitbuild

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFilesListsACommitsMigrations reads a folder of a commit that is an
// ancestor of main for good (the adapter's pre-refactor build), not the
// work tree's.
func TestFilesListsACommitsMigrations(t *testing.T) {
	wd, err := os.Getwd()
	require.NoError(t, err)
	root, err := Root(t.Context(), wd)
	require.NoError(t, err)
	names, err := Files(t.Context(), root, "efe88e3687f74cad4d91975461db7904ff1205eb", "migrations")
	require.NoError(t, err)
	require.Contains(t, names, "0001_initial.sql")
	require.NotContains(t, names, "0029_best_of.sql", "a later migration is not in the earlier commit")
	_, err = Files(t.Context(), root, "0000000000000000000000000000000000000000", "migrations")
	require.Error(t, err)
}

func TestUntarRefusesPathsOutsideItsDirectory(t *testing.T) {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	require.NoError(t, tw.WriteHeader(&tar.Header{Name: "../escape", Mode: 0o644, Size: 1, Typeflag: tar.TypeReg}))
	_, err := tw.Write([]byte("x"))
	require.NoError(t, err)
	require.NoError(t, tw.Close())
	dst := filepath.Join(t.TempDir(), "src")
	require.ErrorContains(t, untar(&b, dst), "escapes")
	_, err = os.Stat(filepath.Join(filepath.Dir(dst), "escape"))
	require.True(t, os.IsNotExist(err), "nothing written outside")
}
