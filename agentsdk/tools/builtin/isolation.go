package builtin

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Isolation is how bash commands are kept from the host: what the host
// allows, detected once per process by running a probe under each
// candidate, strongest first.
type Isolation struct {
	// Name is the mechanism: "bwrap", "unshare" or "none".
	Name string
	// NoNetwork: commands run in a new network namespace with only a
	// loopback interface, down.
	NoNetwork bool
	// OwnProcesses: commands run in a new PID namespace with their own
	// /proc, so they cannot see the worker's processes (nor read their
	// environment through /proc/PID/environ).
	OwnProcesses bool
	// ReadOnlyHost: the host's file system is read-only to commands
	// except the workspace and a private /tmp, and other executions'
	// workspaces are hidden.
	ReadOnlyHost bool

	// wrap returns the argv running bash -c command in dir.
	wrap func(bash, dir, command string) []string
}

// String says what is in force, as the tool result reports it.
func (i Isolation) String() string {
	var what []string
	if i.NoNetwork {
		what = append(what, "no network")
	} else {
		what = append(what, "the worker's network")
	}
	if i.OwnProcesses {
		what = append(what, "own process namespace")
	}
	if i.ReadOnlyHost {
		what = append(what, "host files read-only outside the workspace")
	}
	return i.Name + " (" + strings.Join(what, ", ") + ")"
}

// candidates are the isolations tried, strongest first.
var candidates = []Isolation{
	{Name: "bwrap", NoNetwork: true, OwnProcesses: true, ReadOnlyHost: true, wrap: func(bash, dir, command string) []string {
		// The host read-only, a private /tmp, the workspaces' root
		// hidden under an empty tmpfs and only this workspace bound back
		// writable.
		argv := []string{"bwrap", "--unshare-net", "--unshare-pid", "--unshare-ipc", "--die-with-parent",
			"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"}
		if root := filepath.Dir(dir); root != "/" {
			argv = append(argv, "--tmpfs", root)
		}
		return append(argv, "--bind", dir, dir, "--chdir", dir, "--", bash, "-c", command)
	}},
	{Name: "unshare", NoNetwork: true, OwnProcesses: true, wrap: func(bash, _, command string) []string {
		return []string{"unshare", "--user", "--map-root-user", "--net", "--pid", "--fork", "--mount-proc", "--", bash, "-c", command}
	}},
	{Name: "unshare", NoNetwork: true, wrap: func(bash, _, command string) []string {
		return []string{"unshare", "--user", "--map-root-user", "--net", "--", bash, "-c", command}
	}},
}

var none = Isolation{Name: "none", wrap: func(bash, _, command string) []string { return []string{bash, "-c", command} }}

var (
	detectOnce sync.Once
	detected   Isolation
)

// DetectIsolation is the strongest isolation this host allows, probed on
// first use: a container without user namespaces, or without bwrap
// installed, gets a weaker one or none.
func DetectIsolation() Isolation {
	detectOnce.Do(func() { detected = probe() })
	return detected
}

// probeTimeout bounds each probe; a mechanism that hangs is as good as
// absent.
const probeTimeout = 10 * time.Second

func probe() Isolation {
	bash, err := exec.LookPath("bash")
	if err != nil {
		return none
	}
	dir, err := os.MkdirTemp("", "agentree-probe-")
	if err != nil {
		return none
	}
	defer os.RemoveAll(dir)
	ws := filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		return none
	}
	for _, c := range candidates {
		if c.works(bash, ws) {
			return c
		}
	}
	return none
}

// works runs a probe under c in ws: it must succeed and write there.
func (c Isolation) works(bash, ws string) bool {
	argv := c.wrap(bash, ws, "touch ok")
	if _, err := exec.LookPath(argv[0]); err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = ws
	if err := cmd.Run(); err != nil {
		return false
	}
	ok := filepath.Join(ws, "ok")
	if _, err := os.Stat(ok); err != nil {
		return false
	}
	return os.Remove(ok) == nil
}
