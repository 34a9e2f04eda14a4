package scripts_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// pgMachine is a machine without the PostgreSQL server binaries, as
// services.sh sees it: a PATH holding only the tools the script uses, an
// empty Debian-style /usr/lib/postgresql, an os-release file and an
// apt-get that logs its arguments and "installs" by creating initdb.
type pgMachine struct {
	dir, libdir, aptLog string
	env                 []string
}

func newPGMachine(t *testing.T, osID string) pgMachine {
	t.Helper()
	dir := t.TempDir()
	m := pgMachine{dir: dir, libdir: filepath.Join(dir, "lib", "postgresql"), aptLog: filepath.Join(dir, "apt.log")}
	bin := filepath.Join(dir, "bin")
	require.NoError(t, os.MkdirAll(bin, 0o755))
	require.NoError(t, os.MkdirAll(m.libdir, 0o755))
	for _, tool := range []string{"bash", "ls", "sort", "grep", "id", "dirname", "cat"} {
		p, err := exec.LookPath(tool)
		require.NoError(t, err)
		require.NoError(t, os.Symlink(p, filepath.Join(bin, tool)))
	}
	// The fake apt-get installs two versions; the newest must win.
	apt := filepath.Join(dir, "apt-get")
	require.NoError(t, os.WriteFile(apt, []byte(`#!/bin/bash
echo "$*" >>`+m.aptLog+`
if [ "$1" = install ]; then
	for v in 9 16; do
		/bin/mkdir -p `+m.libdir+`/$v/bin
		printf '#!/bin/sh\n' >`+m.libdir+`/$v/bin/initdb
		/bin/chmod +x `+m.libdir+`/$v/bin/initdb
	done
fi
`), 0o755))
	osRelease := filepath.Join(dir, "os-release")
	require.NoError(t, os.WriteFile(osRelease, []byte("PRETTY_NAME=\"test\"\nID="+osID+"\n"), 0o644))
	m.env = []string{"PATH=" + bin, "HOME=" + dir, "AGENTREE_PG_LIBDIR=" + m.libdir, "AGENTREE_APT_GET=" + apt, "AGENTREE_OS_RELEASE=" + osRelease}
	return m
}

// pgBin runs `services.sh pg-bin`, what `make up` runs before initdb.
func (m pgMachine) pgBin(t *testing.T) (stdout, stderr string, err error) {
	t.Helper()
	cmd := exec.Command("bash", "services.sh", "pg-bin")
	cmd.Env = m.env
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	return out.String(), errb.String(), err
}

func (m pgMachine) aptCalls(t *testing.T) string {
	b, err := os.ReadFile(m.aptLog)
	if os.IsNotExist(err) {
		return ""
	}
	require.NoError(t, err)
	return string(b)
}

// TestMakeUpInstallsPostgres: on Debian as root, a machine without the
// server binaries gets them from apt-get and finds initdb where Debian
// puts it (not on PATH); a second run installs nothing. Not as root, the
// script prints the one command to run instead.
func TestMakeUpInstallsPostgres(t *testing.T) {
	m := newPGMachine(t, "debian")
	out, errOut, err := m.pgBin(t)
	if os.Geteuid() != 0 {
		require.Error(t, err)
		require.Contains(t, errOut, "sudo apt-get install -y postgresql")
		require.Empty(t, m.aptCalls(t))
		return
	}
	require.NoError(t, err, errOut)
	require.Contains(t, errOut, "installing them: apt-get install -y postgresql")
	require.Equal(t, "update -q\ninstall -y -q postgresql\n", m.aptCalls(t))
	require.Equal(t, filepath.Join(m.libdir, "16", "bin", "initdb"), strings.TrimSpace(out))

	out, errOut, err = m.pgBin(t)
	require.NoError(t, err, errOut)
	require.Equal(t, filepath.Join(m.libdir, "16", "bin", "initdb"), strings.TrimSpace(out))
	require.Equal(t, "update -q\ninstall -y -q postgresql\n", m.aptCalls(t), "installed once")
}

// TestMakeUpSaysHowToInstallPostgres: elsewhere than Debian/Ubuntu the
// script installs nothing and says what to install.
func TestMakeUpSaysHowToInstallPostgres(t *testing.T) {
	m := newPGMachine(t, "fedora")
	_, errOut, err := m.pgBin(t)
	require.Error(t, err)
	require.Contains(t, errOut, "PostgreSQL server binaries (initdb, pg_ctl, postgres) not found")
	require.Contains(t, errOut, "set DATABASE_URL")
	require.Empty(t, m.aptCalls(t))
}

// TestEnvNamesTheTemporalUI: `services.sh env` exports the UI address of
// the dev server `make up` started (its recorded port), so `agentree dev`
// prints the right one; with TEMPORAL_ADDRESS given, or the server mode
// (which runs no UI), it names none, and the server mode's other exports
// are the dev server's.
func TestEnvNamesTheTemporalUI(t *testing.T) {
	clone := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(clone, "scripts"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(clone, ".data"), 0o755))
	for _, name := range []string{"services.sh", "temporal-server.sh"} {
		script, err := os.ReadFile(name)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(clone, "scripts", name), script, 0o755))
	}
	env := func(extra ...string) string {
		cmd := exec.Command("bash", filepath.Join(clone, "scripts", "services.sh"), "env")
		cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, extra...)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
		return string(out)
	}
	require.Contains(t, env("AGENTREE_TEMPORAL_UI_PORT=9233"), "export AGENTREE_TEMPORAL_UI='http://127.0.0.1:9233'")
	require.NoError(t, os.WriteFile(filepath.Join(clone, ".data", "temporal-ui-port"), []byte("18233\n"), 0o644))
	require.Contains(t, env(), "export AGENTREE_TEMPORAL_UI='http://127.0.0.1:18233'", "the port make up started it with")
	require.NotContains(t, env("TEMPORAL_ADDRESS=10.0.0.1:7233"), "AGENTREE_TEMPORAL_UI")
	server := env("AGENTREE_TEMPORAL=server")
	require.NotContains(t, server, "AGENTREE_TEMPORAL_UI")
	require.Equal(t, "export DATABASE_URL='postgres://agentree@127.0.0.1:54329/agentree?sslmode=disable'\n"+
		"export TEMPORAL_ADDRESS='127.0.0.1:7233'\n", server)
}
