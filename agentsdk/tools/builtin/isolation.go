package builtin

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The isolation levels a worker may configure for bash.
const (
	// IsolationBwrap runs each command in a bubblewrap jail: new user,
	// PID, IPC, UTS, cgroup and network namespaces; an unprivileged UID;
	// a read-only root file system holding only the system's programs and
	// libraries (read-only), a few generated /etc files, a private /tmp
	// and /dev/shm (in the workspace, so its quota counts them), a new
	// /proc, a minimal /dev and the execution's workspace at /workspace; a
	// cleared environment; a seccomp filter that refuses the system calls
	// jail escapes are made of (seccomp.go). The default.
	IsolationBwrap = "bwrap"
	// IsolationNone runs commands as the worker's user on the worker's
	// host: they can read whatever the worker can. Only when the operator
	// writes it.
	IsolationNone = "none"
)

// IsolationLevels are the levels, strongest first.
var IsolationLevels = []string{IsolationBwrap, IsolationNone}

// DefaultSandboxUID is the UID (and GID) commands run as in the jail:
// nobody's.
const DefaultSandboxUID = 65534

// jailDir is where a command finds its workspace in the jail; the host's
// path (and with it the root and other executions' IDs) stays hidden.
const jailDir = "/workspace"

// Isolation is how bash commands are kept from the host.
type Isolation struct {
	// Level is IsolationBwrap or IsolationNone.
	Level string
	// Network: commands have the worker's network (bwrap shares it only
	// when the operator allows it).
	Network bool
	// UID and GID commands run as in the jail.
	UID, GID int
}

// String says what is in force, as the tool's results and description
// report it.
func (i Isolation) String() string {
	if i.Level == IsolationNone {
		return "none (the worker's user, files and network)"
	}
	network := "no network"
	if i.Network {
		network = "the worker's network"
	}
	return fmt.Sprintf("bwrap (uid %d, only the workspace and system programs, %s, seccomp filter)", i.UID, network)
}

// jail builds the command line of a command under an isolation level.
type jail struct {
	iso Isolation
	// bwrap is bwrap's path; etc holds the generated /etc files.
	bwrap, etc string
	// fixed are bwrap's arguments that do not depend on the call.
	fixed []string
	// seccomp is the filter bwrap installs on the command
	// (seccomp.go), read from descriptor seccompFD.
	seccomp []byte
}

// seccompFD is the descriptor bwrap reads the filter from: the first of
// the command's ExtraFiles.
const seccompFD = 3

// newJail prepares a jail at iso's level; state is a private directory
// of the worker for the generated files. For IsolationBwrap it fails,
// saying why, when bwrap is missing or cannot build the jail on this host
// (no user namespaces, say): the caller then does not offer bash.
func newJail(iso Isolation, state string) (*jail, error) {
	j := &jail{iso: iso}
	if iso.Level == IsolationNone {
		return j, nil
	}
	var err error
	if j.bwrap, err = exec.LookPath("bwrap"); err != nil {
		return nil, errors.New("bubblewrap (bwrap) is not installed on this worker")
	}
	// No filter, no jail: the probe below runs with it, so a bwrap that
	// rejects it keeps bash from being offered.
	if j.seccomp, err = seccompProgram(); err != nil {
		return nil, err
	}
	j.etc = filepath.Join(state, "etc")
	if err := j.writeEtc(); err != nil {
		return nil, err
	}
	j.fixed = j.binds()
	return j, j.probe(state)
}

// writeEtc writes the jail's /etc files: the user and group it runs as,
// and localhost; nothing of the host's own.
func (j *jail) writeEtc() error {
	files := map[string]string{
		"passwd": fmt.Sprintf("root:x:0:0:root:/root:/usr/sbin/nologin\nsandbox:x:%d:%d:sandbox:%s:/bin/bash\n", j.iso.UID, j.iso.GID, jailDir),
		"group":  fmt.Sprintf("root:x:0:\nsandbox:x:%d:\n", j.iso.GID),
		"hosts":  "127.0.0.1 localhost\n::1 localhost\n",
	}
	if err := os.MkdirAll(j.etc, 0o700); err != nil {
		return fmt.Errorf("bash: jail files: %w", err)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(j.etc, name), []byte(content), 0o644); err != nil {
			return fmt.Errorf("bash: jail files: %w", err)
		}
	}
	return nil
}

// The host paths a command sees, read-only. Everything else — home
// directories, /run and /var (sockets: Postgres's, Docker's), /etc
// (keys, the worker's configuration), the worker's data directories —
// does not exist in the jail.
var (
	// systemDirs are bound when they are directories and recreated as the
	// same symlinks when they are symlinks (/bin -> usr/bin).
	systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}
	// etcFiles are what programs need to run: the loader's cache and the
	// alternatives' symlinks.
	etcFiles = []string{"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives", "/etc/localtime"}
	// networkEtcFiles are added when commands have the network: name
	// resolution and the public CA certificates (never /etc/ssl/private).
	networkEtcFiles = []string{"/etc/resolv.conf", "/etc/nsswitch.conf", "/etc/ssl/certs", "/etc/ca-certificates",
		"/etc/pki/tls/certs", "/etc/pki/ca-trust"}
)

// binds are bwrap's arguments for the file system and namespaces.
func (j *jail) binds() []string {
	argv := []string{"--unshare-all"}
	if j.iso.Network {
		argv = append(argv, "--share-net")
	}
	argv = append(argv, "--uid", strconv.Itoa(j.iso.UID), "--gid", strconv.Itoa(j.iso.GID), "--hostname", "sandbox",
		"--die-with-parent", "--new-session", "--cap-drop", "ALL", "--clearenv")
	for _, d := range systemDirs {
		fi, err := os.Lstat(d)
		switch {
		case err != nil:
		case fi.Mode()&os.ModeSymlink != 0:
			if target, err := os.Readlink(d); err == nil {
				argv = append(argv, "--symlink", target, d)
			}
		case fi.IsDir():
			argv = append(argv, "--ro-bind", d, d)
		}
	}
	etc := etcFiles
	if j.iso.Network {
		etc = append(append([]string(nil), etc...), networkEtcFiles...)
	}
	for _, f := range etc {
		argv = append(argv, "--ro-bind-try", f, f)
	}
	for _, f := range []string{"passwd", "group", "hosts"} {
		argv = append(argv, "--ro-bind", filepath.Join(j.etc, f), "/etc/"+f)
	}
	return append(argv, "--proc", "/proc", "--dev", "/dev", "--seccomp", strconv.Itoa(seccompFD))
}

// extraFiles are the descriptors a command's process is started with,
// from 3 on: the filter's. done closes the worker's copies once the
// process has started (or failed to).
func (j *jail) extraFiles() (files []*os.File, done func(), err error) {
	if j.iso.Level == IsolationNone {
		return nil, func() {}, nil
	}
	f, err := seccompFile(j.seccomp)
	if err != nil {
		return nil, func() {}, fmt.Errorf("bash: %w", err)
	}
	return []*os.File{f}, func() { f.Close() }, nil
}

// scratchMounts are a call's /tmp and /dev/shm, as directories of its
// scratch directory in the workspace: on disk, under the workspace's
// quota, not in the host's memory as a tmpfs would be (bwrap 0.8 cannot
// bound one's size).
var scratchMounts = map[string]string{"/tmp": "tmp", "/dev/shm": "shm"}

// scratchRoot holds the calls' scratch directories in a workspace.
const scratchRoot = ".agentree/scratch"

// scratch creates a call's scratch directory in the workspace at host,
// one per call so parallel calls of an execution do not share a /tmp;
// done removes it. With no jail there is none ("").
func (j *jail) scratch(host string) (dir string, done func(), err error) {
	done = func() {}
	if j.iso.Level == IsolationNone {
		return "", done, nil
	}
	var id [8]byte
	_, _ = rand.Read(id[:])
	dir = filepath.Join(host, scratchRoot, hex.EncodeToString(id[:]))
	for _, sub := range scratchMounts {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o700); err != nil {
			return "", done, fmt.Errorf("bash: scratch directory: %w", err)
		}
	}
	return dir, func() { _ = os.RemoveAll(dir) }, nil
}

// dir is the workspace's path as the command sees it.
func (j *jail) dir(host string) string {
	if j.iso.Level == IsolationNone {
		return host
	}
	return jailDir
}

// argv is the command line running bash -c command in the workspace at
// host, with env as its whole environment and the scratch directory's
// /tmp and /dev/shm.
func (j *jail) argv(bash, host, scratch, command string, env []string) []string {
	if j.iso.Level == IsolationNone {
		return []string{bash, "-c", command}
	}
	argv := append([]string{j.bwrap}, j.fixed...)
	for _, e := range env {
		k, v, _ := strings.Cut(e, "=")
		argv = append(argv, "--setenv", k, v)
	}
	for mount, sub := range scratchMounts {
		argv = append(argv, "--bind", filepath.Join(scratch, sub), mount)
	}
	// Read-only last: the jail's own root and /dev are tmpfs a command
	// could otherwise fill, in the host's memory.
	return append(argv, "--bind", host, jailDir, "--remount-ro", "/dev", "--remount-ro", "/",
		"--chdir", jailDir, "--", bash, "-c", command)
}

// probeTimeout bounds the probe; a jail that hangs is as good as absent.
const probeTimeout = 10 * time.Second

// probe builds the jail once and runs a command in it that must find
// the seccomp filter in force and write to its workspace: the check that
// this host can run it.
func (j *jail) probe(state string) error {
	bash, err := exec.LookPath("bash")
	if err != nil {
		return errors.New("bash is not installed on this worker")
	}
	ws, err := os.MkdirTemp(state, "probe-")
	if err != nil {
		return fmt.Errorf("bash: probe: %w", err)
	}
	defer os.RemoveAll(ws)
	scratch, _, err := j.scratch(ws)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
	defer cancel()
	// The kernel's word that the filter is in force (mode 2: a filter),
	// not just that bwrap took the option.
	probe := `grep -q '^Seccomp:[[:space:]]*2$' /proc/self/status || { echo 'no seccomp filter in force' >&2; exit 1; }; touch ok`
	argv := j.argv(bash, ws, scratch, probe, []string{"PATH=" + defaultPath})
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = []string{"PATH=" + defaultPath}
	files, closeFiles, err := j.extraFiles()
	if err != nil {
		return err
	}
	defer closeFiles()
	cmd.ExtraFiles = files
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("bwrap cannot build the jail on this host (%v: %s); it needs unprivileged user namespaces and seccomp",
			err, strings.TrimSpace(out.String()))
	}
	if _, err := os.Stat(filepath.Join(ws, "ok")); err != nil {
		return errors.New("bwrap ran, but a command in the jail could not write its workspace")
	}
	return nil
}
