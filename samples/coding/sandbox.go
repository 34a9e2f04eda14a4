package coding

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrOutside is the error of a path that leads out of the workspace.
var ErrOutside = errors.New("outside the workspace")

// Sandbox confines the coding tools to Dir: each execution works in its
// own workspace, Dir/<execution ID>, created on first use, so two
// executions never see each other's files.
type Sandbox struct {
	// Dir holds the workspaces; it is created if missing.
	Dir string
}

// DefaultDir is where the worker and starter keep workspaces unless told
// otherwise.
func DefaultDir() string { return filepath.Join(os.TempDir(), "agentree-coding") }

// Workspace is the directory of the execution's workspace.
func (s Sandbox) Workspace(executionID string) string { return filepath.Join(s.Dir, executionID) }

// workspace is one execution's workspace, open for one tool call.
//
// Paths are checked twice. resolve checks each path first, resolving
// symlinks, so the model is told plainly why a path is refused. Then every
// file operation goes through an os.Root, which the kernel confines to the
// directory: a symlink swapped in between the check and the operation
// still cannot lead out.
type workspace struct {
	dir  string // absolute, symlinks resolved
	root *os.Root
}

func (s Sandbox) open(executionID string) (*workspace, error) {
	if executionID == "" || !filepath.IsLocal(executionID) || filepath.Base(executionID) != executionID {
		return nil, fmt.Errorf("coding: execution ID %q cannot name a workspace", executionID)
	}
	dir := s.Workspace(executionID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("coding: create workspace: %w", err)
	}
	dir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, fmt.Errorf("coding: workspace: %w", err)
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, fmt.Errorf("coding: workspace: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("coding: open workspace: %w", err)
	}
	return &workspace{dir: dir, root: root}, nil
}

func (w *workspace) Close() error { return w.root.Close() }

// resolve checks that p names a place inside the workspace and returns it
// cleaned, relative to the workspace ("." for the workspace itself).
func (w *workspace) resolve(p string) (string, error) {
	if filepath.IsAbs(p) {
		return "", fmt.Errorf("%w: %q is an absolute path; give a path relative to the workspace", ErrOutside, p)
	}
	rel := filepath.Clean(p)
	if !filepath.IsLocal(rel) {
		return "", fmt.Errorf("%w: %q climbs out of the workspace", ErrOutside, p)
	}
	full := filepath.Join(w.dir, rel)
	if rel == "." {
		return rel, nil
	}
	// The parent directory, symlinks resolved, must be inside; when it does
	// not exist yet (write_file creates it), its deepest existing ancestor.
	parent, err := w.existingAncestor(filepath.Dir(full), p)
	if err != nil {
		return "", err
	}
	if !w.inside(parent) {
		return "", fmt.Errorf("%w: %q leads out of the workspace through a symlink", ErrOutside, p)
	}
	// So must a symlink's target. A dangling symlink is refused: writing
	// through it would create its target wherever it points.
	if fi, err := os.Lstat(full); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		target, err := filepath.EvalSymlinks(full)
		if err != nil {
			return "", fmt.Errorf("%w: %q is a symlink to something that does not exist", ErrOutside, p)
		}
		if !w.inside(target) {
			return "", fmt.Errorf("%w: %q is a symlink that leads out of the workspace", ErrOutside, p)
		}
	}
	return rel, nil
}

// existingAncestor resolves the symlinks of dir or, if it does not exist,
// of its deepest ancestor that does. A dangling symlink on the way is
// refused for the same reason as in resolve.
func (w *workspace) existingAncestor(dir, p string) (string, error) {
	for {
		real, err := filepath.EvalSymlinks(dir)
		if err == nil {
			return real, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("coding: %s: %w", p, err)
		}
		if _, lerr := os.Lstat(dir); lerr == nil {
			return "", fmt.Errorf("%w: %q goes through a symlink to something that does not exist", ErrOutside, p)
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", fmt.Errorf("coding: %s: %w", p, err)
		}
		dir = up
	}
}

func (w *workspace) inside(p string) bool {
	return p == w.dir || strings.HasPrefix(p, w.dir+string(filepath.Separator))
}
