package builtin

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agentree/agentree/agentsdk/tools/workspace"
)

const readFileDescription = "Returns lines of a text file, numbered like `cat -n`. " +
	"offset is the first line (1-based, default 1) and limit how many lines (default 2000); " +
	"the result says where to read on when the file has more."

// Limits of read_file.
const (
	defaultReadLines = 2000
	// maxLineBytes cuts very long lines (minified code, data) so one line
	// cannot fill the model's context.
	maxLineBytes = 2000
)

// ReadFileArgs are read_file's arguments.
type ReadFileArgs struct {
	Path   string `json:"path" jsonschema:"a file, relative to the workspace"`
	Offset int    `json:"offset,omitempty" jsonschema:"the first line to return, 1-based; default 1"`
	Limit  int    `json:"limit,omitempty" jsonschema:"how many lines to return; default 2000"`
}

// RefineSchema implements agentsdk.SchemaRefiner.
func (ReadFileArgs) RefineSchema(s *jsonschema.Schema) {
	nonEmpty(s, "path")
	atLeast(s, 0, "offset", "limit")
}

// files holds the file tools' options.
type files struct {
	// readLimit is the largest file read_file and edit_file open.
	readLimit int64
}

// open opens a file to read, refusing a directory and, before reading a
// byte of it, a file past the read limit (a sparse 64 GiB file costs no
// disk and would cost the worker 64 GiB of memory).
func (fl files) open(w *workspace.Workspace, p, rel, tool string) (*os.File, error) {
	f, err := w.Root().Open(rel)
	if err != nil {
		return nil, workspace.Friendly(p, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, workspace.Friendly(p, err)
	}
	switch {
	case fi.IsDir():
		f.Close()
		return nil, fmt.Errorf("%s is a directory; list it with %s", p, ListFilesTool)
	case !fi.Mode().IsRegular():
		f.Close()
		return nil, fmt.Errorf("%s is not a regular file", p)
	case fi.Size() > fl.readLimit:
		f.Close()
		return nil, fmt.Errorf("%s is %s, past the %s this worker's %s opens; look at parts of it with bash (head, tail, sed -n)",
			p, workspace.Bytes(fi.Size()), workspace.Bytes(fl.readLimit), tool)
	}
	return f, nil
}

func (fl files) readFile(_ context.Context, w *workspace.Workspace, a ReadFileArgs) (string, error) {
	rel, err := w.Resolve(a.Path)
	if err != nil {
		return "", err
	}
	f, err := fl.open(w, a.Path, rel, ReadFileTool)
	if err != nil {
		return "", err
	}
	defer f.Close()
	first := max(a.Offset, 1)
	limit := a.Limit
	if limit <= 0 {
		limit = defaultReadLines
	}
	var out strings.Builder
	lines, shownLines := 0, 0
	r := bufio.NewReader(f)
	if head, _ := r.Peek(sniffBytes); isBinary(head) {
		return "", fmt.Errorf("%s is a binary file", a.Path)
	}
	for {
		line, cut, err := readLine(r, maxLineBytes)
		if len(line) == 0 && err != nil {
			if err != io.EOF {
				return "", workspace.Friendly(a.Path, err)
			}
			break
		}
		lines++
		if lines >= first && shownLines < limit {
			shownLines++
			fmt.Fprintf(&out, "%6d\t%s", lines, bytes.TrimRight(line, "\r\n"))
			if cut > 0 {
				fmt.Fprintf(&out, " [… %d more bytes on this line]", cut)
			}
			out.WriteByte('\n')
		}
		if err == io.EOF {
			break
		}
	}
	switch {
	case lines == 0:
		return fmt.Sprintf("%s is empty", a.Path), nil
	case first > lines:
		return "", fmt.Errorf("offset %d is past the end of %s, which has %d lines", first, a.Path, lines)
	case first+shownLines-1 < lines:
		fmt.Fprintf(&out, "[lines %d-%d of %d; read on with offset=%d]\n", first, first+shownLines-1, lines, first+shownLines)
	}
	return out.String(), nil
}

// sniffBytes is how much of a file is looked at to tell text from
// binary, as git and grep do: a NUL byte there means binary.
const sniffBytes = 8000

func isBinary(head []byte) bool { return bytes.IndexByte(head, 0) >= 0 }

// readLine reads one line, newline included, keeping at most max bytes of
// it and counting the bytes it dropped.
func readLine(r *bufio.Reader, max int) (line []byte, dropped int, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if room := max - len(line); room > 0 {
			line = append(line, chunk[:min(room, len(chunk))]...)
			dropped += len(chunk) - min(room, len(chunk))
		} else {
			dropped += len(chunk)
		}
		if err != bufio.ErrBufferFull {
			if dropped > 0 && bytes.HasSuffix(chunk, []byte("\n")) {
				dropped--
			}
			return line, dropped, err
		}
	}
}

// WriteFileArgs are write_file's arguments.
type WriteFileArgs struct {
	Path    string `json:"path" jsonschema:"a file, relative to the workspace; its directories are created"`
	Content string `json:"content" jsonschema:"the file's whole new content"`
}

// RefineSchema implements agentsdk.SchemaRefiner.
func (WriteFileArgs) RefineSchema(s *jsonschema.Schema) { nonEmpty(s, "path") }

func writeFile(_ context.Context, w *workspace.Workspace, a WriteFileArgs) (string, error) {
	rel, err := w.Resolve(a.Path)
	if err != nil {
		return "", err
	}
	if rel == "." {
		return "", fmt.Errorf("%q is the workspace itself; name a file in it", a.Path)
	}
	if err := w.CheckQuota(); err != nil {
		return "", err
	}
	if dir := filepath.Dir(rel); dir != "." {
		if err := w.Root().MkdirAll(dir, workspace.DirMode); err != nil {
			return "", workspace.Friendly(a.Path, err)
		}
	}
	if err := w.Root().WriteFile(rel, []byte(a.Content), workspace.FileMode); err != nil {
		return "", workspace.Friendly(a.Path, err)
	}
	return fmt.Sprintf("wrote %d bytes to %s", len(a.Content), filepath.ToSlash(rel)), nil
}

// EditFileArgs are edit_file's arguments.
type EditFileArgs struct {
	Path    string `json:"path" jsonschema:"a file, relative to the workspace"`
	OldText string `json:"old_text" jsonschema:"text that occurs exactly once in the file"`
	NewText string `json:"new_text" jsonschema:"what replaces it"`
}

// RefineSchema implements agentsdk.SchemaRefiner.
func (EditFileArgs) RefineSchema(s *jsonschema.Schema) { nonEmpty(s, "path", "old_text") }

func (fl files) editFile(_ context.Context, w *workspace.Workspace, a EditFileArgs) (string, error) {
	rel, err := w.Resolve(a.Path)
	if err != nil {
		return "", err
	}
	if err := w.CheckQuota(); err != nil {
		return "", err
	}
	f, err := fl.open(w, a.Path, rel, EditFileTool)
	if err != nil {
		return "", err
	}
	b, err := io.ReadAll(io.LimitReader(f, fl.readLimit+1))
	f.Close()
	if err != nil {
		return "", workspace.Friendly(a.Path, err)
	}
	// Exactly once, so an edit never lands somewhere the model did not mean.
	switch n := strings.Count(string(b), a.OldText); n {
	case 0:
		return "", fmt.Errorf("old_text does not occur in %s; read the file and copy the text exactly", a.Path)
	case 1:
	default:
		return "", fmt.Errorf("old_text occurs %d times in %s; include more of the surrounding text so it occurs once", n, a.Path)
	}
	if err := w.Root().WriteFile(rel, []byte(strings.Replace(string(b), a.OldText, a.NewText, 1)), workspace.FileMode); err != nil {
		return "", workspace.Friendly(a.Path, err)
	}
	return fmt.Sprintf("edited %s", filepath.ToSlash(rel)), nil
}
