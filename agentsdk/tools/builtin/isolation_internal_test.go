package builtin

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk/tools/workspace"
)

// TestEveryIsolationThisHostOffers runs the same checks under each
// isolation the host can run, weakest included, so a host that degrades
// to unshare or to none still kills process groups, hides secrets from
// the environment and reports its network truthfully. DetectIsolation
// picks only the strongest; this covers the others.
func TestEveryIsolationThisHostOffers(t *testing.T) {
	bashPath, err := exec.LookPath("bash")
	require.NoError(t, err)
	port := LoopbackServer(t)
	t.Setenv("AGENTREE_TEST_SECRET", "sk-isolation-secret")
	ran := 0
	for i, iso := range append(append([]Isolation(nil), candidates...), none) {
		t.Run(fmt.Sprintf("%d-%s", i, iso.Name), func(t *testing.T) {
			probeWS := t.TempDir()
			t.Log(iso)
			if !iso.works(bashPath, probeWS) {
				t.Logf("not available on this host: %s", iso)
				return
			}
			ran++
			ws := workspace.Workspaces{Root: t.TempDir()}
			b, err := newBash(ws, BashOptions{Env: []string{"PATH"}})
			require.NoError(t, err)
			b.isolation = iso
			w, err := ws.Open("e")
			require.NoError(t, err)
			defer w.Close()
			dir := w.Dir()

			res, err := b.exec(context.Background(), w, fmt.Sprintf(
				`env; echo made > made.txt; (exec 3<>/dev/tcp/127.0.0.1/%d) 2>/dev/null && echo reached || echo unreachable; exit 3`,
				port), DefaultBashTimeout, nil, nil)
			require.NoError(t, err)
			require.Equal(t, 3, res.exit)
			require.NotContains(t, res.output, "sk-isolation-secret")
			require.Contains(t, res.output, "HOME="+dir+"\n")
			if iso.NoNetwork {
				require.Contains(t, res.output, "unreachable\n")
			} else {
				require.Contains(t, res.output, "reached\n")
				require.NotContains(t, res.output, "unreachable")
			}
			b2, err := os.ReadFile(filepath.Join(dir, "made.txt"))
			require.NoError(t, err)
			require.Equal(t, "made\n", string(b2))

			// Under a read-only host, a command cannot write outside its
			// workspace nor see another execution's.
			other, err := ws.Open("other")
			require.NoError(t, err)
			require.NoError(t, other.Root().WriteFile("theirs.txt", []byte("theirs"), 0o644))
			other.Close()
			outside := t.TempDir()
			res, err = b.exec(context.Background(), w, fmt.Sprintf(
				`touch '%s/x' && echo wrote-outside; cat ../other/theirs.txt 2>/dev/null || echo hidden`, outside), DefaultBashTimeout, nil, nil)
			require.NoError(t, err)
			_, statErr := os.Stat(filepath.Join(outside, "x"))
			if iso.ReadOnlyHost {
				require.NotContains(t, res.output, "wrote-outside")
				require.ErrorIs(t, statErr, os.ErrNotExist)
				require.Contains(t, res.output, "hidden\n")
			} else {
				require.Contains(t, res.output, "wrote-outside\ntheirs")
				require.NoError(t, statErr)
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
	require.Positive(t, ran)
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

// A worker that requires isolation does not start on a host that cannot
// give it; one that does not require it starts and says so in the tool's
// description and each result.
func TestRequireIsolationRefusesAHostWithout(t *testing.T) {
	DetectIsolation()
	saved := detected
	t.Cleanup(func() { detected = saved })
	ws := workspace.Workspaces{Root: t.TempDir()}
	for _, host := range []Isolation{none, candidates[2]} {
		detected = host
		_, err := newBash(ws, BashOptions{RequireIsolation: true})
		require.EqualError(t, err, "bash: requireIsolation is set but this host offers only "+host.String()+
			": install bubblewrap (bwrap) or allow unprivileged user and PID namespaces (unshare)")
	}
	detected = none
	b, err := newBash(ws, BashOptions{})
	require.NoError(t, err)
	require.Contains(t, b.tool().Description, "It has the worker's network.")
}
