package workerconfig

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/tools/builtin"
	"github.com/agentree/agentree/agentsdk/tools/workspace"
	"github.com/agentree/agentree/internal/periodic"
)

// Workspace is where the builtin tool set works: one directory per
// execution, and how its bash tool runs commands.
type Workspace struct {
	// Root holds one directory per execution, named by its ID, private to
	// the worker's user (0700, files 0600); default
	// $XDG_STATE_HOME/agentree/workspaces, else
	// ~/.local/state/agentree/workspaces.
	Root string `yaml:"root"`
	// Quota is the most disk, in bytes, one workspace may use; default
	// 4294967296 (4 GiB); -1: none. Past it write_file and edit_file are
	// refused and a bash call fails (killed if still running).
	Quota int64 `yaml:"quota"`
	// ReadLimit is the largest file, in bytes, read_file and edit_file
	// open (checked before reading); default 67108864 (64 MiB).
	ReadLimit int64 `yaml:"readLimit"`
	// KeepFor is how long a workspace no tool call has used is kept: a
	// workspace is removed when its execution ends (on the worker that
	// records the end) or after this long idle, whichever is first;
	// default retention.keepDays days.
	KeepFor time.Duration `yaml:"keepFor"`
	// Bash configures the bash tool.
	Bash Bash `yaml:"bash"`
	// Snapshots keep each execution's workspace on its conversation
	// tree.
	Snapshots Snapshots `yaml:"snapshots"`
}

// Snapshots configure the workspace snapshots taken at every checkpoint
// (the files, by sha256, in the content store) and restored by forks,
// resumes and a worker that takes over an execution without its files.
type Snapshots struct {
	// Enabled turns them on or off; default true.
	Enabled *bool `yaml:"enabled"`
	// MaxFiles is the most files (directories and links count) a
	// snapshot holds; default 10000, -1 none. Past it the snapshot is
	// recorded as truncated; the turn goes on.
	MaxFiles int `yaml:"maxFiles"`
	// MaxBytes is the most bytes of files a snapshot holds; default
	// 16777216 (16 MiB), -1 none. A file past it is left out, and the
	// snapshot recorded as truncated.
	MaxBytes int64 `yaml:"maxBytes"`
	// Ignore are paths never snapshotted (nor touched by a restore): a
	// pattern without a slash matches any one path element (node_modules,
	// *.pyc), one with a slash the leading elements (.git/objects);
	// default [.git/objects, node_modules]; [] none.
	Ignore []string `yaml:"ignore"`
}

// Defaults of Snapshots.
const (
	DefaultSnapshotMaxFiles = 10000
	DefaultSnapshotMaxBytes = 16 << 20
)

// DefaultSnapshotIgnore is Snapshots.Ignore's default: what a build or a
// package manager makes again.
var DefaultSnapshotIgnore = []string{".git/objects", "node_modules"}

// SnapshotLimits are s's bounds as the workspace package takes them;
// -1 (none) is 0 there.
func (s Snapshots) SnapshotLimits() workspace.SnapshotLimits {
	return workspace.SnapshotLimits{MaxFiles: max(s.MaxFiles, 0), MaxBytes: max(s.MaxBytes, 0), Ignore: slices.Clone(s.Ignore)}
}

func (s Snapshots) withDefaults(bad func(format string, args ...any)) Snapshots {
	if s.Enabled == nil {
		on := true
		s.Enabled = &on
	}
	s.MaxFiles = cmp.Or(s.MaxFiles, DefaultSnapshotMaxFiles)
	s.MaxBytes = cmp.Or(s.MaxBytes, DefaultSnapshotMaxBytes)
	if s.Ignore == nil {
		s.Ignore = slices.Clone(DefaultSnapshotIgnore)
	}
	if s.MaxFiles < -1 || s.MaxBytes < -1 {
		bad("workspace.snapshots: maxFiles and maxBytes are positive, or -1 for none")
	}
	for i, p := range s.Ignore {
		if strings.Trim(p, "/") == "" {
			bad("workspace.snapshots.ignore[%d]: %q names no path", i, p)
		} else if _, err := path.Match(p, ""); err != nil {
			bad("workspace.snapshots.ignore[%d]: %q is not a pattern: %v", i, p, err)
		}
	}
	return s
}

// Bash configures the builtin set's bash tool.
type Bash struct {
	// Timeout is a command's time limit when the model asks for none;
	// default 2m.
	Timeout time.Duration `yaml:"timeout"`
	// MaxTimeout is the longest a model may ask for; default 10m.
	MaxTimeout time.Duration `yaml:"maxTimeout"`
	// OutputLimit is the most bytes of a command's output the worker
	// holds; default 16777216 (16 MiB). Up to it the whole output reaches
	// the content store (the model sees head and tail, cut by the agent's
	// toolOutputLimit); past it the worker keeps head and tail and the
	// whole goes to .agentree/bash/<tool call ID>.log in the workspace,
	// up to SpillLimit.
	OutputLimit int `yaml:"outputLimit"`
	// SpillLimit bounds that file, in bytes; default 268435456 (256 MiB).
	SpillLimit int64 `yaml:"spillLimit"`
	// Env names the worker's environment variables a command sees
	// (NAME=value sets one); nothing else is visible, so model keys and
	// DATABASE_URL never are. HOME is the workspace. Default PATH, LANG,
	// LC_ALL, LC_CTYPE, TERM, TZ.
	Env []string `yaml:"env"`
	// Isolation is what commands run in: bwrap (the default: a jail that
	// holds only the workspace and the system's programs, no network, an
	// unprivileged UID) or none (the worker's user on the worker's host:
	// only where every tenant is trusted; logged as a warning at start and
	// said in the tool's description). Where the level cannot run — bwrap
	// missing, no user namespaces — the worker does not offer bash at all
	// and logs why; it never falls back to a weaker level.
	Isolation string `yaml:"isolation"`
	// Network gives commands in the jail the worker's network; default
	// false.
	Network bool `yaml:"network"`
	// UID and GID are who commands run as in the jail; default 65534.
	UID int `yaml:"uid"`
	GID int `yaml:"gid"`
	// Limits bound each call.
	Limits Limits `yaml:"limits"`
	// Deny are Go regular expressions a command is refused for matching;
	// default builtin.DefaultDeny; [] none.
	Deny []string `yaml:"deny"`
}

// Limits bound one bash call; 0 means the default, -1 no limit.
type Limits struct {
	// Memory is the most virtual memory, in bytes, each process may map;
	// default 4294967296 (4 GiB).
	Memory int64 `yaml:"memory"`
	// Processes is the most processes a call may run at once; default
	// 256. Counted in a pids cgroup where the worker may create one (as
	// root), else by RLIMIT_NPROC, which counts every process of the
	// worker's user.
	Processes int `yaml:"processes"`
	// CPU is the most CPU time each process may use; default 10m.
	CPU time.Duration `yaml:"cpu"`
	// FileSize is the largest file, in bytes, a process may write;
	// default 1073741824 (1 GiB).
	FileSize int64 `yaml:"fileSize"`
}

// withDefaults fills in the workspace's defaults and reports what is
// wrong with it; keepDays is the retention's.
func (w Workspace) withDefaults(keepDays int, bad func(format string, args ...any)) Workspace {
	w.Root = cmp.Or(w.Root, workspace.DefaultRoot())
	w.Quota = cmp.Or(w.Quota, builtin.DefaultQuota)
	w.ReadLimit = cmp.Or(w.ReadLimit, builtin.DefaultReadLimit)
	w.KeepFor = cmp.Or(w.KeepFor, time.Duration(keepDays)*24*time.Hour)
	switch {
	case w.Quota < -1:
		bad("workspace.quota: %d is neither a size nor -1 (none)", w.Quota)
	case w.ReadLimit < 0:
		bad("workspace.readLimit: %d is negative", w.ReadLimit)
	case w.KeepFor < 0:
		bad("workspace.keepFor: %s is negative", w.KeepFor)
	}
	w.Snapshots = w.Snapshots.withDefaults(bad)
	b := &w.Bash
	b.Timeout = cmp.Or(b.Timeout, builtin.DefaultBashTimeout)
	b.MaxTimeout = cmp.Or(b.MaxTimeout, builtin.DefaultBashMaxTimeout)
	b.OutputLimit = cmp.Or(b.OutputLimit, builtin.DefaultBashOutputLimit)
	b.SpillLimit = cmp.Or(b.SpillLimit, builtin.DefaultSpillLimit)
	b.Isolation = cmp.Or(b.Isolation, builtin.IsolationBwrap)
	b.UID = cmp.Or(b.UID, builtin.DefaultSandboxUID)
	b.GID = cmp.Or(b.GID, builtin.DefaultSandboxUID)
	l := &b.Limits
	l.Memory = cmp.Or(l.Memory, builtin.DefaultMemoryLimit)
	l.Processes = cmp.Or(l.Processes, builtin.DefaultProcessLimit)
	l.CPU = cmp.Or(l.CPU, builtin.DefaultCPULimit)
	l.FileSize = cmp.Or(l.FileSize, builtin.DefaultFileSizeLimit)
	if b.Env == nil {
		b.Env = slices.Clone(builtin.DefaultBashEnv)
	}
	if b.Deny == nil {
		b.Deny = slices.Clone(builtin.DefaultDeny)
	}
	switch {
	case b.Timeout < 0:
		bad("workspace.bash.timeout: %s is negative", b.Timeout)
	case b.MaxTimeout < 0:
		bad("workspace.bash.maxTimeout: %s is negative", b.MaxTimeout)
	case b.Timeout > b.MaxTimeout:
		bad("workspace.bash.timeout: %s is above maxTimeout (%s)", b.Timeout, b.MaxTimeout)
	}
	if b.OutputLimit < 0 {
		bad("workspace.bash.outputLimit: %d is negative", b.OutputLimit)
	}
	if b.SpillLimit < 0 {
		bad("workspace.bash.spillLimit: %d is negative", b.SpillLimit)
	}
	if !slices.Contains(builtin.IsolationLevels, b.Isolation) {
		bad("workspace.bash.isolation: %q is not a level (known: %s)", b.Isolation, strings.Join(builtin.IsolationLevels, ", "))
	} else if b.Network && b.Isolation == builtin.IsolationNone {
		bad("workspace.bash.network: applies to the bwrap jail; with isolation none commands have the worker's network anyway")
	}
	if b.UID < 0 || b.GID < 0 {
		bad("workspace.bash: uid and gid must not be negative")
	}
	if l.Memory < -1 || l.Processes < -1 || l.CPU < -1 || l.FileSize < -1 {
		bad("workspace.bash.limits: a limit is a positive value, or -1 for none")
	}
	for i, e := range b.Env {
		if e == "" || e[0] == '=' {
			bad("workspace.bash.env[%d]: %q names no variable", i, e)
		}
	}
	for i, p := range b.Deny {
		if _, err := regexp.Compile(p); err != nil {
			bad("workspace.bash.deny[%d]: %q is not a Go regular expression", i, p)
		}
	}
	return w
}

// builtinOptions are the builtin tool set's options in c.
func builtinOptions(c Config) builtin.Options {
	w, b, l := c.Workspace, c.Workspace.Bash, c.Workspace.Bash.Limits
	return builtin.Options{Root: w.Root, Quota: w.Quota, ReadLimit: w.ReadLimit, Bash: builtin.BashOptions{
		Timeout: b.Timeout, MaxTimeout: b.MaxTimeout, OutputLimit: b.OutputLimit, SpillLimit: b.SpillLimit, Env: b.Env,
		Isolation: b.Isolation, Network: b.Network, UID: b.UID, GID: b.GID, Deny: b.Deny,
		Limits: builtin.Limits{Memory: l.Memory, Processes: l.Processes, CPU: l.CPU, FileSize: l.FileSize},
	}}
}

// builtinTools builds the builtin tool set in c's workspace.
func builtinTools(c Config) ([]*agentsdk.Tool, error) {
	tools, err := builtin.Tools(builtinOptions(c))
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	return tools, nil
}

// workspaceJanitor removes the builtin tool set's workspaces: one when
// its execution ends, and every workspace idle for longer than KeepFor.
type workspaceJanitor struct {
	ws      workspace.Workspaces
	keepFor time.Duration
	stop    context.CancelFunc
	done    chan struct{}
}

// startJanitor sweeps c's workspaces now and then every sweepEvery until
// stopped.
func startJanitor(c Config) *workspaceJanitor {
	ctx, stop := context.WithCancel(context.Background())
	j := &workspaceJanitor{ws: workspace.Workspaces{Root: c.Workspace.Root}, keepFor: c.Workspace.KeepFor,
		stop: stop, done: make(chan struct{})}
	go func() {
		defer close(j.done)
		periodic.Every(ctx, j.sweepEvery(), true, func(context.Context) { j.sweep() })
	}()
	return j
}

// sweepEvery is how often idle workspaces are looked for: a small share
// of any KeepFor an operator would set, and cheap (one directory read).
func (j *workspaceJanitor) sweepEvery() time.Duration {
	return min(max(j.keepFor/10, time.Minute), time.Hour)
}

// sweep removes the workspaces idle for longer than keepFor.
func (j *workspaceJanitor) sweep() {
	if n, err := j.ws.Sweep(j.keepFor); err != nil {
		slog.Warn("workspaces: sweep", "root", j.ws.Root, "removed", n, "error", err)
	} else if n > 0 {
		slog.Info("workspaces: removed idle workspaces", "removed", n, "idle", j.keepFor)
	}
}

// ended removes an ended execution's workspace; called again, or for an
// execution that never had one, it does nothing.
func (j *workspaceJanitor) ended(_ context.Context, _, executionID string) {
	if err := j.ws.Remove(executionID); err != nil {
		slog.Warn("workspaces: remove an ended execution's workspace", "execution", executionID, "error", err)
	}
}

func (j *workspaceJanitor) close() {
	j.stop()
	<-j.done
}
