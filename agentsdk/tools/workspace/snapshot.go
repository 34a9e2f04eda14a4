package workspace

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"
)

// A snapshot is a workspace's files at one moment as a manifest: path →
// type, mode, size and sha256, the bytes kept elsewhere by their sha256
// (the runtime's content store), so a file unchanged since the last
// snapshot costs nothing new. A symlink is recorded as a link, its text
// read with readlink: a snapshot never reads what a link points at, so a
// link a model made to /etc/passwd stores the string "/etc/passwd".

// The types of a manifest's entries.
const (
	TypeFile    = "file"
	TypeDir     = "dir"
	TypeSymlink = "symlink"
)

// Manifest is a workspace's files at one moment, sorted by path. Its
// JSON (Encode) is canonical, so the same files give the same bytes and
// the same sha256: the manifest's ID.
type Manifest struct {
	Files []File `json:"files"`
	// Truncated: the workspace was past a bound (SnapshotLimits), and
	// Files holds what fitted; TruncatedReason says which bound.
	Truncated       bool   `json:"truncated,omitempty"`
	TruncatedReason string `json:"truncatedReason,omitempty"`
}

// File is one entry of a manifest.
type File struct {
	// Path is slash-separated and relative to the workspace.
	Path string `json:"path"`
	Type string `json:"type"`
	// Mode is the permission bits.
	Mode uint32 `json:"mode"`
	// Size and SHA256 are a regular file's.
	Size   int64  `json:"size,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
	// Target is a symlink's text, as readlink gives it.
	Target string `json:"target,omitempty"`
}

// TotalBytes is the sum of the manifest's file sizes.
func (m Manifest) TotalBytes() int64 {
	var n int64
	for _, f := range m.Files {
		n += f.Size
	}
	return n
}

// SnapshotLimits bound what a snapshot holds; past a bound the manifest
// is truncated, never refused.
type SnapshotLimits struct {
	// MaxFiles is the most entries (files, directories, links); 0: no
	// bound. The walk stops there.
	MaxFiles int
	// MaxBytes is the most bytes of files in all; 0: no bound. A file
	// that would take the total past it is left out and the walk goes on.
	MaxBytes int64
	// Ignore are paths left out with everything under them: a pattern
	// without a slash (node_modules, *.pyc) matches any one path element,
	// one with a slash (.git/objects) the path's leading elements, each
	// element as path.Match matches it.
	Ignore []string
}

// Ignored reports whether rel, a slash-separated path relative to the
// workspace, is one of the patterns' paths or under one.
func (l SnapshotLimits) Ignored(rel string) bool {
	elems := strings.Split(rel, "/")
	for _, p := range l.Ignore {
		pe := strings.Split(strings.Trim(p, "/"), "/")
		if len(pe) == 1 {
			for _, e := range elems {
				if ok, _ := path.Match(pe[0], e); ok {
					return true
				}
			}
			continue
		}
		if len(pe) > len(elems) {
			continue
		}
		match := true
		for i := range pe {
			if ok, _ := path.Match(pe[i], elems[i]); !ok {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

// OpenExisting opens the execution's workspace only if it exists:
// fs.ErrNotExist when it does not. Unlike Open it creates nothing and
// does not count as a use (Sweep).
func (s Workspaces) OpenExisting(executionID string) (*Workspace, error) {
	if err := validID(executionID); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(s.Dir(executionID))
	if err != nil {
		return nil, fmt.Errorf("workspace: open: %w", err)
	}
	return &Workspace{dir: s.Dir(executionID), root: root, quota: s.Quota}, nil
}

// Snapshot walks the workspace, in path order, and returns its manifest,
// hashing each regular file. It never follows a symlink; other special
// files (fifos, sockets, devices) are left out. Read a listed file's
// bytes with ReadSnapshotFile.
func (w *Workspace) Snapshot(lim SnapshotLimits) (Manifest, error) {
	m := Manifest{Files: []File{}}
	var total int64
	var skipped []string
	err := fs.WalkDir(w.root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if p == "." {
			return err
		}
		if err != nil {
			// Removed while we walk, or made unreadable by a command:
			// what cannot be read is not in the snapshot.
			return skipDir(d)
		}
		if lim.Ignored(p) {
			return skipDir(d)
		}
		if lim.MaxFiles > 0 && len(m.Files) >= lim.MaxFiles {
			m.Truncated = true
			m.TruncatedReason = fmt.Sprintf("the workspace holds more than %d files", lim.MaxFiles)
			return fs.SkipAll
		}
		info, err := d.Info()
		if err != nil {
			return skipDir(d)
		}
		f := File{Path: p, Mode: uint32(info.Mode().Perm())}
		switch t := d.Type(); {
		case t.IsDir():
			f.Type = TypeDir
		case t&fs.ModeSymlink != 0:
			target, err := w.root.Readlink(p)
			if err != nil {
				return nil
			}
			f.Type, f.Target = TypeSymlink, target
		case t.IsRegular():
			if lim.MaxBytes > 0 && total+info.Size() > lim.MaxBytes {
				skipped = append(skipped, p)
				return nil
			}
			sum, size, err := w.hashFile(p)
			if err != nil {
				return nil
			}
			if lim.MaxBytes > 0 && total+size > lim.MaxBytes {
				skipped = append(skipped, p)
				return nil
			}
			total += size
			f.Type, f.Size, f.SHA256 = TypeFile, size, sum
		default:
			return nil
		}
		m.Files = append(m.Files, f)
		return nil
	})
	if err != nil {
		return Manifest{}, fmt.Errorf("workspace: snapshot: %w", err)
	}
	if len(skipped) > 0 && !m.Truncated {
		m.Truncated = true
		m.TruncatedReason = fmt.Sprintf("%d files left out past the %s bound, the first %s", len(skipped), Bytes(lim.MaxBytes), skipped[0])
	}
	return m, nil
}

func skipDir(d fs.DirEntry) error {
	if d != nil && d.IsDir() {
		return fs.SkipDir
	}
	return nil
}

// openRegular opens p for reading only if it is a regular file, without
// following a symlink (a command may swap one in after the walk) and
// without blocking on a fifo.
func (w *Workspace) openRegular(p string) (*os.File, int64, error) {
	f, err := w.root.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, 0, err
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, 0, fmt.Errorf("%s is not a regular file", p)
	}
	return f, fi.Size(), nil
}

func (w *Workspace) hashFile(p string) (string, int64, error) {
	f, _, err := w.openRegular(p)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// ErrChanged is ReadSnapshotFile's error for a file whose bytes are no
// longer those its manifest entry hashed.
var ErrChanged = errors.New("the file changed since the snapshot hashed it")

// ReadSnapshotFile reads the regular file f of a manifest Snapshot made,
// checking that its bytes still hash to f.SHA256 (ErrChanged if not).
func (w *Workspace) ReadSnapshotFile(f File) ([]byte, error) {
	r, size, err := w.openRegular(f.Path)
	if err != nil {
		return nil, fmt.Errorf("workspace: snapshot %s: %w", f.Path, err)
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, max(size, f.Size)+1))
	if err != nil {
		return nil, fmt.Errorf("workspace: snapshot %s: %w", f.Path, err)
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != f.SHA256 {
		return nil, fmt.Errorf("workspace: snapshot %s: %w", f.Path, ErrChanged)
	}
	return data, nil
}
