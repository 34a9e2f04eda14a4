package builtin

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentree/agentree/agentsdk/tools/workspace"
)

const listFilesDescription = "Lists files and directories of the workspace, sorted, recursively. " +
	"pattern is a glob: without a slash it matches names in any directory (*.go), with one the path " +
	"relative to path (src/**/*_test.go; ** is any number of directories). At most 500 entries."

// maxListed bounds list_files' output.
const maxListed = 500

// ListFilesArgs are list_files' arguments.
type ListFilesArgs struct {
	Path    string `json:"path,omitempty" jsonschema:"a directory relative to the workspace; default the workspace itself"`
	Pattern string `json:"pattern,omitempty" jsonschema:"a glob the entries must match; default every entry"`
}

func listFiles(ctx context.Context, w *workspace.Workspace, a ListFilesArgs) (string, error) {
	rel, err := w.Resolve(a.Path)
	if err != nil {
		return "", err
	}
	var g *glob
	if a.Pattern != "" {
		c, err := compileGlob(a.Pattern)
		if err != nil {
			return "", err
		}
		g = &c
	}
	base := filepath.ToSlash(rel)
	var lines []string
	notDir := false
	err = fs.WalkDir(w.FS(), base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if p == base {
			notDir = !d.IsDir()
			return nil
		}
		if g != nil && !g.match(relativeTo(base, p)) {
			return nil
		}
		switch {
		case d.IsDir():
			lines = append(lines, p+"/")
		case d.Type()&fs.ModeSymlink != 0:
			lines = append(lines, p+" (symlink)")
		default:
			info, err := d.Info()
			if err != nil {
				return err
			}
			lines = append(lines, fmt.Sprintf("%s (%d bytes)", p, info.Size()))
		}
		return nil
	})
	switch {
	case err != nil:
		return "", workspace.Friendly(shown(base), err)
	case notDir:
		return "", fmt.Errorf("%s is a file, not a directory; read it with %s", shown(base), ReadFileTool)
	}
	if len(lines) == 0 {
		if g != nil {
			return fmt.Sprintf("nothing in %s matches %q", shown(base), a.Pattern), nil
		}
		return fmt.Sprintf("%s is empty", shown(base)), nil
	}
	slices.Sort(lines)
	if n := len(lines); n > maxListed {
		lines = append(lines[:maxListed], fmt.Sprintf("[… %d more entries not shown (%d in all); narrow the path or pattern]", n-maxListed, n))
	}
	return strings.Join(lines, "\n"), nil
}

// relativeTo is p relative to the walk's base, for matching a pattern.
func relativeTo(base, p string) string {
	if base == "." {
		return p
	}
	r := strings.TrimPrefix(p, base+"/")
	return path.Clean(r)
}
