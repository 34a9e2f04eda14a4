package builtin

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agentree/agentree/agentsdk/tools/workspace"
)

const grepDescription = "Searches the workspace's text files for a Go regular expression (RE2 syntax), " +
	"line by line, and returns matches as path:line:text, files in sorted order. glob filters the files " +
	"(*.go in any directory, or src/**/*.go). Binary files are skipped. At most max_results matches " +
	"(default 100); the result says when there were more."

// Limits of grep.
const (
	defaultGrepResults = 100
	maxGrepResults     = 1000
	// maxGrepLine cuts a matching line in the result.
	maxGrepLine = 300
	// maxGrepFile skips files too large to be source a model reads.
	maxGrepFile = 32 << 20
)

// GrepArgs are grep's arguments.
type GrepArgs struct {
	Pattern    string `json:"pattern" jsonschema:"a Go regular expression (RE2), matched against each line"`
	Path       string `json:"path,omitempty" jsonschema:"a directory or file relative to the workspace; default the workspace"`
	Glob       string `json:"glob,omitempty" jsonschema:"only files matching this glob, e.g. *.go or src/**/*.ts"`
	IgnoreCase bool   `json:"ignore_case,omitempty" jsonschema:"match regardless of case"`
	MaxResults int    `json:"max_results,omitempty" jsonschema:"the most matches to return; default 100, at most 1000"`
}

// RefineSchema implements agentsdk.SchemaRefiner.
func (GrepArgs) RefineSchema(s *jsonschema.Schema) {
	nonEmpty(s, "pattern")
	atLeast(s, 0, "max_results")
	s.Properties["max_results"].Maximum = jsonschema.Ptr(float64(maxGrepResults))
}

// grepRun is one search's state.
type grepRun struct {
	re       *regexp.Regexp
	glob     *glob
	base     string
	limit    int
	out      strings.Builder
	matches  int
	files    int
	more     bool
	binaries int
	large    int
}

func grep(ctx context.Context, w *workspace.Workspace, a GrepArgs) (string, error) {
	expr := a.Pattern
	if a.IgnoreCase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return "", fmt.Errorf("pattern %q is not a Go regular expression: %v", a.Pattern, regexpReason(err))
	}
	rel, err := w.Resolve(a.Path)
	if err != nil {
		return "", err
	}
	g := &grepRun{re: re, base: filepath.ToSlash(rel), limit: a.MaxResults}
	if g.limit <= 0 {
		g.limit = defaultGrepResults
	}
	if a.Glob != "" {
		c, err := compileGlob(a.Glob)
		if err != nil {
			return "", err
		}
		g.glob = &c
	}
	// WalkDir visits a directory's entries in lexical order; collected
	// that way the matches come out sorted by path with no second pass.
	err = fs.WalkDir(w.FS(), g.base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" && p != g.base {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || (g.glob != nil && !g.glob.match(relativeTo(g.base, p))) {
			return nil
		}
		return g.file(w.FS(), p)
	})
	if err != nil && err != fs.SkipAll {
		return "", workspace.Friendly(shown(g.base), err)
	}
	return g.result(a), nil
}

// file searches one file; fs.SkipAll once the cap is passed.
func (g *grepRun) file(fsys fs.FS, p string) error {
	f, err := fsys.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > maxGrepFile {
		g.large++
		return nil
	}
	r := bufio.NewReader(f)
	if head, _ := r.Peek(sniffBytes); isBinary(head) {
		g.binaries++
		return nil
	}
	found := false
	for n := 1; ; n++ {
		line, _, err := readLine(r, maxLineBytes*8)
		line = bytes.TrimRight(line, "\r\n")
		if len(line) > 0 && g.re.Match(line) {
			if g.matches == g.limit {
				g.more = true
				return fs.SkipAll
			}
			g.matches++
			found = true
			text := string(line)
			if len(text) > maxGrepLine {
				text = text[:maxGrepLine] + " […]"
			}
			fmt.Fprintf(&g.out, "%s:%d:%s\n", p, n, text)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	if found {
		g.files++
	}
	return nil
}

func (g *grepRun) result(a GrepArgs) string {
	var notes []string
	if g.more {
		notes = append(notes, fmt.Sprintf("capped at %d matches; there are more: narrow the pattern, path or glob, or raise max_results", g.limit))
	}
	if g.binaries > 0 {
		notes = append(notes, fmt.Sprintf("%d binary files skipped", g.binaries))
	}
	if g.large > 0 {
		notes = append(notes, fmt.Sprintf("%d files over %d MiB skipped", g.large, maxGrepFile>>20))
	}
	if g.matches == 0 {
		s := fmt.Sprintf("no line in %s matches %q", shown(g.base), a.Pattern)
		if g.glob != nil {
			s += fmt.Sprintf(" in files matching %q", a.Glob)
		}
		if len(notes) > 0 {
			s += " (" + strings.Join(notes, "; ") + ")"
		}
		return s
	}
	if len(notes) > 0 {
		fmt.Fprintf(&g.out, "[%s]\n", strings.Join(notes, "; "))
	}
	return g.out.String()
}

// regexpReason keeps the reason of a regexp error, in RE2's words.
func regexpReason(err error) string {
	var se *syntax.Error
	if errors.As(err, &se) {
		return fmt.Sprintf("%s: `%s`", se.Code, se.Expr)
	}
	return err.Error()
}
