package layout_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// sampleProgram is a sample's worker or starter directory, which the
// README lists once for all samples as samples/<name>/worker and
// samples/<name>/starter.
var sampleProgram = regexp.MustCompile(`^samples/[^/]+/(worker|starter)$`)

// layoutRows are the package paths the first column of the README's
// Layout table names.
func layoutRows(t *testing.T) []string {
	b, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	text := string(b)
	start := strings.Index(text, "\n## Layout\n")
	require.NotEqual(t, -1, start, "README.md has no Layout section")
	section := text[start+1:]
	if end := strings.Index(section[3:], "\n## "); end != -1 {
		section = section[:end+3]
	}
	var rows []string
	for line := range strings.Lines(section) {
		cells := strings.Split(line, "|")
		if len(cells) < 3 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(cells[1], -1) {
			rows = append(rows, strings.TrimSuffix(m[1], "/"))
		}
	}
	require.NotEmpty(t, rows, "the Layout section has no table")
	return rows
}

// TestReadmeListsEveryPackage: the README's Layout table has a line for
// every package of the module, and names no directory that is gone, so
// the map a newcomer reads first is the tree as it is.
func TestReadmeListsEveryPackage(t *testing.T) {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	cmd := exec.Command("go", "list", "-f", "{{.Dir}}", "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	require.NoError(t, err)
	rows := layoutRows(t)
	listed := map[string]bool{}
	for _, r := range rows {
		listed[r] = true
	}
	packages := 0
	for dir := range strings.Lines(string(out)) {
		rel, err := filepath.Rel(root, strings.TrimSpace(dir))
		require.NoError(t, err)
		rel = filepath.ToSlash(rel)
		packages++
		if m := sampleProgram.FindStringSubmatch(rel); m != nil {
			rel = "samples/<name>/" + m[1]
		}
		require.True(t, listed[rel], "README.md's Layout does not list the package %s: add a line for it", rel)
	}
	require.Greater(t, packages, 40, "go list ./... listed the module's packages")
	for _, r := range rows {
		if strings.Contains(r, "<name>") {
			continue
		}
		fi, err := os.Stat(filepath.Join(root, r))
		require.NoError(t, err, "README.md's Layout lists %s, which does not exist", r)
		require.True(t, fi.IsDir(), "README.md's Layout lists %s, which is not a directory", r)
	}
}
