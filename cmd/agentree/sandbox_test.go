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
// configuration file, its dev key file, its local store, the user's
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
	require.NotEmpty(t, storeFiles, "the local store's files")
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
	require.Contains(t, out, "isolation: bwrap (uid 65534, only the workspace and system programs, no network)")
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
