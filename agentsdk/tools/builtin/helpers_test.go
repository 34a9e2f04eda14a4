package builtin_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/tools/builtin"
	"github.com/agentree/agentree/agentsdk/tools/workspace"
)

// fixture is a workspace holding a file, a directory and symlinks (inside
// and out), next to an outside directory holding a secret.
type fixture struct {
	ws        workspace.Workspaces
	workspace string
	outside   string
	tools     agentsdk.Tools
}

const fixtureExecution = "exec-1"

func newFixture(t *testing.T, opts builtin.Options) fixture {
	t.Helper()
	opts.Root = t.TempDir()
	f := fixture{ws: workspace.Workspaces{Root: opts.Root}, outside: t.TempDir()}
	f.workspace = f.ws.Dir(fixtureExecution)
	tools, err := builtin.Tools(opts)
	require.NoError(t, err)
	f.tools, err = agentsdk.NewTools(tools...)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(f.workspace, "src"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(f.workspace, "src", "a.go"), []byte("package a\n// one\n// one\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(f.outside, "secret.txt"), []byte("secret"), 0o644))
	for link, target := range map[string]string{
		"out":      f.outside,                                 // a directory outside
		"passwd":   filepath.Join(f.outside, "secret.txt"),    // a file outside
		"dangling": filepath.Join(f.outside, "not-there.txt"), // nothing, outside
		"inner":    "src",                                     // a directory inside
	} {
		require.NoError(t, os.Symlink(target, filepath.Join(f.workspace, link)))
	}
	return f
}

// run calls a tool as the runtime would for the fixture's execution.
func (f fixture) run(t *testing.T, name string, args any) (string, error) {
	t.Helper()
	return f.runCtx(t, context.Background(), name, args, nil)
}

func (f fixture) runCtx(t *testing.T, ctx context.Context, name string, args any, emit func(any)) (string, error) {
	t.Helper()
	tool, err := f.tools.Get(name)
	require.NoError(t, err)
	b, err := json.Marshal(args)
	require.NoError(t, err)
	require.NoError(t, tool.Validate(b))
	return tool.Run(ctx, agentsdk.ToolInvocation{ExecutionID: fixtureExecution, ToolCallID: "call_" + name, Arguments: b, Emit: emit})
}

// write puts a file in the fixture's workspace.
func (f fixture) write(t *testing.T, rel, content string) {
	t.Helper()
	p := filepath.Join(f.workspace, rel)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
}
