package builtin_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/tools/builtin"
	"github.com/agentree/agentree/agentsdk/tools/workspace"
)

// escape is a call that must be refused as leaving the workspace.
type escape struct {
	name, tool string
	args       any
	want       string
}

// sampleEscapes are the escape cases the coding sample's sandbox was
// tested with, plus grep's.
var sampleEscapes = []escape{
	{"parent", builtin.ReadFileTool, builtin.ReadFileArgs{Path: "../secret.txt"}, `"../secret.txt" climbs out of the workspace`},
	{"parent after a directory", builtin.ReadFileTool, builtin.ReadFileArgs{Path: "src/../../secret.txt"}, "climbs out"},
	{"sibling workspace", builtin.ReadFileTool, builtin.ReadFileArgs{Path: "../exec-2/a.go"}, "climbs out"},
	{"absolute", builtin.ReadFileTool, builtin.ReadFileArgs{Path: "/etc/passwd"}, `"/etc/passwd" is an absolute path`},
	{"list the parent", builtin.ListFilesTool, builtin.ListFilesArgs{Path: ".."}, "climbs out"},
	{"grep the parent", builtin.GrepTool, builtin.GrepArgs{Pattern: "secret", Path: ".."}, "climbs out"},
	{"grep absolute", builtin.GrepTool, builtin.GrepArgs{Pattern: "root", Path: "/etc"}, "is an absolute path"},
	{"edit outside", builtin.EditFileTool, builtin.EditFileArgs{Path: "../x", OldText: "a", NewText: "b"}, "climbs out"},
	{"write absolute", builtin.WriteFileTool, builtin.WriteFileArgs{Path: "/tmp/evil.txt", Content: "x"}, "is an absolute path"},
	{"read through a symlinked directory", builtin.ReadFileTool, builtin.ReadFileArgs{Path: "out/secret.txt"}, `"out/secret.txt" leads out of the workspace through a symlink`},
	{"write through a symlinked directory", builtin.WriteFileTool, builtin.WriteFileArgs{Path: "out/new.txt", Content: "x"}, "through a symlink"},
	{"write under a symlinked directory", builtin.WriteFileTool, builtin.WriteFileArgs{Path: "out/deep/new.txt", Content: "x"}, "through a symlink"},
	{"list a symlinked directory", builtin.ListFilesTool, builtin.ListFilesArgs{Path: "out"}, `"out" is a symlink that leads out`},
	{"grep a symlinked directory", builtin.GrepTool, builtin.GrepArgs{Pattern: "secret", Path: "out"}, `"out" is a symlink that leads out`},
	{"read a symlinked file", builtin.ReadFileTool, builtin.ReadFileArgs{Path: "passwd"}, `"passwd" is a symlink that leads out`},
	{"edit a symlinked file", builtin.EditFileTool, builtin.EditFileArgs{Path: "passwd", OldText: "secret", NewText: "x"}, "symlink that leads out"},
	{"write through a dangling symlink", builtin.WriteFileTool, builtin.WriteFileArgs{Path: "dangling", Content: "x"}, `"dangling" is a symlink to something that does not exist`},
	{"write under a dangling symlink", builtin.WriteFileTool, builtin.WriteFileArgs{Path: "dangling/x.txt", Content: "x"}, "goes through a symlink to something that does not exist"},
}

// bashLinks are symlinks a command makes, and the calls through them
// that must be refused.
const bashLinks = `ln -s "$OUTSIDE" evil && ln -s "$OUTSIDE/secret.txt" pw && ln -s ../.. up && ` +
	`mkdir -p deep/er && ln -s ../../../ deep/er/top && ln -s "$OUTSIDE/new.txt" newlink && echo linked`

var bashEscapes = []escape{
	{"bash link: read through a directory", builtin.ReadFileTool, builtin.ReadFileArgs{Path: "evil/secret.txt"}, "leads out of the workspace through a symlink"},
	{"bash link: read a file", builtin.ReadFileTool, builtin.ReadFileArgs{Path: "pw"}, `"pw" is a symlink that leads out`},
	{"bash link: list the root above", builtin.ListFilesTool, builtin.ListFilesArgs{Path: "up"}, `"up" is a symlink that leads out`},
	{"bash link: read via a climbing link", builtin.ReadFileTool, builtin.ReadFileArgs{Path: "deep/er/top/secret.txt"}, "through a symlink"},
	{"bash link: grep through it", builtin.GrepTool, builtin.GrepArgs{Pattern: "secret", Path: "evil"}, "symlink that leads out"},
	{"bash link: write through a directory", builtin.WriteFileTool, builtin.WriteFileArgs{Path: "evil/new.txt", Content: "x"}, "through a symlink"},
	{"bash link: write a dangling one", builtin.WriteFileTool, builtin.WriteFileArgs{Path: "newlink", Content: "x"}, "symlink to something that does not exist"},
	{"bash link: edit a file", builtin.EditFileTool, builtin.EditFileArgs{Path: "pw", OldText: "secret", NewText: "x"}, "symlink that leads out"},
}

// TestFileToolsStayInTheWorkspace: every way out the sample's sandbox
// refused, and symlinks a bash command creates, are refused with
// ErrOutside and a reason, write nothing outside and show no host path.
func TestFileToolsStayInTheWorkspace(t *testing.T) {
	for _, tc := range append(append([]escape(nil), sampleEscapes...), bashEscapes...) {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, builtin.Options{})
			if strings.HasPrefix(tc.name, "bash link") {
				out, err := f.run(t, builtin.BashTool, builtin.BashArgs{Command: "OUTSIDE=" + f.outside + "; " + bashLinks})
				require.NoError(t, err)
				require.Contains(t, out, "linked\n")
			}
			out, err := f.run(t, tc.tool, tc.args)
			require.Error(t, err, "got %q", out)
			require.True(t, errors.Is(err, workspace.ErrOutside), err.Error())
			require.Contains(t, err.Error(), tc.want)
			require.NotContains(t, err.Error(), f.ws.Root, "the host's paths stay hidden")

			entries, err := os.ReadDir(f.outside)
			require.NoError(t, err)
			require.Len(t, entries, 1, "nothing was written outside")
			secret, err := os.ReadFile(filepath.Join(f.outside, "secret.txt"))
			require.NoError(t, err)
			require.Equal(t, "secret", string(secret))
		})
	}
}

// A search of the whole workspace does not follow a symlink out.
func TestWalksDoNotFollowSymlinksOut(t *testing.T) {
	f := newFixture(t, builtin.Options{})
	out, err := f.run(t, builtin.GrepTool, builtin.GrepArgs{Pattern: "secret"})
	require.NoError(t, err)
	require.Equal(t, `no line in the workspace matches "secret"`, out)
	out, err = f.run(t, builtin.ListFilesTool, builtin.ListFilesArgs{})
	require.NoError(t, err)
	require.Equal(t, "dangling (symlink)\ninner (symlink)\nout (symlink)\npasswd (symlink)\nsrc/\nsrc/a.go (24 bytes)", out)
}

func TestPathsInsideAreAllowed(t *testing.T) {
	f := newFixture(t, builtin.Options{})
	out, err := f.run(t, builtin.WriteFileTool, builtin.WriteFileArgs{Path: "inner/b.go", Content: "package a\n"})
	require.NoError(t, err, "a symlink that stays inside is fine")
	require.Equal(t, "wrote 10 bytes to inner/b.go", out)
	b, err := os.ReadFile(filepath.Join(f.workspace, "src", "b.go"))
	require.NoError(t, err)
	require.Equal(t, "package a\n", string(b))

	out, err = f.run(t, builtin.ReadFileTool, builtin.ReadFileArgs{Path: "./src/../src/b.go"})
	require.NoError(t, err)
	require.Equal(t, "     1\tpackage a\n", out)

	out, err = f.run(t, builtin.ListFilesTool, builtin.ListFilesArgs{Path: "inner"})
	require.NoError(t, err)
	require.Equal(t, "inner/a.go (24 bytes)\ninner/b.go (10 bytes)", out)

	out, err = f.run(t, builtin.WriteFileTool, builtin.WriteFileArgs{Path: "new/dir/c.txt", Content: "c"})
	require.NoError(t, err)
	require.Equal(t, "wrote 1 bytes to new/dir/c.txt", out)
	b, err = os.ReadFile(filepath.Join(f.workspace, "new", "dir", "c.txt"))
	require.NoError(t, err)
	require.Equal(t, "c", string(b))
}

func TestEditFileNeedsExactlyOneMatch(t *testing.T) {
	f := newFixture(t, builtin.Options{})
	_, err := f.run(t, builtin.EditFileTool, builtin.EditFileArgs{Path: "src/a.go", OldText: "// one", NewText: "// two"})
	require.EqualError(t, err, "old_text occurs 2 times in src/a.go; include more of the surrounding text so it occurs once")
	_, err = f.run(t, builtin.EditFileTool, builtin.EditFileArgs{Path: "src/a.go", OldText: "// three", NewText: "x"})
	require.EqualError(t, err, "old_text does not occur in src/a.go; read the file and copy the text exactly")
	_, err = f.run(t, builtin.EditFileTool, builtin.EditFileArgs{Path: "src/missing.go", OldText: "a", NewText: "b"})
	require.EqualError(t, err, "src/missing.go does not exist")
	b, err := os.ReadFile(filepath.Join(f.workspace, "src", "a.go"))
	require.NoError(t, err)
	require.Equal(t, "package a\n// one\n// one\n", string(b), "a refused edit changes nothing")

	out, err := f.run(t, builtin.EditFileTool, builtin.EditFileArgs{Path: "src/a.go", OldText: "a\n// one", NewText: "a\n// zero"})
	require.NoError(t, err)
	require.Equal(t, "edited src/a.go", out)
	b, err = os.ReadFile(filepath.Join(f.workspace, "src", "a.go"))
	require.NoError(t, err)
	require.Equal(t, "package a\n// zero\n// one\n", string(b))
}

func TestReadFileRanges(t *testing.T) {
	f := newFixture(t, builtin.Options{})
	var lines []string
	for i := 1; i <= 12; i++ {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	f.write(t, "twelve.txt", strings.Join(lines, "\n")) // no final newline
	f.write(t, "empty.txt", "")
	f.write(t, "bin.dat", "ab\x00cd\n")
	f.write(t, "long.txt", strings.Repeat("x", 2500)+"\nshort\n")

	for _, c := range []struct {
		args builtin.ReadFileArgs
		want string
	}{
		{builtin.ReadFileArgs{Path: "twelve.txt", Offset: 3, Limit: 2}, "     3\tline 3\n     4\tline 4\n[lines 3-4 of 12; read on with offset=5]\n"},
		{builtin.ReadFileArgs{Path: "twelve.txt", Offset: 11}, "    11\tline 11\n    12\tline 12\n"},
		{builtin.ReadFileArgs{Path: "twelve.txt", Offset: 12, Limit: 5}, "    12\tline 12\n"},
		{builtin.ReadFileArgs{Path: "twelve.txt", Limit: 1}, "     1\tline 1\n[lines 1-1 of 12; read on with offset=2]\n"},
		{builtin.ReadFileArgs{Path: "empty.txt"}, "empty.txt is empty"},
		{builtin.ReadFileArgs{Path: "long.txt"}, "     1\t" + strings.Repeat("x", 2000) + " [… 500 more bytes on this line]\n     2\tshort\n"},
	} {
		out, err := f.run(t, builtin.ReadFileTool, c.args)
		require.NoError(t, err, "%+v", c.args)
		require.Equal(t, c.want, out, "%+v", c.args)
	}
	out, err := f.run(t, builtin.ReadFileTool, builtin.ReadFileArgs{Path: "twelve.txt"})
	require.NoError(t, err)
	require.Equal(t, 12, strings.Count(out, "\n"), "the default limit reads a short file whole")

	_, err = f.run(t, builtin.ReadFileTool, builtin.ReadFileArgs{Path: "twelve.txt", Offset: 13})
	require.EqualError(t, err, "offset 13 is past the end of twelve.txt, which has 12 lines")
	_, err = f.run(t, builtin.ReadFileTool, builtin.ReadFileArgs{Path: "bin.dat"})
	require.EqualError(t, err, "bin.dat is a binary file")
	_, err = f.run(t, builtin.ReadFileTool, builtin.ReadFileArgs{Path: "src"})
	require.EqualError(t, err, "src is a directory; list it with list_files")
	_, err = f.run(t, builtin.ReadFileTool, builtin.ReadFileArgs{Path: "src/missing.go"})
	require.EqualError(t, err, "src/missing.go does not exist")

	tool, err := f.tools.Get(builtin.ReadFileTool)
	require.NoError(t, err)
	require.ErrorIs(t, tool.Validate([]byte(`{"path":"a","offset":-1}`)), agentsdk.ErrInvalidInput, "the schema refuses a negative offset")
}

func TestListFilesGlobs(t *testing.T) {
	f := newFixture(t, builtin.Options{})
	f.write(t, "main.go", "package main\n")
	f.write(t, "src/b_test.go", "package a\n")
	f.write(t, "src/deep/c.go", "package deep\n")
	f.write(t, "docs/readme.md", "# hi\n")

	for pattern, want := range map[string]string{
		"*.go":             "main.go (13 bytes)\nsrc/a.go (24 bytes)\nsrc/b_test.go (10 bytes)\nsrc/deep/c.go (13 bytes)",
		"**/*.go":          "main.go (13 bytes)\nsrc/a.go (24 bytes)\nsrc/b_test.go (10 bytes)\nsrc/deep/c.go (13 bytes)",
		"src/*.go":         "src/a.go (24 bytes)\nsrc/b_test.go (10 bytes)",
		"src/**/*_test.go": "src/b_test.go (10 bytes)",
		"docs":             "docs/",
		"*.rs":             `nothing in the workspace matches "*.rs"`,
	} {
		out, err := f.run(t, builtin.ListFilesTool, builtin.ListFilesArgs{Pattern: pattern})
		require.NoError(t, err, pattern)
		require.Equal(t, want, out, pattern)
	}
	out, err := f.run(t, builtin.ListFilesTool, builtin.ListFilesArgs{Path: "src", Pattern: "*/*.go"})
	require.NoError(t, err)
	require.Equal(t, "src/deep/c.go (13 bytes)", out, "a pattern with a slash is relative to path")

	_, err = f.run(t, builtin.ListFilesTool, builtin.ListFilesArgs{Pattern: "src/[a"})
	require.ErrorContains(t, err, `glob "src/[a" is malformed`)
	_, err = f.run(t, builtin.ListFilesTool, builtin.ListFilesArgs{Pattern: "src/**.go"})
	require.ErrorContains(t, err, "** must be a whole path element")
	_, err = f.run(t, builtin.ListFilesTool, builtin.ListFilesArgs{Path: "main.go"})
	require.EqualError(t, err, "main.go is a file, not a directory; read it with read_file")

	for i := range 600 {
		f.write(t, fmt.Sprintf("many/f%03d.txt", i), "x")
	}
	out, err = f.run(t, builtin.ListFilesTool, builtin.ListFilesArgs{Path: "many"})
	require.NoError(t, err)
	lines := strings.Split(out, "\n")
	require.Len(t, lines, 501)
	require.Equal(t, "many/f000.txt (1 bytes)", lines[0])
	require.Equal(t, "many/f499.txt (1 bytes)", lines[499])
	require.Equal(t, "[… 100 more entries not shown (600 in all); narrow the path or pattern]", lines[500])
}

func TestGrep(t *testing.T) {
	f := newFixture(t, builtin.Options{})
	f.write(t, "main.go", "package main\n\nfunc Main() {}\nfunc helper() {}\n")
	f.write(t, "src/util.go", "package a\nfunc Util() {}\n")
	f.write(t, "notes.txt", "FUNC in capitals\n")
	f.write(t, "blob.bin", "func\x00binary\n")
	f.write(t, ".git/objects/x", "func in git\n")

	for _, c := range []struct {
		args builtin.GrepArgs
		want string
	}{
		{builtin.GrepArgs{Pattern: `^func [A-Z]\w*\(`}, "main.go:3:func Main() {}\nsrc/util.go:2:func Util() {}\n[1 binary files skipped]\n"},
		{builtin.GrepArgs{Pattern: `func`, Glob: "*.txt", IgnoreCase: true}, "notes.txt:1:FUNC in capitals\n"},
		{builtin.GrepArgs{Pattern: `func`, Glob: "src/**/*.go"}, "src/util.go:2:func Util() {}\n"},
		{builtin.GrepArgs{Pattern: `func`, Path: "src"}, "src/util.go:2:func Util() {}\n"},
		{builtin.GrepArgs{Pattern: `package`, Path: "main.go"}, "main.go:1:package main\n"},
		{builtin.GrepArgs{Pattern: `\{\}$`, MaxResults: 2}, "main.go:3:func Main() {}\nmain.go:4:func helper() {}\n" +
			"[capped at 2 matches; there are more: narrow the pattern, path or glob, or raise max_results; 1 binary files skipped]\n"},
		{builtin.GrepArgs{Pattern: `binary`}, `no line in the workspace matches "binary" (1 binary files skipped)`},
		{builtin.GrepArgs{Pattern: `nothing`, Glob: "*.go"}, `no line in the workspace matches "nothing" in files matching "*.go"`},
	} {
		out, err := f.run(t, builtin.GrepTool, c.args)
		require.NoError(t, err, "%+v", c.args)
		require.Equal(t, c.want, out, "%+v", c.args)
	}
	_, err := f.run(t, builtin.GrepTool, builtin.GrepArgs{Pattern: `(unclosed`})
	require.EqualError(t, err, "pattern \"(unclosed\" is not a Go regular expression: missing closing ): `(unclosed`")

	var many strings.Builder
	for i := range 150 {
		fmt.Fprintf(&many, "match %d\n", i)
	}
	f.write(t, "many.txt", many.String())
	out, err := f.run(t, builtin.GrepTool, builtin.GrepArgs{Pattern: `^match`})
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, 101, "the default cap is 100 matches, then the note")
	require.Equal(t, "many.txt:100:match 99", lines[99])
	require.True(t, strings.HasPrefix(lines[100], "[capped at 100 matches; there are more"), lines[100])

	tool, err := f.tools.Get(builtin.GrepTool)
	require.NoError(t, err)
	require.ErrorIs(t, tool.Validate([]byte(`{"pattern":"x","max_results":5000}`)), agentsdk.ErrInvalidInput)
}

func TestWorkspacesAreSeparate(t *testing.T) {
	f := newFixture(t, builtin.Options{})
	tool, err := f.tools.Get(builtin.ListFilesTool)
	require.NoError(t, err)
	out, err := tool.Run(context.Background(), agentsdk.ToolInvocation{ExecutionID: "exec-2", Arguments: []byte(`{}`)})
	require.NoError(t, err)
	require.Equal(t, "the workspace is empty", out)
	_, err = tool.Run(context.Background(), agentsdk.ToolInvocation{ExecutionID: "../exec-1", Arguments: []byte(`{}`)})
	require.ErrorContains(t, err, "cannot name a workspace")
}
