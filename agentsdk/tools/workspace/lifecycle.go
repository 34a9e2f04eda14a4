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

// ErrOverQuota is the error of a write to a workspace past its quota.
var ErrOverQuota = errors.New("the workspace is over its disk quota")

// Usage is how many bytes of disk the workspace's files take: allocated
// blocks, as du counts them, so a sparse file costs what it holds, not
// what it claims.
func (w *Workspace) Usage() (int64, error) { return usage(w.dir) }

func usage(dir string) (int64, error) {
	var total int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			// A file removed while we walk, or a directory a command made
			// unreadable: count what can be counted.
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			total += st.Blocks * 512
		} else {
			total += fi.Size()
		}
		return nil
	})
	return total, err
}

// CheckQuota fails with ErrOverQuota, saying by how much, when the
// workspace uses more than its quota; with no quota it never fails.
func (w *Workspace) CheckQuota() error {
	if w.quota <= 0 {
		return nil
	}
	used, err := w.Usage()
	if err != nil {
		return fmt.Errorf("workspace: usage: %w", err)
	}
	if used > w.quota {
		return fmt.Errorf("%w: its files take %s of the %s allowed; remove files (bash rm) before writing more",
			ErrOverQuota, Bytes(used), Bytes(w.quota))
	}
	return nil
}

// Quota is the workspace's quota in bytes; 0: none.
func (w *Workspace) Quota() int64 { return w.quota }

// Remove deletes the execution's workspace, if it has one: when the
// execution has ended. Removing one that is gone is not an error.
func (s Workspaces) Remove(executionID string) error {
	if err := validID(executionID); err != nil {
		return err
	}
	return removeAll(s.Dir(executionID))
}

// Sweep removes the workspaces not used (opened) for longer than idle,
// and reports how many it removed: the workspaces of executions that
// ended on another worker, or that wait for input longer than the
// operator keeps files.
func (s Workspaces) Sweep(idle time.Duration) (int, error) {
	entries, err := os.ReadDir(s.Root)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("workspace: sweep: %w", err)
	}
	removed := 0
	var errs []error
	for _, e := range entries {
		if !e.IsDir() || validID(e.Name()) != nil {
			continue
		}
		fi, err := e.Info()
		if err != nil || time.Since(fi.ModTime()) <= idle {
			continue
		}
		if err := removeAll(filepath.Join(s.Root, e.Name())); err != nil {
			errs = append(errs, err)
			continue
		}
		removed++
	}
	return removed, errors.Join(errs...)
}

// removeAll removes dir and everything in it, including directories a
// command left without write or search permission.
func removeAll(dir string) error {
	if err := os.RemoveAll(dir); err == nil {
		return nil
	}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if d != nil && d.IsDir() {
			_ = os.Chmod(p, DirMode)
		}
		return nil
	})
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("workspace: remove: %w", err)
	}
	return nil
}

// Bytes writes a size for people: 512 B, 64 MiB, 1.5 GiB.
func Bytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	v := fmt.Sprintf("%.1f", float64(n)/float64(div))
	return strings.TrimSuffix(v, ".0") + " " + "KMGTP"[exp:exp+1] + "iB"
}
