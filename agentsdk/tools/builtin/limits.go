package builtin

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agentree/agentree/agentsdk/tools/workspace"
)

// Limits bound what one bash call may use. The zero value of each field
// means its default, given in its comment; a negative one, no limit.
type Limits struct {
	// Memory is the most virtual memory a process may map (RLIMIT_AS);
	// default DefaultMemoryLimit. Programs that reserve large address
	// ranges up front (V8, some JVM settings) need more.
	Memory int64
	// Processes is the most processes (threads included) a call may run
	// at once; default DefaultProcessLimit. A pids cgroup counts them
	// where the worker can create one (as root); elsewhere RLIMIT_NPROC,
	// which counts every process of the worker's user.
	Processes int
	// CPU is the most CPU time a process may use (RLIMIT_CPU); default
	// DefaultCPULimit.
	CPU time.Duration
	// FileSize is the largest file a process may write (RLIMIT_FSIZE);
	// default DefaultFileSizeLimit.
	FileSize int64
}

// Defaults of Limits.
const (
	DefaultMemoryLimit   = 4 << 30
	DefaultProcessLimit  = 256
	DefaultCPULimit      = 10 * time.Minute
	DefaultFileSizeLimit = 1 << 30
)

func (l Limits) withDefaults() Limits {
	if l.Memory == 0 {
		l.Memory = DefaultMemoryLimit
	}
	if l.Processes == 0 {
		l.Processes = DefaultProcessLimit
	}
	if l.CPU == 0 {
		l.CPU = DefaultCPULimit
	}
	if l.FileSize == 0 {
		l.FileSize = DefaultFileSizeLimit
	}
	return l
}

// String lists the limits, as a failed call's result reports them.
func (l Limits) String() string {
	var s []string
	if l.Memory > 0 {
		s = append(s, "memory "+workspace.Bytes(l.Memory)+" per process")
	}
	if l.Processes > 0 {
		s = append(s, strconv.Itoa(l.Processes)+" processes")
	}
	if l.CPU > 0 {
		s = append(s, "CPU "+l.CPU.String()+" per process")
	}
	if l.FileSize > 0 {
		s = append(s, "files up to "+workspace.Bytes(l.FileSize))
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// wrapper is the host-side script every command line starts with: it
// sets the umask (files the command makes are private, as the
// workspace's are), the rlimits the jail and its processes inherit, and
// moves itself into the call's pids cgroup, then execs the jail. Being
// bash, it needs nothing the bash tool does not already need.
func (l Limits) wrapper(cgroupProcs string) string {
	var s strings.Builder
	s.WriteString("umask 077")
	// ulimit's units: KiB for -v and -f, seconds for -t.
	if l.Memory > 0 {
		fmt.Fprintf(&s, " && ulimit -S -H -v %d", l.Memory/1024)
	}
	if l.CPU > 0 {
		fmt.Fprintf(&s, " && ulimit -S -H -t %d", max(int64(l.CPU/time.Second), 1))
	}
	if l.FileSize > 0 {
		fmt.Fprintf(&s, " && ulimit -S -H -f %d", max(l.FileSize/1024, 1))
	}
	if cgroupProcs != "" {
		fmt.Fprintf(&s, ` && echo $$ > '%s'`, cgroupProcs)
	} else if l.Processes > 0 {
		fmt.Fprintf(&s, " && ulimit -S -H -u %d", l.Processes)
	}
	s.WriteString(` && exec "$@"`)
	return s.String()
}

// pidsCgroups is where the worker may make one pids cgroup per call, or
// "" where it may not (not root, or no pids controller).
type pidsCgroups string

// findPidsCgroups looks for a pids controller the worker can create
// cgroups under (cgroup v1's pids hierarchy, or v2's root with pids
// enabled), and checks that it can.
func findPidsCgroups() pidsCgroups {
	var base string
	switch {
	case fileHas("/sys/fs/cgroup/pids/cgroup.procs"):
		base = "/sys/fs/cgroup/pids"
	case strings.Contains(readString("/sys/fs/cgroup/cgroup.subtree_control"), "pids"):
		base = "/sys/fs/cgroup"
	default:
		return ""
	}
	parent := pidsCgroups(filepath.Join(base, "agentree-sandbox"))
	if err := os.Mkdir(string(parent), 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return ""
	}
	g, err := parent.create(1)
	if err != nil {
		return ""
	}
	g.remove()
	return parent
}

// pidsCgroup is one call's cgroup.
type pidsCgroup string

// create makes a cgroup allowing n processes; none for no limit (n < 1).
func (p pidsCgroups) create(n int) (pidsCgroup, error) {
	if p == "" || n < 1 {
		return "", nil
	}
	var id [8]byte
	_, _ = rand.Read(id[:])
	dir := filepath.Join(string(p), hex.EncodeToString(id[:]))
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", fmt.Errorf("bash: cgroup: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte(strconv.Itoa(n)), 0o600); err != nil {
		_ = os.Remove(dir)
		return "", fmt.Errorf("bash: cgroup: %w", err)
	}
	return pidsCgroup(dir), nil
}

// procs is the file a process writes its PID to to join; "" for none.
func (g pidsCgroup) procs() string {
	if g == "" {
		return ""
	}
	return filepath.Join(string(g), "cgroup.procs")
}

// hitMax reports whether a fork was refused for the limit.
func (g pidsCgroup) hitMax() bool {
	if g == "" {
		return false
	}
	for _, line := range strings.Split(readString(filepath.Join(string(g), "pids.events")), "\n") {
		if n, ok := strings.CutPrefix(line, "max "); ok && strings.TrimSpace(n) != "0" {
			return true
		}
	}
	return false
}

// remove kills whatever is left in the cgroup (a process that left the
// jail's session) and removes it.
func (g pidsCgroup) remove() {
	if g == "" {
		return
	}
	deadline := time.Now().Add(2 * time.Second)
	for {
		for _, f := range strings.Fields(readString(g.procs())) {
			if pid, err := strconv.Atoi(f); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		if err := os.Remove(string(g)); err == nil || errors.Is(err, os.ErrNotExist) || time.Now().After(deadline) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// quotaEvery is how often a running command's workspace is measured: a
// command writing at disk speed passes its quota by at most this long's
// worth (and never by more than the file size limit per file).
const quotaEvery = time.Second

// watchQuota kills the command when ctx ends (its timeout, the call's
// cancellation) and, measuring the workspace while the command runs, when
// it passes its quota, returning why; nil if it never did.
func watchQuota(ctx context.Context, w *workspace.Workspace, exited <-chan struct{}, kill func()) error {
	var tick <-chan time.Time
	if w.Quota() > 0 {
		t := time.NewTicker(quotaEvery)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			kill()
			return nil
		case <-exited:
			return nil
		case <-tick:
			if err := w.CheckQuota(); errors.Is(err, workspace.ErrOverQuota) {
				kill()
				return err
			}
		}
	}
}

func fileHas(p string) bool { _, err := os.Stat(p); return err == nil }

func readString(p string) string {
	b, _ := os.ReadFile(p)
	return string(b)
}
