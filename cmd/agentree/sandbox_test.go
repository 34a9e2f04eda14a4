package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestBashIsNotOfferedWithoutIsolation: a worker whose configured
// isolation cannot run — bwrap missing, or bwrap present but refused
// its namespaces — does not offer bash: it is absent from the worker's
// capabilities and an execution naming it is refused, while the file
// tools stay. Isolation none, written by the operator, offers bash and
// says so in its description. Real Postgres and Temporal, `agentree
// dev` from a configuration file.
func TestBashIsNotOfferedWithoutIsolation(t *testing.T) {
	bash, err := exec.LookPath("bash")
	require.NoError(t, err)
	hosts := map[string]string{
		"no bwrap":           "",
		"no user namespaces": "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n",
	}
	for name, fakeBwrap := range hosts {
		t.Run(name, func(t *testing.T) {
			// A PATH holding bash and, for the second host, a bwrap that
			// fails as one without user namespaces does.
			bin := t.TempDir()
			require.NoError(t, os.Symlink(bash, filepath.Join(bin, "bash")))
			if fakeBwrap != "" {
				require.NoError(t, os.WriteFile(filepath.Join(bin, "bwrap"), []byte(fakeBwrap), 0o755))
			}
			t.Setenv("PATH", bin)
			w := startSandboxWorker(t, "", "")
			tools := capabilityTools(t, w.devServer)
			require.NotContains(t, tools, "bash", "bash is not advertised")
			require.Contains(t, tools, "read_file", "the file tools are")
			status, body := w.do(http.MethodPost, "/agent-executions",
				fmt.Sprintf(`{"userPrompt":"[]","models":[{"provider":"anthropic","modelId":%q}],"tools":["bash"]}`, adversaryModel))
			require.Equal(t, http.StatusBadRequest, status, body)
			require.Contains(t, body["message"], "bash")
		})
	}

	t.Run("isolation none, explicit", func(t *testing.T) {
		w := startSandboxWorker(t, "  bash: {isolation: none}", "")
		tools := capabilityTools(t, w.devServer)
		require.Contains(t, tools, "bash")
		require.Contains(t, tools["bash"], "WITHOUT ISOLATION", "the capabilities say what the operator chose")
		res := runCalls(t, w.devServer, bashCall("echo unjailed"))
		require.False(t, res[0].IsError, res[0].Text)
		require.Contains(t, res[0].Text, "unjailed\n[exit status 0; isolation: none (the worker's user, files and network)]")
	})
}

// TestSandboxSeesNoHostSecrets: secrets in the worker's environment, its
// configuration file, its dev key file, its worker store, the user's
// ~/.config and the services' sockets and ports are all out of a
// command's reach: it reads /proc/1/environ, env, each file by its host
// path, and connects to Postgres and Temporal by TCP and by Unix socket;
// every attempt fails and no secret appears in what the model gets.
func TestSandboxSeesNoHostSecrets(t *testing.T) {
	envSecret := "env-secret-" + strings.Repeat("7", 12)
	t.Setenv("AGENTREE_SANDBOX_TEST_TOKEN", envSecret)
	// The worker's files live outside /tmp (which the jail replaces with
	// its own), where an operator's would: a home directory.
	realHome, err := os.UserHomeDir()
	require.NoError(t, err)
	base, err := os.MkdirTemp(realHome, ".agentree-sandbox-test-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	home := filepath.Join(base, "home")
	t.Setenv("HOME", home)
	homeSecret := "home-secret-3f9a1c"
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".config", "gcloud"), 0o700))
	credentials := filepath.Join(home, ".config", "gcloud", "credentials.json")
	require.NoError(t, os.WriteFile(credentials, []byte(homeSecret), 0o600))
	// A service of the worker's host on a Unix socket: it counts the
	// connections it gets.
	require.NoError(t, os.MkdirAll(filepath.Join(base, "run"), 0o700))
	sock := filepath.Join(base, "run", "svc.sock")
	ln, err := net.Listen("unix", sock)
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	local := filepath.Join(base, "local")
	configSecret := "config-secret-" + strings.Repeat("a", 10)
	w := startSandboxWorkerIn(t, base, "", fmt.Sprintf("localStore: {dir: %s, name: sandbox-test}\n# %s\n", local, configSecret))
	// A dev key file where `agentree dev` keeps one.
	devKey := filepath.Join(base, ".data", "dev-key")
	require.NoError(t, os.MkdirAll(filepath.Dir(devKey), 0o700))
	require.NoError(t, os.WriteFile(devKey, []byte(w.key+"\n"), 0o600))
	storeFiles, _ := filepath.Glob(filepath.Join(local, "*"))
	require.NotEmpty(t, storeFiles, "the worker store's files")
	pgSockets, _ := filepath.Glob("/work/*/.data/postgres/run/.s.PGSQL.*")

	readable := append([]string{"/proc/1/environ", "/proc/self/environ", credentials, w.config, devKey,
		"/root/.bash_history", "/etc/shadow", "/etc/ssl/private", "/work/main/.data/temporal.db"}, storeFiles...)
	var cmd strings.Builder
	cmd.WriteString("env; echo; ls -a / /etc /workspace; ")
	for _, f := range readable {
		fmt.Fprintf(&cmd, "echo '== %s'; tr '\\0' '\\n' < '%s' 2>&1 | head -c 4000; ", f, f)
	}
	cmd.WriteString(`python3 - <<'PY'
import socket
for host, port in [("127.0.0.1", 54329), ("127.0.0.1", 7233), ("127.0.0.1", ` + portOf(t, w.base) + `)]:
    try:
        socket.create_connection((host, port), timeout=2); print("REACHED", port)
    except OSError as e:
        print("unreachable", port, e)
for path in ` + pyList(append(pgSockets, sock, "/var/run/docker.sock", "/run/postgresql/.s.PGSQL.5432")) + `:
    try:
        s = socket.socket(socket.AF_UNIX); s.connect(path); print("REACHED", path)
    except OSError as e:
        print("unreachable", path, e)
PY
`)
	res := runCalls(t, w.devServer, bashCall(cmd.String()))
	out := res[0].Text
	t.Log(out)
	require.False(t, res[0].IsError, out)
	require.Contains(t, out, "isolation: bwrap (uid 65534, only the workspace and system programs, no network, seccomp filter)")
	require.NotContains(t, out, "REACHED")
	require.Contains(t, out, "unreachable 54329")
	require.Contains(t, out, "unreachable "+sock)
	require.Zero(t, accepted.Load(), "the host's Unix socket got no connection")
	for _, f := range readable[2:] {
		require.Contains(t, out, f+": No such file or directory", "%s does not exist in the jail", f)
	}
	for name, secret := range map[string]string{
		"the worker's environment": envSecret, "the model key": "sk-ant-model-key-", "DATABASE_URL": os.Getenv("DATABASE_URL"),
		"the configuration file": configSecret, "~/.config": homeSecret, "the dev key": w.key,
		"the host's paths": w.root,
	} {
		require.NotContains(t, out, secret, "%s is out of reach", name)
	}
}

// TestSandboxCannotReachAnotherWorkspace: one organization's execution
// keeps a file in its workspace while it waits for input; another
// organization's adversary looks for it through bash (the host path,
// the workspace's parent, a search of the whole jail, a write) and
// through the file tools (.., an absolute path, a symlink its command
// made): nothing is found and the file is unchanged.
func TestSandboxCannotReachAnotherWorkspace(t *testing.T) {
	w := startSandboxWorker(t, "", "")
	const secret = "workspace-secret-5e1b"
	victim := start(t, w.devServer, []toolCall{{Tool: "write_file", Args: map[string]any{"path": "notes.txt", "content": secret}}},
		`{"mode":"multi-turn"}`)
	require.Eventually(t, func() bool {
		_, ex := w.do(http.MethodGet, "/agent-executions/"+victim, "")
		return ex["status"] == "WAITING"
	}, time.Minute, 20*time.Millisecond)
	theirs := filepath.Join(w.root, victim, "notes.txt")
	b, err := os.ReadFile(theirs)
	require.NoError(t, err)
	require.Equal(t, secret, string(b))

	attacker := w.asOrg(t, "attacker")
	res := runCalls(t, attacker,
		bashCall(fmt.Sprintf(`cat '%s'; ls -a /workspace/.. '%s'; grep -rs %s /tmp /root /home /var /run /work /workspace 2>/dev/null | head; echo pwned > '%s' && echo wrote; ln -s '%s' link; echo end`,
			theirs, w.root, secret, theirs, theirs)),
		toolCall{Tool: "read_file", Args: map[string]any{"path": "../" + victim + "/notes.txt"}},
		toolCall{Tool: "read_file", Args: map[string]any{"path": theirs}},
		toolCall{Tool: "read_file", Args: map[string]any{"path": "link"}},
		toolCall{Tool: "edit_file", Args: map[string]any{"path": "link", "old_text": secret, "new_text": "pwned"}},
	)
	require.NotContains(t, res[0].Text, secret)
	require.NotContains(t, res[0].Text, "wrote")
	require.Contains(t, res[0].Text, "end\n")
	for _, r := range res[1:] {
		require.True(t, r.IsError, r.Text)
		require.Contains(t, r.Text, "outside the workspace")
		require.NotContains(t, r.Text, secret)
	}
	b, err = os.ReadFile(theirs)
	require.NoError(t, err)
	require.Equal(t, secret, string(b), "the other workspace is unchanged")
}

// TestSandboxLimitsKeepTheWorkerUp: one organization's adversary runs a
// fork bomb, a memory bomb, a 64 GiB file, an edit of a huge sparse
// file and a write past the disk quota; each fails with a result that
// names the limit, the worker's memory stays small, and another
// organization's execution completes meanwhile.
func TestSandboxLimitsKeepTheWorkerUp(t *testing.T) {
	var peak atomic.Int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			if rss := residentBytes(t); rss > peak.Load() {
				peak.Store(rss)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	w := startSandboxWorker(t, `  quota: 33554432
  readLimit: 1048576
  bash:
    limits: {memory: 536870912, processes: 64, cpu: 20s, fileSize: 67108864}`, "")
	write := func(path string) toolCall {
		return toolCall{Tool: "write_file", Args: map[string]any{"path": path, "content": "small"}}
	}
	calls := []toolCall{
		{Tool: "bash", Args: map[string]any{"command": "f(){ f | f & }; f; sleep 2; echo survived", "timeout_seconds": 60}},
		bashCall(`x=$(head -c 1G /dev/zero | tr '\0' x); echo "held ${#x} bytes"`),
		bashCall("truncate -s 64G x"),
		bashCall("truncate -s 8M sparse && echo made"),
		{Tool: "edit_file", Args: map[string]any{"path": "sparse", "old_text": "a", "new_text": "b"}},
		{Tool: "read_file", Args: map[string]any{"path": "sparse"}},
		bashCall("head -c 40M /dev/urandom > big; echo wrote"),
		write("after-quota.txt"),
		bashCall("rm big && echo removed"),
		write("after-rm.txt"),
	}
	tenant := start(t, w.devServer, calls, "")
	// Another organization, meanwhile.
	other := w.asOrg(t, "bystander")
	bystander := start(t, other, []toolCall{bashCall("echo still-served")}, "")
	ex := other.ended(bystander)
	require.Equal(t, "COMPLETED", ex["status"], ex)
	_, tex := w.do(http.MethodGet, "/agent-executions/"+tenant, "")
	require.Equal(t, "RUNNING", tex["status"], "the bystander completed while the tenant's bombs ran")
	res := results(t, other, bystander)
	require.Len(t, res, 1)
	require.False(t, res[0].IsError, res[0].Text)
	require.Contains(t, res[0].Text, "still-served\n")

	ex = w.ended(tenant)
	require.Equal(t, "COMPLETED", ex["status"], ex)
	res = results(t, w.devServer, tenant)
	require.Len(t, res, len(calls))
	for i, r := range res {
		t.Logf("call %d (%s): error=%v %.600s", i, r.Name, r.IsError, r.Text)
	}
	limits := "this worker's limits: memory 512 MiB per process, 64 processes, CPU 20s per process, files up to 64 MiB"
	// The fork bomb.
	require.True(t, res[0].IsError)
	require.Contains(t, res[0].Text, "the command reached the process limit: a fork was refused ("+limits+")")
	// The memory bomb: the shell could not hold 1 GiB, and the result
	// names the memory limit.
	require.NotContains(t, res[1].Text, "held ")
	require.Contains(t, res[1].Text, "cannot allocate")
	require.Contains(t, res[1].Text, "limits: memory 512 MiB per process")
	// 64 GiB of file.
	require.True(t, res[2].IsError)
	require.Contains(t, res[2].Text, "a process tried to write a file past the file size limit and was killed")
	// An 8 MiB sparse file costs no disk, but is past what the file
	// tools open: refused before reading.
	require.False(t, res[3].IsError, res[3].Text)
	for _, r := range res[4:6] {
		require.True(t, r.IsError)
		require.Contains(t, r.Text, "sparse is 8 MiB, past the 1 MiB this worker's "+r.Name+" opens")
	}
	// The quota: the call that passed it fails, and so does the next
	// write, until files are removed.
	require.True(t, res[6].IsError)
	// (Measured while it ran, the command was killed, or after it.)
	require.Regexp(t, `the workspace is over its disk quota: its files take [0-9.]+ MiB of the 32 MiB allowed`, res[6].Text)
	require.True(t, res[7].IsError)
	require.Contains(t, res[7].Text, "the workspace is over its disk quota")
	require.False(t, res[8].IsError, res[8].Text)
	require.False(t, res[9].IsError, res[9].Text)
	require.Equal(t, "wrote 5 bytes to after-rm.txt", res[9].Text)

	close(stop)
	<-sampled
	t.Logf("peak RSS of the worker's process: %d MiB", peak.Load()>>20)
	require.Less(t, peak.Load(), int64(500<<20), "the worker's resident memory stayed under 500 MB")
}

// residentBytes is this process's resident set: the worker runs in it.
func residentBytes(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/status")
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kb int64
			_, err := fmt.Sscanf(strings.TrimSpace(v), "%d kB", &kb)
			require.NoError(t, err)
			return kb << 10
		}
	}
	t.Fatal("no VmRSS in /proc/self/status")
	return 0
}

// TestWorkspaceRemovedWhenTheExecutionEnds: an execution's workspace is
// removed when it completes, fails or is cancelled; one waiting for input
// keeps it.
func TestWorkspaceRemovedWhenTheExecutionEnds(t *testing.T) {
	w := startSandboxWorker(t, "", "")
	keep := bashCall("echo kept > f.txt && mkdir -p a/b && echo deep > a/b/g.txt")

	completed := start(t, w.devServer, []toolCall{keep}, "")
	failed := start(t, w.devServer, []toolCall{keep, {}}, "")
	waiting := start(t, w.devServer, []toolCall{keep}, `{"mode":"multi-turn"}`)
	require.Equal(t, "COMPLETED", w.ended(completed)["status"])
	require.Equal(t, "FAILED", w.ended(failed)["status"])
	status := func(id string) string {
		_, ex := w.do(http.MethodGet, "/agent-executions/"+id, "")
		s, _ := ex["status"].(string)
		return s
	}
	require.Eventually(t, func() bool { return status(waiting) == "WAITING" }, time.Minute, 20*time.Millisecond)
	for _, id := range []string{completed, failed, waiting} {
		res := results(t, w.devServer, id)
		require.NotEmpty(t, res)
		require.False(t, res[0].IsError, res[0].Text)
	}
	waitGone(t, filepath.Join(w.root, completed))
	waitGone(t, filepath.Join(w.root, failed))

	kept := filepath.Join(w.root, waiting, "f.txt")
	require.FileExists(t, kept, "a waiting execution keeps its files")
	fi, err := os.Stat(filepath.Join(w.root, waiting))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), fi.Mode().Perm(), "a workspace is private")
	fi, err = os.Stat(kept)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "so are its files")

	code, body := w.do(http.MethodDelete, "/agent-executions/"+waiting, "")
	require.Less(t, code, 300, body)
	require.Eventually(t, func() bool { return status(waiting) == "CANCELLED" }, time.Minute, 20*time.Millisecond)
	waitGone(t, filepath.Join(w.root, waiting))
}
