package builtin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/event"
	"github.com/agentree/agentree/agentsdk/tools/builtin"
)

// jailed is how results name the default isolation.
var jailed = builtin.Isolation{Level: builtin.IsolationBwrap, UID: builtin.DefaultSandboxUID, GID: builtin.DefaultSandboxUID}.String()

// helperEnv, when set, makes the test binary a worker that runs one bash
// command (the variable's value) and prints the result: a process whose
// own environment, from its start, holds the secrets.
const helperEnv = "AGENTREE_BASH_HELPER_COMMAND"

func TestMain(m *testing.M) {
	if cmd := os.Getenv(helperEnv); cmd != "" {
		os.Exit(helperWorker(cmd))
	}
	os.Exit(m.Run())
}

func helperWorker(command string) int {
	root, err := os.MkdirTemp("", "agentree-helper-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer os.RemoveAll(root)
	tools, err := builtin.Tools(builtin.Options{Root: root})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	args, _ := json.Marshal(builtin.BashArgs{Command: command})
	out, err := tools[len(tools)-1].Run(context.Background(), agentsdk.ToolInvocation{ExecutionID: "helper", Arguments: args})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Print(out)
	return 0
}

// TestBashCannotSeeWorkerSecrets runs a worker process started with model
// keys and DATABASE_URL in its environment; its command looks for them in
// its own environment and in every process's /proc/PID/environ it can
// read, and finds none.
func TestBashCannotSeeWorkerSecrets(t *testing.T) {
	secrets := map[string]string{
		"ANTHROPIC_API_KEY": "sk-ant-secret-4b1d",
		"OPENAI_API_KEY":    "sk-oai-secret-9c2e",
		"DATABASE_URL":      "postgres://agentree:pw-secret-77aa@db/agentree",
		"SOME_OTHER_TOKEN":  "other-secret-31f0",
	}
	command := `env; echo "parent=$PPID"; cat /proc/$PPID/environ 2>/dev/null | tr '\0' '\n'; ` +
		`grep -a -l -e secret- /proc/[0-9]*/environ 2>/dev/null; echo "HOME is $HOME"`
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+command, "LANG=C.UTF-8")
	for k, v := range secrets {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, stderr.String())
	got := string(out)
	require.Contains(t, got, "LANG=C.UTF-8\n", "allow-listed variables pass")
	require.Contains(t, got, "PATH=")
	require.Contains(t, got, "HOME is /workspace\n", "HOME is the workspace, as the jail shows it")
	for k, v := range secrets {
		require.NotContains(t, got, k+"=", "the command's environment lacks %s", k)
		require.NotContains(t, got, v, "%s's value is nowhere the command can read", k)
	}
}

// TestBashTimeoutKillsTheProcessGroup: a command that forks sleepers, one
// in the background, is stopped by its timeout, by the call's
// cancellation, or by ending while a sleeper still runs; afterwards no
// process it started is left.
func TestBashTimeoutKillsTheProcessGroup(t *testing.T) {
	for _, c := range []struct {
		name     string
		timeout  int
		cancel   bool
		wantErr  string
		wantTail string
	}{
		{name: "timeout", timeout: 1, wantErr: "timed out after 1s: the command and every process it started were killed"},
		{name: "cancel", cancel: true, wantErr: context.Canceled.Error()},
		{name: "ends leaving a sleeper", wantTail: "exit status 0; isolation: "},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, builtin.Options{})
			// Durations no other process uses, to find ours in /proc.
			base := 100000 + rand.IntN(800000)
			bg, fg := fmt.Sprint(base), fmt.Sprint(base+1)
			command := fmt.Sprintf("sleep %s & echo started; sleep %s; echo never", bg, fg)
			if c.wantTail != "" {
				// Both in the background: bash exits at once.
				command = fmt.Sprintf("sleep %s & sleep %s & echo started", bg, fg)
			}
			started := make(chan struct{})
			var once sync.Once
			emit := func(v any) {
				if p, ok := v.(event.Payload); ok && strings.Contains(p.Output, "started") {
					once.Do(func() { close(started) })
				}
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			type res struct {
				out string
				err error
			}
			done := make(chan res, 1)
			go func() {
				out, err := f.runCtx(t, ctx, builtin.BashTool, builtin.BashArgs{Command: command, TimeoutSeconds: c.timeout}, emit)
				done <- res{out, err}
			}()
			if c.wantTail == "" {
				select {
				case <-started:
				case r := <-done:
					t.Fatalf("the command ended before it started its sleepers: %q %v", r.out, r.err)
				}
				require.Eventually(t, func() bool {
					return len(builtin.LiveProcesses("sleep", bg)) == 1 && len(builtin.LiveProcesses("sleep", fg)) == 1
				}, 10*time.Second, 10*time.Millisecond, "both sleepers run")
				if c.cancel {
					cancel()
				}
			}
			r := <-done
			if c.wantErr != "" {
				require.ErrorContains(t, r.err, c.wantErr)
			} else {
				require.NoError(t, r.err)
				require.Contains(t, r.out, c.wantTail)
			}
			require.Eventually(t, func() bool {
				return len(builtin.LiveProcesses("sleep", bg)) == 0 && len(builtin.LiveProcesses("sleep", fg)) == 0
			}, 10*time.Second, 10*time.Millisecond, "no process of the command is left")
		})
	}
}

// TestBashOutputCapInMemory: past OutputLimit the worker keeps the head
// and tail, says how much it dropped, and keeps the whole output in a
// spill file of the workspace.
func TestBashOutputCapInMemory(t *testing.T) {
	const limit = 64 << 10
	f := newFixture(t, builtin.Options{Bash: builtin.BashOptions{OutputLimit: limit}})
	var streamed int
	var mu sync.Mutex
	out, err := f.runCtx(t, context.Background(), builtin.BashTool, builtin.BashArgs{
		Command: `echo HEAD-MARK; head -c 10000000 /dev/zero | tr '\0' 'x'; echo; echo TAIL-MARK`,
	}, func(v any) {
		mu.Lock()
		defer mu.Unlock()
		streamed += len(v.(event.Payload).Output)
	})
	require.NoError(t, err)
	whole := "HEAD-MARK\n" + strings.Repeat("x", 10000000) + "\nTAIL-MARK\n"
	require.Less(t, len(out), limit+300)
	require.True(t, strings.HasPrefix(out, "HEAD-MARK\nxxx"), out[:20])
	note := fmt.Sprintf("\n[… %d bytes of %d dropped here: past this worker's bash output limit of %d bytes; "+
		"the whole output is in .agentree/bash/call_bash.log in the workspace …]\n", len(whole)-limit, len(whole), limit)
	require.True(t, strings.Contains(out, note), "the note says what was dropped and where the whole is: %q", out[limit/2-50:limit/2+300])
	require.True(t, strings.HasSuffix(out, "xxx\nTAIL-MARK\n[exit status 0; isolation: "+jailed+"]"), out[len(out)-100:])
	require.Equal(t, len(whole), streamed, "the live stream carries every byte")

	spilled, err := os.ReadFile(filepath.Join(f.workspace, ".agentree", "bash", "call_bash.log"))
	require.NoError(t, err)
	require.Equal(t, len(whole), len(spilled))
	require.True(t, string(spilled) == whole, "the spill file holds every byte, in order")

	out, err = f.run(t, builtin.BashTool, builtin.BashArgs{Command: "echo small"})
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(out, "small\n[exit status 0"), out)
	spilled, err = os.ReadFile(filepath.Join(f.workspace, ".agentree", "bash", "call_bash.log"))
	require.NoError(t, err)
	require.Len(t, spilled, len(whole), "output within the limit spills nothing")
}

func TestBashDenyList(t *testing.T) {
	f := newFixture(t, builtin.Options{})
	for _, command := range []string{
		"touch ran; rm -rf /",
		"touch ran && rm -fr /*",
		"touch ran; sudo rm -r -f ~",
		"touch ran; rm -rf --no-preserve-root /tmp",
		"touch ran; mkfs.ext4 /dev/sda1",
		"touch ran; :(){ :|:& };:",
		"touch ran; dd if=/dev/zero of=/dev/sda bs=1M",
		"touch ran; cat img > /dev/nvme0n1",
	} {
		_, err := f.run(t, builtin.BashTool, builtin.BashArgs{Command: command})
		require.ErrorContains(t, err, "matches this worker's deny list", command)
		require.ErrorContains(t, err, "the command was not run", command)
		require.NoFileExists(t, filepath.Join(f.workspace, "ran"), command)
	}
	for _, command := range []string{"rm -rf ./build /tmp/x-agentree-none", "rm -rf build/", "echo dd of=out.img"} {
		out, err := f.run(t, builtin.BashTool, builtin.BashArgs{Command: command})
		require.NoError(t, err, command)
		require.Contains(t, out, "exit status 0", command)
	}

	f = newFixture(t, builtin.Options{Bash: builtin.BashOptions{Deny: []string{`\bcurl\b`}}})
	_, err := f.run(t, builtin.BashTool, builtin.BashArgs{Command: "curl http://example.invalid"})
	require.ErrorContains(t, err, `"curl" matches this worker's deny list`)
	out, err := f.run(t, builtin.BashTool, builtin.BashArgs{Command: "echo mkfs"})
	require.NoError(t, err, "a configured list replaces the default")
	require.Contains(t, out, "mkfs\n")

	_, err = builtin.Tools(builtin.Options{Root: t.TempDir(), Bash: builtin.BashOptions{Deny: []string{"(unclosed"}}})
	require.ErrorContains(t, err, `bash deny[0]: "(unclosed" is not a Go regular expression`)
}

func TestBashRunsInTheWorkspace(t *testing.T) {
	f := newFixture(t, builtin.Options{Bash: builtin.BashOptions{Env: []string{"PATH", "GREETING=hello there"}}})
	out, err := f.run(t, builtin.BashTool, builtin.BashArgs{Command: `pwd; echo "$HOME|$GREETING"; echo made > made.txt; ls src; exit 3`})
	require.NoError(t, err, "a failing command is a result the model reads")
	require.Equal(t, "/workspace\n/workspace|hello there\na.go\n[exit status 3; isolation: "+jailed+
		"; limits: memory 4 GiB per process, 256 processes, CPU 10m0s per process, files up to 1 GiB]", out)
	b, err := os.ReadFile(filepath.Join(f.workspace, "made.txt"))
	require.NoError(t, err)
	require.Equal(t, "made\n", string(b))

	out, err = f.run(t, builtin.BashTool, builtin.BashArgs{Command: "true"})
	require.NoError(t, err)
	require.Equal(t, "[no output; exit status 0; isolation: "+jailed+"]", out)

	_, err = f.run(t, builtin.BashTool, builtin.BashArgs{Command: "true", TimeoutSeconds: 601})
	require.EqualError(t, err, "timeout_seconds 601 is above this worker's maximum of 600")

	_, err = builtin.Tools(builtin.Options{Root: t.TempDir(), Bash: builtin.BashOptions{Timeout: time.Hour}})
	require.EqualError(t, err, "bash: the default timeout 1h0m0s is above maxTimeout 10m0s")
}

// The isolation the result reports is the one in force: with no network,
// a server on the worker's loopback cannot be reached; with the network
// the operator allowed, or with no isolation, it can.
func TestBashNetworkIsWhatTheResultSays(t *testing.T) {
	port := builtin.LoopbackServer(t)
	for _, c := range []struct {
		opts builtin.BashOptions
		want string
	}{
		{opts: builtin.BashOptions{}, want: "unreachable\n"},
		{opts: builtin.BashOptions{Network: true}, want: "reached\n"},
		{opts: builtin.BashOptions{Isolation: builtin.IsolationNone}, want: "reached\n"},
	} {
		f := newFixture(t, builtin.Options{Bash: c.opts})
		out, err := f.run(t, builtin.BashTool, builtin.BashArgs{
			Command: fmt.Sprintf(`(exec 3<>/dev/tcp/127.0.0.1/%d) 2>/dev/null && echo reached || echo unreachable`, port),
		})
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(out, c.want), out)
		if c.want == "reached\n" {
			require.NotContains(t, out, "no network")
		} else {
			require.Contains(t, out, ", no network, ")
		}
	}
}

func TestBashStreamsTerminalEvents(t *testing.T) {
	f := newFixture(t, builtin.Options{})
	var mu sync.Mutex
	got := map[string]string{}
	out, err := f.runCtx(t, context.Background(), builtin.BashTool, builtin.BashArgs{
		Command: `echo one; echo two >&2; printf 'h\xc3'; printf '\xa9llo\n'; for i in $(seq 1 2000); do echo "line $i"; done`,
	}, func(v any) {
		p, ok := v.(event.Payload)
		require.True(t, ok)
		require.Equal(t, event.TypeTerminal, p.Type)
		require.LessOrEqual(t, len(p.Output), 16<<10)
		mu.Lock()
		defer mu.Unlock()
		got[p.Stream] += p.Output
	})
	require.NoError(t, err)
	require.Equal(t, "two\n", got["stderr"])
	require.True(t, strings.HasPrefix(got["stdout"], "one\nhéllo\nline 1\n"), got["stdout"][:30])
	require.True(t, strings.HasSuffix(got["stdout"], "line 2000\n"))
	require.Contains(t, out, "héllo\n")
}

// BenchmarkBashOutput measures what a command printing n bytes costs the
// worker's memory (B/op), at the default output limit: up to the limit the
// whole output is held once; past it, no more than the limit.
func BenchmarkBashOutput(b *testing.B) {
	for _, n := range []int{10 << 20, 100 << 20} {
		b.Run(fmt.Sprintf("%dMiB", n>>20), func(b *testing.B) {
			tools, err := builtin.Tools(builtin.Options{Root: b.TempDir()})
			require.NoError(b, err)
			args, err := json.Marshal(builtin.BashArgs{Command: fmt.Sprintf(`head -c %d /dev/zero | tr '\0' x`, n)})
			require.NoError(b, err)
			bash := tools[len(tools)-1]
			b.ReportAllocs()
			b.SetBytes(int64(n))
			for b.Loop() {
				out, err := bash.Run(context.Background(), agentsdk.ToolInvocation{ExecutionID: "bench", Arguments: args, Emit: func(any) {}})
				require.NoError(b, err)
				require.Greater(b, len(out), 1<<20)
			}
		})
	}
}
