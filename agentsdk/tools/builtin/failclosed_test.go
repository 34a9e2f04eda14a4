package builtin_test

import (
	"bytes"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk/tools/builtin"
)

// toolNames lists a set's tools by name.
func toolNames(t *testing.T, opts builtin.Options) ([]string, string) {
	t.Helper()
	var log bytes.Buffer
	opts.Root = t.TempDir()
	opts.Logger = slog.New(slog.NewTextHandler(&log, nil))
	tools, err := builtin.Tools(opts)
	require.NoError(t, err)
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	return names, log.String()
}

// TestBashFailsClosed: where the configured isolation cannot run, the set
// holds the file tools and no bash, and the log says why; isolation none
// offers bash with a warning; an unknown level is an error.
func TestBashFailsClosed(t *testing.T) {
	names, log := toolNames(t, builtin.Options{})
	require.Equal(t, builtin.ToolNames, names, "this host runs the jail")
	require.Empty(t, log)

	bash, err := exec.LookPath("bash")
	require.NoError(t, err)
	bin := t.TempDir()
	require.NoError(t, os.Symlink(bash, filepath.Join(bin, "bash")))
	t.Setenv("PATH", bin)
	names, log = toolNames(t, builtin.Options{})
	require.Equal(t, builtin.FileToolNames, names)
	require.Contains(t, log, `level=ERROR msg="builtin tools: bash is not offered: its isolation cannot run on this worker" `+
		`reason="isolation bwrap: bubblewrap (bwrap) is not installed on this worker"`)

	require.NoError(t, os.WriteFile(filepath.Join(bin, "bwrap"), []byte("#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n"), 0o755))
	names, log = toolNames(t, builtin.Options{})
	require.Equal(t, builtin.FileToolNames, names)
	require.Contains(t, log, "bwrap cannot build the jail on this host (exit status 1: bwrap: setting up uid map: Permission denied)")

	names, log = toolNames(t, builtin.Options{Bash: builtin.BashOptions{Isolation: builtin.IsolationNone}})
	require.Equal(t, builtin.ToolNames, names)
	require.Contains(t, log, "level=WARN msg=\"builtin tools: bash runs commands WITHOUT isolation (isolation: none)")

	_, err = builtin.Tools(builtin.Options{Root: t.TempDir(), Bash: builtin.BashOptions{Isolation: "unshare"}})
	require.EqualError(t, err, `bash: isolation "unshare" is not a level (known: bwrap, none)`)
}

// TestBashLimitsCanBeLifted: -1 lifts each limit; a failed command's
// result then says there are none.
func TestBashLimitsCanBeLifted(t *testing.T) {
	f := newFixture(t, builtin.Options{Bash: builtin.BashOptions{Limits: builtin.Limits{Memory: -1, Processes: -1, CPU: -1, FileSize: -1}}})
	out, err := f.run(t, builtin.BashTool, builtin.BashArgs{Command: `echo "$(ulimit -v) $(ulimit -t) $(ulimit -f)"; exit 1`})
	require.NoError(t, err)
	require.Equal(t, "unlimited unlimited unlimited\n[exit status 1; isolation: "+jailed+"; limits: none]", out)
}

// TestBashFailsClosedWithoutSeccomp: a bwrap that rejects the filter (here
// handed a truncated one, as a bwrap built without seccomp support would
// reject any) fails the probe, and so does one that ignores it: bash is
// not offered.
func TestBashFailsClosedWithoutSeccomp(t *testing.T) {
	bwrap, err := exec.LookPath("bwrap")
	require.NoError(t, err)
	bash, err := exec.LookPath("bash")
	require.NoError(t, err)
	bin := t.TempDir()
	require.NoError(t, os.Symlink(bash, filepath.Join(bin, "bash")))
	bad := filepath.Join(bin, "truncated-filter")
	require.NoError(t, os.WriteFile(bad, []byte("12345"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(bin, "bwrap"), []byte("#!"+bash+"\nexec "+bwrap+` "$@" 3<`+bad+"\n"), 0o755))
	t.Setenv("PATH", bin)
	names, log := toolNames(t, builtin.Options{})
	require.Equal(t, builtin.FileToolNames, names)
	require.Contains(t, log, "bwrap cannot build the jail on this host (exit status 1: bwrap: Invalid seccomp data, must be multiple of 8)")

	require.NoError(t, os.WriteFile(filepath.Join(bin, "bwrap"), []byte("#!"+bash+`
args=(); skip=
for a in "$@"; do
	if [ -n "$skip" ]; then skip=; continue; fi
	if [ "$a" = --seccomp ]; then skip=1; continue; fi
	args+=("$a")
done
exec `+bwrap+` "${args[@]}"
`), 0o755))
	// The probe's bash must be found in the jail too: the system's.
	t.Setenv("PATH", bin+":"+filepath.Dir(bash))
	require.NoError(t, os.Remove(filepath.Join(bin, "bash")))
	names, log = toolNames(t, builtin.Options{})
	require.Equal(t, builtin.FileToolNames, names)
	require.Contains(t, log, "bwrap cannot build the jail on this host (exit status 1: no seccomp filter in force)")
}
