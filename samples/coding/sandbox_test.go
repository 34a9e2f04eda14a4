package coding_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/samples/coding"
)

// sandboxFixture is a workspace holding a file, a directory and symlinks
// (inside and out), next to an outside directory holding a secret.
type sandboxFixture struct {
	sandbox   coding.Sandbox
	workspace string
	outside   string
	tools     agentsdk.Tools
}

const fixtureExecution = "exec-1"

func newSandboxFixture(t *testing.T) sandboxFixture {
	t.Helper()
	f := sandboxFixture{sandbox: coding.Sandbox{Dir: t.TempDir()}, outside: t.TempDir()}
	f.workspace = f.sandbox.Workspace(fixtureExecution)
	var err error
	f.tools, err = agentsdk.NewTools(f.sandbox.Tools()...)
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
func (f sandboxFixture) run(t *testing.T, name string, args any) (string, error) {
	t.Helper()
	tool, err := f.tools.Get(name)
	require.NoError(t, err)
	b, err := json.Marshal(args)
	require.NoError(t, err)
	require.NoError(t, tool.Validate(b))
	return tool.Run(context.Background(), agentsdk.ToolInvocation{ExecutionID: fixtureExecution, Arguments: b})
}

func TestEscapesAreRefused(t *testing.T) {
	for _, tc := range []struct {
		name, tool string
		args       any
		want       string
	}{
		{"parent", coding.ReadFileTool, coding.PathArgs{Path: "../secret.txt"}, `"../secret.txt" climbs out of the workspace`},
		{"parent after a directory", coding.ReadFileTool, coding.PathArgs{Path: "src/../../secret.txt"}, "climbs out"},
		{"sibling workspace", coding.ReadFileTool, coding.PathArgs{Path: "../exec-2/a.go"}, "climbs out"},
		{"absolute", coding.ReadFileTool, coding.PathArgs{Path: "/etc/passwd"}, `"/etc/passwd" is an absolute path`},
		{"list the parent", coding.ListFilesTool, coding.PathArgs{Path: ".."}, "climbs out"},
		{"edit outside", coding.EditFileTool, coding.EditFileArgs{Path: "../x", OldText: "a", NewText: "b"}, "climbs out"},
		{"write absolute", coding.WriteFileTool, coding.WriteFileArgs{Path: "/tmp/evil.txt", Content: "x"}, "is an absolute path"},
		{"read through a symlinked directory", coding.ReadFileTool, coding.PathArgs{Path: "out/secret.txt"}, `"out/secret.txt" leads out of the workspace through a symlink`},
		{"write through a symlinked directory", coding.WriteFileTool, coding.WriteFileArgs{Path: "out/new.txt", Content: "x"}, "through a symlink"},
		{"write under a symlinked directory", coding.WriteFileTool, coding.WriteFileArgs{Path: "out/deep/new.txt", Content: "x"}, "through a symlink"},
		{"list a symlinked directory", coding.ListFilesTool, coding.PathArgs{Path: "out"}, `"out" is a symlink that leads out`},
		{"read a symlinked file", coding.ReadFileTool, coding.PathArgs{Path: "passwd"}, `"passwd" is a symlink that leads out`},
		{"edit a symlinked file", coding.EditFileTool, coding.EditFileArgs{Path: "passwd", OldText: "secret", NewText: "x"}, "symlink that leads out"},
		{"write through a dangling symlink", coding.WriteFileTool, coding.WriteFileArgs{Path: "dangling", Content: "x"}, `"dangling" is a symlink to something that does not exist`},
		{"write under a dangling symlink", coding.WriteFileTool, coding.WriteFileArgs{Path: "dangling/x.txt", Content: "x"}, "goes through a symlink to something that does not exist"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newSandboxFixture(t)
			out, err := f.run(t, tc.tool, tc.args)
			require.Error(t, err, "got %q", out)
			require.True(t, errors.Is(err, coding.ErrOutside), err.Error())
			require.Contains(t, err.Error(), tc.want)
			require.NotContains(t, err.Error(), f.sandbox.Dir, "the host's paths stay hidden")

			entries, err := os.ReadDir(f.outside)
			require.NoError(t, err)
			require.Len(t, entries, 1, "nothing was written outside")
			secret, err := os.ReadFile(filepath.Join(f.outside, "secret.txt"))
			require.NoError(t, err)
			require.Equal(t, "secret", string(secret))
		})
	}
}

func TestPathsInsideAreAllowed(t *testing.T) {
	f := newSandboxFixture(t)
	out, err := f.run(t, coding.WriteFileTool, coding.WriteFileArgs{Path: "inner/b.go", Content: "package a\n"})
	require.NoError(t, err, "a symlink that stays inside is fine")
	require.Equal(t, "wrote 10 bytes to inner/b.go", out)
	b, err := os.ReadFile(filepath.Join(f.workspace, "src", "b.go"))
	require.NoError(t, err)
	require.Equal(t, "package a\n", string(b))

	out, err = f.run(t, coding.ReadFileTool, coding.PathArgs{Path: "./src/../src/b.go"})
	require.NoError(t, err)
	require.Equal(t, "package a\n", out)

	out, err = f.run(t, coding.ListFilesTool, coding.PathArgs{Path: "src"})
	require.NoError(t, err)
	require.Equal(t, "src/a.go (24 bytes)\nsrc/b.go (10 bytes)", out)

	out, err = f.run(t, coding.WriteFileTool, coding.WriteFileArgs{Path: "new/dir/c.txt", Content: "c"})
	require.NoError(t, err)
	require.Equal(t, "wrote 1 bytes to new/dir/c.txt", out)
}

func TestEditFileNeedsOneOccurrence(t *testing.T) {
	f := newSandboxFixture(t)
	_, err := f.run(t, coding.EditFileTool, coding.EditFileArgs{Path: "src/a.go", OldText: "// one", NewText: "// two"})
	require.EqualError(t, err, "old_text occurs 2 times in src/a.go; include more of the surrounding text so it occurs once")
	_, err = f.run(t, coding.EditFileTool, coding.EditFileArgs{Path: "src/a.go", OldText: "// three", NewText: "x"})
	require.EqualError(t, err, "old_text does not occur in src/a.go; read the file and copy the text exactly")
	_, err = f.run(t, coding.ReadFileTool, coding.PathArgs{Path: "src/missing.go"})
	require.EqualError(t, err, "src/missing.go does not exist")

	out, err := f.run(t, coding.EditFileTool, coding.EditFileArgs{Path: "src/a.go", OldText: "a\n// one", NewText: "a\n// zero"})
	require.NoError(t, err)
	require.Equal(t, "edited src/a.go", out)
	out, err = f.run(t, coding.ReadFileTool, coding.PathArgs{Path: "src/a.go"})
	require.NoError(t, err)
	require.Equal(t, "package a\n// zero\n// one\n", out)
}

func TestWorkspacesAreSeparate(t *testing.T) {
	f := newSandboxFixture(t)
	tool, err := f.tools.Get(coding.ListFilesTool)
	require.NoError(t, err)
	out, err := tool.Run(context.Background(), agentsdk.ToolInvocation{ExecutionID: "exec-2", Arguments: []byte(`{}`)})
	require.NoError(t, err)
	require.Equal(t, "the workspace is empty", out)
	_, err = tool.Run(context.Background(), agentsdk.ToolInvocation{ExecutionID: "../exec-1", Arguments: []byte(`{}`)})
	require.ErrorContains(t, err, "cannot name a workspace")
}
