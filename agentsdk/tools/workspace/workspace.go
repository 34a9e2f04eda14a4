package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// ErrOutside is the error of a path that leads out of the workspace.
var ErrOutside = errors.New("outside the workspace")

// Workspaces holds one workspace per execution under Root.
type Workspaces struct {
	// Root holds the workspaces; it is created (0700) if missing. Required.
	Root string
	// Quota is the most bytes of disk a workspace may use; 0: no quota.
	// Past it, writes are refused (CheckQuota) until files are removed.
	Quota int64
}

// DefaultRoot is where workspaces live unless configured otherwise: the
// worker's state directory ($XDG_STATE_HOME, else ~/.local/state) under
// agentree/workspaces, not a shared /tmp whose paths anyone can guess and
// pre-create.
func DefaultRoot() string {
	state := os.Getenv("XDG_STATE_HOME")
	if state == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return filepath.Join(os.TempDir(), "agentree-workspaces")
		}
		state = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(state, "agentree", "workspaces")
}

// Workspaces and their files are private to the worker's user: commands
// in the sandbox reach them as that user through the one bind of their
// own workspace, nobody else does.
const (
	DirMode  = 0o700
	FileMode = 0o600
)

// Dir is the directory of the execution's workspace; it may not exist
// yet.
func (s Workspaces) Dir(executionID string) string { return filepath.Join(s.Root, executionID) }

// Workspace is one execution's workspace, open for one tool call. Close
// it when done.
type Workspace struct {
	dir   string // absolute, symlinks resolved
	root  *os.Root
	quota int64
}

// Open creates the execution's workspace if needed and opens it. An
// execution ID that is not a single path element cannot name one.
func (s Workspaces) Open(executionID string) (*Workspace, error) {
	if s.Root == "" {
		return nil, errors.New("workspace: no root directory is configured")
	}
	if err := validID(executionID); err != nil {
		return nil, err
	}
	if err := s.ensureRoot(); err != nil {
		return nil, err
	}
	dir := s.Dir(executionID)
	if err := os.Mkdir(dir, DirMode); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("workspace: create: %w", err)
	}
	// Its modification time is when it was last used: what Sweep goes by.
	now := time.Now()
	if err := os.Chtimes(dir, now, now); err != nil {
		return nil, fmt.Errorf("workspace: touch: %w", err)
	}
	dir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace: resolve: %w", err)
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, fmt.Errorf("workspace: resolve: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("workspace: open: %w", err)
	}
	return &Workspace{dir: dir, root: root, quota: s.Quota}, nil
}

// validID refuses an execution ID that is not a plain name: one that
// would lead elsewhere, or a hidden name (the root's own files are).
func validID(executionID string) error {
	if executionID == "" || !filepath.IsLocal(executionID) || filepath.Base(executionID) != executionID || executionID[0] == '.' {
		return fmt.Errorf("workspace: execution ID %q cannot name a workspace", executionID)
	}
	return nil
}

// ensureRoot creates the root, private to the worker's user.
func (s Workspaces) ensureRoot() error {
	if err := os.MkdirAll(s.Root, DirMode); err != nil {
		return fmt.Errorf("workspace: create root: %w", err)
	}
	if err := os.Chmod(s.Root, DirMode); err != nil {
		return fmt.Errorf("workspace: root: %w", err)
	}
	return nil
}

// Close releases the workspace's directory handle.
func (w *Workspace) Close() error { return w.root.Close() }

// Dir is the workspace's absolute directory, symlinks resolved: where a
// command runs. File access goes through Root, never through Dir.
func (w *Workspace) Dir() string { return w.dir }

// Root is the os.Root every file operation goes through.
func (w *Workspace) Root() *os.Root { return w.root }

// FS is the workspace as a read-only file system, confined by Root.
func (w *Workspace) FS() fs.FS { return w.root.FS() }

// Resolve checks that p names a place inside the workspace and returns it
// cleaned, relative to the workspace ("." for the workspace itself), with
// a reason the model can act on when it does not.
func (w *Workspace) Resolve(p string) (string, error) {
	if filepath.IsAbs(p) {
		return "", fmt.Errorf("%w: %q is an absolute path; give a path relative to the workspace", ErrOutside, p)
	}
	rel := filepath.Clean(p)
	if !filepath.IsLocal(rel) && rel != "." {
		return "", fmt.Errorf("%w: %q climbs out of the workspace", ErrOutside, p)
	}
	if rel == "." {
		return rel, nil
	}
	full := filepath.Join(w.dir, rel)
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
// refused for the same reason as in Resolve.
func (w *Workspace) existingAncestor(dir, p string) (string, error) {
	for {
		real, err := filepath.EvalSymlinks(dir)
		if err == nil {
			return real, nil
		}
		if errors.Is(err, syscall.ENOTDIR) {
			return "", fmt.Errorf("%s: a parent of it is a file, not a directory", p)
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", Friendly(p, err)
		}
		if _, lerr := os.Lstat(dir); lerr == nil {
			return "", fmt.Errorf("%w: %q goes through a symlink to something that does not exist", ErrOutside, p)
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", Friendly(p, err)
		}
		dir = up
	}
}

func (w *Workspace) inside(p string) bool {
	return p == w.dir || strings.HasPrefix(p, w.dir+string(filepath.Separator))
}

// Friendly turns a file-system error about p into what the model needs to
// know, without the host's paths.
func Friendly(p string, err error) error {
	switch {
	case errors.Is(err, ErrOutside):
		return err
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s does not exist", p)
	case errors.Is(err, fs.ErrExist):
		return fmt.Errorf("%s already exists", p)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		if strings.Contains(pe.Err.Error(), "path escapes from parent") {
			return fmt.Errorf("%w: %q leads out of the workspace", ErrOutside, p)
		}
		return fmt.Errorf("%s: %s failed: %v", p, pe.Op, pe.Err)
	}
	return fmt.Errorf("%s: %v", p, err)
}
