package workspace_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk/tools/workspace"
)

// blobs is a content store in memory, by sha256, for the tests.
type blobs map[string][]byte

func (b blobs) put(t *testing.T, w *workspace.Workspace, m workspace.Manifest) {
	for _, f := range m.Files {
		if f.Type == workspace.TypeFile {
			data, err := w.ReadSnapshotFile(f)
			require.NoError(t, err)
			b[f.SHA256] = data
		}
	}
}

func (b blobs) read(sha string) ([]byte, error) {
	if d, ok := b[sha]; ok {
		return d, nil
	}
	return nil, errors.New("no such blob")
}

func open(t *testing.T, s workspace.Workspaces, id string) *workspace.Workspace {
	w, err := s.Open(id)
	require.NoError(t, err)
	t.Cleanup(func() { w.Close() })
	return w
}

// TestSnapshotRoundTrip: a snapshot lists files, directories and links in
// path order, leaves ignored paths out, and restoring it into another
// workspace gives the same manifest; restoring an older one over a
// changed workspace takes the workspace back (changed bytes, removed and
// added files) and leaves ignored paths alone.
func TestSnapshotRoundTrip(t *testing.T) {
	s := workspace.Workspaces{Root: filepath.Join(t.TempDir(), "ws")}
	w := open(t, s, "src")
	r := w.Root()
	require.NoError(t, r.MkdirAll("src/pkg", 0o700))
	require.NoError(t, r.MkdirAll("node_modules/x", 0o700))
	require.NoError(t, r.MkdirAll(".git/objects/ab", 0o700))
	require.NoError(t, r.WriteFile("a.txt", []byte("one\n"), 0o600))
	require.NoError(t, r.WriteFile("src/pkg/run.sh", []byte("#!/bin/sh\n"), 0o700))
	require.NoError(t, r.WriteFile("node_modules/x/big.js", []byte("ignored"), 0o600))
	require.NoError(t, r.WriteFile(".git/objects/ab/cd", []byte("ignored"), 0o600))
	require.NoError(t, r.WriteFile(".git/HEAD", []byte("ref: main\n"), 0o600))
	require.NoError(t, r.Symlink("a.txt", "link"))
	lim := workspace.SnapshotLimits{Ignore: []string{"node_modules", ".git/objects"}}

	m, err := w.Snapshot(lim)
	require.NoError(t, err)
	var paths []string
	for _, f := range m.Files {
		paths = append(paths, f.Path+":"+f.Type)
	}
	require.Equal(t, []string{".git:dir", ".git/HEAD:file", "a.txt:file", "link:symlink", "src:dir", "src/pkg:dir", "src/pkg/run.sh:file"}, paths)
	require.False(t, m.Truncated)
	sum := sha256.Sum256([]byte("one\n"))
	require.Equal(t, hex.EncodeToString(sum[:]), m.Files[2].SHA256)
	require.Equal(t, int64(4), m.Files[2].Size)
	b := blobs{}
	b.put(t, w, m)

	other := open(t, s, "dst")
	require.NoError(t, other.Restore(m, lim, b.read))
	again, err := other.Snapshot(lim)
	require.NoError(t, err)
	require.Equal(t, m, again)
	fi, err := other.Root().Stat("src/pkg/run.sh")
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), fi.Mode().Perm(), "the owner's execute bit is kept")

	// Change the source, then take it back to m.
	require.NoError(t, r.WriteFile("a.txt", []byte("two\n"), 0o600))
	require.NoError(t, r.WriteFile("b.txt", []byte("new\n"), 0o600))
	require.NoError(t, r.RemoveAll("src"))
	require.NoError(t, w.Restore(m, lim, b.read))
	back, err := w.Snapshot(lim)
	require.NoError(t, err)
	require.Equal(t, m, back)
	kept, err := r.ReadFile("node_modules/x/big.js")
	require.NoError(t, err, "an ignored path is left as it is")
	require.Equal(t, "ignored", string(kept))
}

// TestSnapshotStoresLinksNotTargets: a symlink a hostile command made to
// /etc/passwd, and one to a directory outside, are stored as links — the
// manifest holds their text and no sha256 — and nothing under them is
// read.
func TestSnapshotStoresLinksNotTargets(t *testing.T) {
	s := workspace.Workspaces{Root: filepath.Join(t.TempDir(), "ws")}
	w := open(t, s, "x")
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret"), []byte("secret"), 0o600))
	require.NoError(t, os.Symlink("/etc/passwd", filepath.Join(w.Dir(), "passwd")))
	require.NoError(t, os.Symlink(outside, filepath.Join(w.Dir(), "out")))
	m, err := w.Snapshot(workspace.SnapshotLimits{})
	require.NoError(t, err)
	require.Equal(t, []workspace.File{
		{Path: "out", Type: workspace.TypeSymlink, Mode: 0o777, Target: outside},
		{Path: "passwd", Type: workspace.TypeSymlink, Mode: 0o777, Target: "/etc/passwd"},
	}, m.Files)
	_, err = w.ReadSnapshotFile(workspace.File{Path: "passwd", Type: workspace.TypeFile, SHA256: strings.Repeat("0", 64)})
	require.Error(t, err, "a link is never opened as a file")
}

// TestRestoreRefusesPathsOutside: a manifest path that climbs out, is
// absolute or unclean is refused before anything is written, and a
// hand-made manifest that puts a link to a directory outside on the way
// of a file cannot write through it.
func TestRestoreRefusesPathsOutside(t *testing.T) {
	s := workspace.Workspaces{Root: filepath.Join(t.TempDir(), "ws")}
	w := open(t, s, "x")
	data := []byte("pwned\n")
	sum := sha256.Sum256(data)
	sha := hex.EncodeToString(sum[:])
	b := blobs{sha: data}
	for _, p := range []string{"../escape.txt", "a/../../escape.txt", "/tmp/escape.txt", "./a.txt", "a//b", ""} {
		m := workspace.Manifest{Files: []workspace.File{
			{Path: "fine.txt", Type: workspace.TypeFile, Mode: 0o600, Size: int64(len(data)), SHA256: sha},
			{Path: p, Type: workspace.TypeFile, Mode: 0o600, Size: int64(len(data)), SHA256: sha},
		}}
		err := w.Restore(m, workspace.SnapshotLimits{}, b.read)
		require.ErrorIs(t, err, workspace.ErrBadManifest, p)
		_, err = w.Root().Stat("fine.txt")
		require.ErrorIs(t, err, os.ErrNotExist, "nothing is written from a refused manifest (%q)", p)
	}
	_, err := os.Stat(filepath.Join(s.Root, "escape.txt"))
	require.ErrorIs(t, err, os.ErrNotExist)

	outside := t.TempDir()
	m := workspace.Manifest{Files: []workspace.File{
		{Path: "d", Type: workspace.TypeSymlink, Mode: 0o777, Target: outside},
		{Path: "d/passwd", Type: workspace.TypeFile, Mode: 0o600, Size: int64(len(data)), SHA256: sha},
	}}
	require.Error(t, w.Restore(m, workspace.SnapshotLimits{}, b.read))
	// With the link in place already (kept, as the manifest lists it),
	// the file's write would go through it: the os.Root refuses.
	require.NoError(t, w.Restore(workspace.Manifest{Files: m.Files[:1]}, workspace.SnapshotLimits{}, b.read))
	require.Error(t, w.Restore(m, workspace.SnapshotLimits{}, b.read))
	_, err = os.Stat(filepath.Join(outside, "passwd"))
	require.ErrorIs(t, err, os.ErrNotExist, "no write goes through a link out of the workspace")

	bad := workspace.Manifest{Files: []workspace.File{{Path: "x.txt", Type: workspace.TypeFile, Mode: 0o600, SHA256: strings.Repeat("ab", 32)}}}
	require.ErrorIs(t, w.Restore(bad, workspace.SnapshotLimits{}, blobs{strings.Repeat("ab", 32): data}.read), workspace.ErrBadManifest,
		"bytes that do not hash to the manifest's sha256 are refused")
}

// TestSnapshotBounds: past MaxFiles the walk stops, past MaxBytes a file
// is left out; either way the manifest says it is truncated.
func TestSnapshotBounds(t *testing.T) {
	s := workspace.Workspaces{Root: filepath.Join(t.TempDir(), "ws")}
	w := open(t, s, "x")
	for _, n := range []string{"a", "b", "c", "d"} {
		require.NoError(t, w.Root().WriteFile(n, []byte(strings.Repeat(n, 10)), 0o600))
	}
	m, err := w.Snapshot(workspace.SnapshotLimits{MaxFiles: 2})
	require.NoError(t, err)
	require.Len(t, m.Files, 2)
	require.True(t, m.Truncated)
	require.Contains(t, m.TruncatedReason, "more than 2 files")
	m, err = w.Snapshot(workspace.SnapshotLimits{MaxBytes: 25})
	require.NoError(t, err)
	require.Len(t, m.Files, 2)
	require.Equal(t, int64(20), m.TotalBytes())
	require.True(t, m.Truncated)
	require.Contains(t, m.TruncatedReason, "2 files left out")
}
