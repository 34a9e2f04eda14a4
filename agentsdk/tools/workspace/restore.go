package workspace

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"syscall"
)

// ErrBadManifest is Restore's error for a manifest it will not write: a
// path that is absolute, climbs out (..), is not clean, or is given
// twice; an unknown type; a file whose bytes do not hash to its sha256.
var ErrBadManifest = errors.New("workspace: the manifest cannot be restored")

// Check refuses a manifest Restore would not write, before anything is
// written: a manifest is read back from a store, and a path in it must
// never lead out of the workspace.
func (m Manifest) Check() error {
	seen := make(map[string]bool, len(m.Files))
	for _, f := range m.Files {
		p := f.Path
		if p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, "\\") || path.Clean(p) != p ||
			p == "." || p == ".." || strings.HasPrefix(p, "../") || !fs.ValidPath(p) {
			return fmt.Errorf("%w: path %q is not a clean path inside the workspace", ErrBadManifest, p)
		}
		if seen[p] {
			return fmt.Errorf("%w: path %q is given twice", ErrBadManifest, p)
		}
		seen[p] = true
		switch f.Type {
		case TypeDir, TypeSymlink:
		case TypeFile:
			if len(f.SHA256) != 2*sha256.Size {
				return fmt.Errorf("%w: file %q has no sha256", ErrBadManifest, p)
			}
		default:
			return fmt.Errorf("%w: %q has unknown type %q", ErrBadManifest, p, f.Type)
		}
	}
	return nil
}

// Restore makes the workspace hold exactly the manifest's files (paths
// lim ignores are left as they are): it writes each file whose bytes
// differ, creates directories and links, and removes what the manifest
// does not list. read gives a file's bytes by sha256; they are checked
// against it. Every write goes through the workspace's os.Root and
// refuses to follow a symlink, so not even a hand-made manifest (a link
// "d" to /etc, then a file "d/passwd") writes outside the workspace.
func (w *Workspace) Restore(m Manifest, lim SnapshotLimits, read func(sha256 string) ([]byte, error)) error {
	if err := m.Check(); err != nil {
		return err
	}
	want := make(map[string]File, len(m.Files))
	for _, f := range m.Files {
		want[f.Path] = f
	}
	have, err := w.Snapshot(SnapshotLimits{Ignore: lim.Ignore})
	if err != nil {
		return err
	}
	// Remove what is not wanted, or wanted as another type, deepest
	// first so a directory is empty when its turn comes.
	for _, f := range slices.Backward(have.Files) {
		if g, ok := want[f.Path]; ok && g.Type == f.Type && (f.Type != TypeSymlink || g.Target == f.Target) {
			continue
		}
		if err := w.root.RemoveAll(f.Path); err != nil {
			return fmt.Errorf("workspace: restore: remove %s: %w", f.Path, err)
		}
	}
	current := make(map[string]File, len(have.Files))
	for _, f := range have.Files {
		current[f.Path] = f
	}
	// Directories and files before links: a link cannot then stand in a
	// path a later write goes through.
	for _, f := range m.Files {
		if f.Type != TypeDir {
			continue
		}
		if err := w.root.MkdirAll(f.Path, DirMode); err != nil {
			return fmt.Errorf("workspace: restore: %s: %w", f.Path, err)
		}
	}
	for _, f := range m.Files {
		if f.Type != TypeFile {
			continue
		}
		if c, ok := current[f.Path]; ok && c.Type == TypeFile && c.SHA256 == f.SHA256 && c.Mode == uint32(restoredMode(f)) {
			continue
		}
		if err := w.restoreFile(f, read); err != nil {
			return err
		}
	}
	for _, f := range m.Files {
		if f.Type != TypeSymlink {
			continue
		}
		if c, ok := current[f.Path]; ok && c.Type == TypeSymlink && c.Target == f.Target {
			continue
		}
		if err := w.root.MkdirAll(path.Dir(f.Path), DirMode); err != nil {
			return fmt.Errorf("workspace: restore: %s: %w", f.Path, err)
		}
		if err := w.root.Symlink(f.Target, f.Path); err != nil {
			return fmt.Errorf("workspace: restore: link %s: %w", f.Path, err)
		}
	}
	return nil
}

func (w *Workspace) restoreFile(f File, read func(string) ([]byte, error)) error {
	data, err := read(f.SHA256)
	if err != nil {
		return fmt.Errorf("workspace: restore %s: %w", f.Path, err)
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != f.SHA256 {
		return fmt.Errorf("%w: the bytes of %q do not hash to its sha256", ErrBadManifest, f.Path)
	}
	if err := w.root.MkdirAll(path.Dir(f.Path), DirMode); err != nil {
		return fmt.Errorf("workspace: restore: %s: %w", f.Path, err)
	}
	mode := restoredMode(f)
	out, err := w.root.OpenFile(f.Path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, mode)
	if err != nil {
		return fmt.Errorf("workspace: restore: %s: %w", f.Path, err)
	}
	if _, err := out.Write(data); err != nil {
		out.Close()
		return fmt.Errorf("workspace: restore: %s: %w", f.Path, err)
	}
	if err := out.Chmod(mode); err != nil {
		out.Close()
		return fmt.Errorf("workspace: restore: %s: %w", f.Path, err)
	}
	return out.Close()
}

// restoredMode is the mode a file is restored with: private to the
// worker's user, as every workspace file is, whatever mode it was
// recorded with; the owner's execute bit is kept.
func restoredMode(f File) os.FileMode { return os.FileMode(FileMode | f.Mode&0o100) }
