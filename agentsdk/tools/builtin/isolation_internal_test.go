package builtin

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk/tools/workspace"
)

// TestEveryIsolationLevel runs the same checks under each level, so the
// weaker one the operator may choose still kills process groups, hides
// secrets from the environment and reports its network truthfully.
func TestEveryIsolationLevel(t *testing.T) {
	port := LoopbackServer(t)
	t.Setenv("AGENTREE_TEST_SECRET", "sk-isolation-secret")
	for i, level := range IsolationLevels {
		t.Run(level, func(t *testing.T) {
			ws := workspace.Workspaces{Root: t.TempDir()}
			b, unavailable, err := newBash(ws, BashOptions{Env: []string{"PATH"}, Isolation: level})
			require.NoError(t, err)
			require.NoError(t, unavailable, "this host runs bwrap with user namespaces (make up installs it)")
			w, err := ws.Open("e")
			require.NoError(t, err)
			defer w.Close()
			home := b.jail.dir(w.Dir())

			res, err := b.exec(context.Background(), w, fmt.Sprintf(
				`env; echo made > made.txt; (exec 3<>/dev/tcp/127.0.0.1/%d) 2>/dev/null && echo reached || echo unreachable; exit 3`,
				port), DefaultBashTimeout, nil, nil)
			require.NoError(t, err)
			require.Equal(t, 3, res.exit, res.output)
			require.NotContains(t, res.output, "sk-isolation-secret")
			require.Contains(t, res.output, "HOME="+home+"\n")
			if level == IsolationBwrap {
				require.Contains(t, res.output, "unreachable\n")
			} else {
				require.Contains(t, res.output, "reached\n")
				require.NotContains(t, res.output, "unreachable")
			}
			b2, err := os.ReadFile(filepath.Join(w.Dir(), "made.txt"))
			require.NoError(t, err)
			require.Equal(t, "made\n", string(b2))
			fi, err := os.Stat(filepath.Join(w.Dir(), "made.txt"))
			require.NoError(t, err)
			require.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "what a command writes is private too")

			// In the jail, a command cannot write outside its workspace
			// nor see another execution's.
			other, err := ws.Open("other")
			require.NoError(t, err)
			require.NoError(t, other.Root().WriteFile("theirs.txt", []byte("theirs"), 0o644))
			other.Close()
			outside := t.TempDir()
			res, err = b.exec(context.Background(), w, fmt.Sprintf(
				`touch '%s/x' 2>/dev/null && echo wrote-outside; cat '%s/other/theirs.txt' 2>/dev/null || echo hidden`, outside, ws.Root),
				DefaultBashTimeout, nil, nil)
			require.NoError(t, err)
			_, statErr := os.Stat(filepath.Join(outside, "x"))
			if level == IsolationBwrap {
				require.NotContains(t, res.output, "wrote-outside")
				require.ErrorIs(t, statErr, os.ErrNotExist)
				require.Contains(t, res.output, "hidden\n")
			} else {
				require.Contains(t, res.output, "wrote-outside\ntheirs")
				require.NoError(t, statErr)
			}

			if level == IsolationBwrap {
				// The jail's root and /dev are read-only; its /tmp and
				// /dev/shm are the call's own, in the workspace, so the
				// quota counts them, and they go with the call.
				res, err = b.exec(context.Background(), w, `echo t > /tmp/t && echo s > /dev/shm/s && ls /workspace/.agentree/scratch/*; `+
					`mkdir /x; echo y > /dev/y; head -c 3M /dev/zero > /tmp/big`, DefaultBashTimeout, nil, nil)
				require.NoError(t, err)
				require.Contains(t, res.output, "shm\ntmp\n")
				require.Contains(t, res.output, "mkdir: cannot create directory '/x': Read-only file system\n")
				require.Contains(t, res.output, "/dev/y: Read-only file system\n")
				require.NoError(t, res.overQuota, "no quota")
				left, err := os.ReadDir(filepath.Join(w.Dir(), scratchRoot))
				require.NoError(t, err)
				require.Empty(t, left, "a call's /tmp goes with it")

				quota := workspace.Workspaces{Root: ws.Root, Quota: 1 << 20}
				qw, err := quota.Open("q")
				require.NoError(t, err)
				res, err = b.exec(context.Background(), qw, `head -c 3M /dev/zero > /tmp/big`, DefaultBashTimeout, nil, nil)
				qw.Close()
				require.NoError(t, err)
				require.ErrorIs(t, res.overQuota, workspace.ErrOverQuota, "the quota counts /tmp")
			}

			// A sleeper in the background and one in the foreground: the
			// timeout takes both.
			marker := fmt.Sprintf("%d", 200000+i*7+os.Getpid()%1000*10)
			res, err = b.exec(context.Background(), w, "sleep "+marker+" & sleep "+marker+"; echo never", time.Second, nil, nil)
			require.NoError(t, err)
			require.True(t, res.timedOut)
			require.NotContains(t, res.output, "never")
			require.Eventually(t, func() bool { return len(LiveProcesses("sleep", marker)) == 0 }, 10*time.Second, 10*time.Millisecond, "no sleeper is left")
		})
	}
}

// LoopbackServer listens on the worker's loopback until the test ends,
// accepting and closing connections: something a command with the
// worker's network can reach and one without cannot. It returns the port.
func LoopbackServer(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port
}

// LiveProcesses lists the live (not zombie) processes whose command line
// is argv, by PID.
func LiveProcesses(argv ...string) []string {
	want := strings.Join(argv, "\x00") + "\x00"
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var live []string
	for _, d := range dirs {
		cl, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil || string(cl) != want {
			continue
		}
		stat, err := os.ReadFile(filepath.Join(d, "stat"))
		if err != nil {
			continue
		}
		// The state follows the parenthesised command name.
		if i := strings.LastIndexByte(string(stat), ')'); i > 0 && i+2 < len(stat) && stat[i+2] != 'Z' && stat[i+2] != 'X' {
			live = append(live, filepath.Base(d))
		}
	}
	return live
}
