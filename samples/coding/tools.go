package coding

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agentree/agentree/agentsdk"
)

// The tools' names.
const (
	ListFilesTool = "list_files"
	ReadFileTool  = "read_file"
	WriteFileTool = "write_file"
	EditFileTool  = "edit_file"
)

// ToolNames are the sandbox's tools, for a Config.
var ToolNames = []string{ListFilesTool, ReadFileTool, WriteFileTool, EditFileTool}

// maxListed bounds list_files' output.
const maxListed = 200

// Tools returns the file tools, confined to the sandbox.
func (s Sandbox) Tools() []*agentsdk.Tool {
	return []*agentsdk.Tool{
		sandboxTool(s, ListFilesTool, "Lists the files under a directory of the workspace, recursively.", listFiles),
		sandboxTool(s, ReadFileTool, "Returns a file's content.", readFile),
		sandboxTool(s, WriteFileTool, "Writes a file, replacing it if it exists and creating its directories.", writeFile),
		sandboxTool(s, EditFileTool, "Replaces old_text, which must occur exactly once in the file, with new_text.", editFile),
	}
}

// sandboxTool builds a tool, its schema from T, that runs in the calling
// execution's workspace (the invocation holds the execution ID).
func sandboxTool[T any](s Sandbox, name, description string, fn func(w *workspace, args T) (string, error)) *agentsdk.Tool {
	return agentsdk.NewTool(name, description, func(_ context.Context, call agentsdk.ToolInvocation, args T) (string, error) {
		w, err := s.open(call.ExecutionID)
		if err != nil {
			return "", err
		}
		defer w.Close()
		return fn(w, args)
	})
}

// nonEmpty requires each named string property to be non-empty.
func nonEmpty(s *jsonschema.Schema, names ...string) {
	for _, n := range names {
		s.Properties[n].MinLength = jsonschema.Ptr(1)
	}
}

// ListFilesArgs are list_files' arguments.
type ListFilesArgs struct {
	Path string `json:"path,omitempty" jsonschema:"a directory relative to the workspace; default the workspace itself"`
}

// PathArgs are read_file's arguments.
type PathArgs struct {
	Path string `json:"path"`
}

// RefineSchema implements agentsdk.SchemaRefiner.
func (PathArgs) RefineSchema(s *jsonschema.Schema) { nonEmpty(s, "path") }

func listFiles(w *workspace, a ListFilesArgs) (string, error) {
	rel, err := w.resolve(a.Path)
	if err != nil {
		return "", err
	}
	var lines []string
	err = fs.WalkDir(w.root.FS(), filepath.ToSlash(rel), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == filepath.ToSlash(rel) && d.IsDir() {
			return nil
		}
		if len(lines) == maxListed {
			lines = append(lines, fmt.Sprintf("… more than %d entries; list a subdirectory", maxListed))
			return fs.SkipAll
		}
		if d.IsDir() {
			lines = append(lines, p+"/")
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		lines = append(lines, fmt.Sprintf("%s (%d bytes)", p, info.Size()))
		return nil
	})
	if err != nil {
		return "", friendly(a.Path, err)
	}
	if len(lines) == 0 {
		return fmt.Sprintf("%s is empty", shown(rel)), nil
	}
	return strings.Join(lines, "\n"), nil
}

func readFile(w *workspace, a PathArgs) (string, error) {
	_, b, err := w.read(a.Path)
	return string(b), err
}

// WriteFileArgs are write_file's arguments.
type WriteFileArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// RefineSchema implements agentsdk.SchemaRefiner.
func (WriteFileArgs) RefineSchema(s *jsonschema.Schema) { nonEmpty(s, "path") }

func writeFile(w *workspace, a WriteFileArgs) (string, error) {
	rel, err := w.resolve(a.Path)
	if err != nil {
		return "", err
	}
	if dir := filepath.Dir(rel); dir != "." {
		if err := w.root.MkdirAll(dir, 0o755); err != nil {
			return "", friendly(a.Path, err)
		}
	}
	if err := w.root.WriteFile(rel, []byte(a.Content), 0o644); err != nil {
		return "", friendly(a.Path, err)
	}
	return fmt.Sprintf("wrote %d bytes to %s", len(a.Content), filepath.ToSlash(rel)), nil
}

// EditFileArgs are edit_file's arguments.
type EditFileArgs struct {
	Path    string `json:"path"`
	OldText string `json:"old_text"`
	NewText string `json:"new_text"`
}

// RefineSchema implements agentsdk.SchemaRefiner.
func (EditFileArgs) RefineSchema(s *jsonschema.Schema) { nonEmpty(s, "path", "old_text") }

func editFile(w *workspace, a EditFileArgs) (string, error) {
	rel, b, err := w.read(a.Path)
	if err != nil {
		return "", err
	}
	// Exactly once, so an edit never lands somewhere the model did not mean.
	switch n := strings.Count(string(b), a.OldText); n {
	case 0:
		return "", fmt.Errorf("old_text does not occur in %s; read the file and copy the text exactly", a.Path)
	case 1:
	default:
		return "", fmt.Errorf("old_text occurs %d times in %s; include more of the surrounding text so it occurs once", n, a.Path)
	}
	if err := w.root.WriteFile(rel, []byte(strings.Replace(string(b), a.OldText, a.NewText, 1)), 0o644); err != nil {
		return "", friendly(a.Path, err)
	}
	return fmt.Sprintf("edited %s", filepath.ToSlash(rel)), nil
}

// read resolves p and reads the file.
func (w *workspace) read(p string) (rel string, content []byte, err error) {
	if rel, err = w.resolve(p); err != nil {
		return "", nil, err
	}
	if content, err = w.root.ReadFile(rel); err != nil {
		return "", nil, friendly(p, err)
	}
	return rel, content, nil
}

// friendly turns a file-system error into what the model needs to know,
// without the host's paths.
func friendly(p string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s does not exist", p)
	case errors.Is(err, fs.ErrExist):
		return fmt.Errorf("%s already exists", p)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %s failed: %v", p, pe.Op, pe.Err)
	}
	return fmt.Errorf("%s: %v", p, err)
}

func shown(rel string) string {
	if rel == "." {
		return "the workspace"
	}
	return filepath.ToSlash(rel)
}
