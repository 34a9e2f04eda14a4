package workerconfig_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/tools/builtin"
	"github.com/agentree/agentree/internal/workerconfig"
)

// The builtin tool set is off by default (bash runs commands on the
// worker) and, enabled, works in the configured workspace with the
// configured bash settings.
func TestBuiltinToolSetUsesTheWorkspaceSection(t *testing.T) {
	noKeys(t)
	require.NotContains(t, workerconfig.Default().ToolSets, builtin.ToolSet)

	root := t.TempDir()
	c, err := workerconfig.Parse([]byte(`
toolSets: [demo, builtin]
workspace:
  root: ` + root + `
  bash:
    timeout: 90s
    maxTimeout: 5m
    outputLimit: 1024
    env: [PATH, "GREETING=hi"]
    deny: ['\bcurl\b']
`))
	require.NoError(t, err)
	require.Equal(t, workerconfig.Workspace{Root: root, Quota: 4 << 30, ReadLimit: 64 << 20, KeepFor: 30 * 24 * time.Hour,
		Bash: workerconfig.Bash{
			Timeout: 90 * time.Second, MaxTimeout: 5 * time.Minute, OutputLimit: 1024, SpillLimit: 256 << 20,
			Env: []string{"PATH", "GREETING=hi"}, Deny: []string{`\bcurl\b`}, Isolation: "bwrap", UID: 65534, GID: 65534,
			Limits: workerconfig.Limits{Memory: 4 << 30, Processes: 256, CPU: 10 * time.Minute, FileSize: 1 << 30},
		},
		Snapshots: workerconfig.Snapshots{Enabled: ptr(true), MaxFiles: 10000, MaxBytes: 16 << 20, Ignore: []string{".git/objects", "node_modules"}},
	}, c.Workspace)
	w, err := c.Build()
	require.NoError(t, err)
	require.Equal(t, root, w.SnapshotRoot, "the builtin tool set's workspaces are snapshotted by default")
	require.Equal(t, []string{".git/objects", "node_modules"}, w.SnapshotLimits.Ignore)
	var names []string
	for _, tl := range w.Tools {
		names = append(names, tl.Name)
	}
	require.Subset(t, names, builtin.ToolNames)
	tools, err := agentsdk.NewTools(w.Tools...)
	require.NoError(t, err)

	bash, err := tools.Get(builtin.BashTool)
	require.NoError(t, err)
	require.Contains(t, bash.Description, "Time limit 1m30s by default, at most 5m0s")
	run := func(command string) (string, error) {
		args, _ := json.Marshal(builtin.BashArgs{Command: command})
		return bash.Run(context.Background(), agentsdk.ToolInvocation{ExecutionID: "exec-9", Arguments: args})
	}
	out, err := run(`echo "$GREETING" > hi.txt; cat hi.txt`)
	require.NoError(t, err)
	require.Contains(t, out, "hi\n")
	require.FileExists(t, filepath.Join(root, "exec-9", "hi.txt"), "the workspace is under the configured root")
	_, err = run("curl x")
	require.ErrorContains(t, err, "deny list")
	out, err = run("head -c 5000 /dev/zero | tr '\\0' y")
	require.NoError(t, err)
	require.Contains(t, out, "bytes of 5000 dropped here: past this worker's bash output limit of 1024 bytes")
}

func TestBadWorkspaceSectionsNameTheField(t *testing.T) {
	noKeys(t)
	for name, c := range map[string]struct{ yaml, want string }{
		"unknown field":      {"workspace:\n  dir: /x\n", `line 2: unknown field "dir" in workspace`},
		"unknown bash field": {"workspace:\n  bash:\n    timeut: 1s\n", `line 3: unknown field "timeut" in workspace.bash`},
		"not a duration":     {"workspace:\n  bash:\n    timeout: soon\n", "line 3: `soon` is not a duration such as 90s or 2m"},
		"not a number":       {"workspace:\n  bash:\n    outputLimit: big\n", "line 3: `big` is not a number"},
		"negative timeout":   {"workspace:\n  bash:\n    timeout: -1s\n", "workspace.bash.timeout: -1s is negative"},
		"above the maximum":  {"workspace:\n  bash:\n    timeout: 20m\n", "workspace.bash.timeout: 20m0s is above maxTimeout (10m0s)"},
		"negative limit":     {"workspace:\n  bash:\n    outputLimit: -5\n", "workspace.bash.outputLimit: -5 is negative"},
		"bad deny pattern":   {"workspace:\n  bash:\n    deny: ['(x']\n", `workspace.bash.deny[0]: "(x" is not a Go regular expression`},
		"empty env entry":    {"workspace:\n  bash:\n    env: ['=x']\n", `workspace.bash.env[0]: "=x" names no variable`},
		"unknown isolation":  {"workspace:\n  bash:\n    isolation: unshare\n", `workspace.bash.isolation: "unshare" is not a level (known: bwrap, none)`},
		"network unjailed":   {"workspace:\n  bash:\n    isolation: none\n    network: true\n", "workspace.bash.network: applies to the bwrap jail"},
		"the old switch":     {"workspace:\n  bash:\n    requireIsolation: true\n", `unknown field "requireIsolation" in workspace.bash`},
		"bad quota":          {"workspace:\n  quota: -2\n", "workspace.quota: -2 is neither a size nor -1 (none)"},
		"bad snapshot bound": {"workspace:\n  snapshots:\n    maxFiles: -2\n", "workspace.snapshots: maxFiles and maxBytes are positive, or -1 for none"},
		"bad ignore pattern": {"workspace:\n  snapshots:\n    ignore: ['[x']\n", `workspace.snapshots.ignore[0]: "[x" is not a pattern`},
		"bad limit":          {"workspace:\n  bash:\n    limits: {memory: -7}\n", "workspace.bash.limits: a limit is a positive value, or -1 for none"},
		"unknown limit":      {"workspace:\n  bash:\n    limits: {ram: 1}\n", `unknown field "ram" in workspace.bash.limits`},
	} {
		_, err := workerconfig.Parse([]byte(c.yaml))
		require.ErrorContains(t, err, c.want, name)
		require.NotContains(t, err.Error(), "workerconfig.", name)
	}
	c, err := workerconfig.Parse([]byte("workspace:\n  bash:\n    deny: []\n"))
	require.NoError(t, err)
	require.Empty(t, c.Workspace.Bash.Deny, "an explicit empty list denies nothing")
	require.True(t, slices.Equal(workerconfig.Default().Workspace.Bash.Deny, builtin.DefaultDeny))
}
