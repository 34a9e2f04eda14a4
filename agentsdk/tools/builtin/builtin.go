package builtin

import (
	"context"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/tools/workspace"
)

// ToolSet is the name a worker configuration enables these tools by.
const ToolSet = "builtin"

// The tools' names, as configurations and models call them.
const (
	ReadFileTool  = "read_file"
	WriteFileTool = "write_file"
	EditFileTool  = "edit_file"
	ListFilesTool = "list_files"
	GrepTool      = "grep"
	BashTool      = "bash"
)

// ToolNames are the set's tools, for an agent's configuration.
var ToolNames = []string{ListFilesTool, ReadFileTool, GrepTool, WriteFileTool, EditFileTool, BashTool}

// FileToolNames are the tools that touch only the workspace's files: the
// set without bash.
var FileToolNames = []string{ListFilesTool, ReadFileTool, GrepTool, WriteFileTool, EditFileTool}

// Options configure the tool set. The zero value of each field means its
// default, given in its comment.
type Options struct {
	// Root holds one workspace per execution, Root/<execution ID>;
	// default workspace.DefaultRoot().
	Root string
	// Bash configures the bash tool.
	Bash BashOptions
}

// Tools returns the tool set. Each call returns new values, so workers and
// tests never share a tool's compiled schema. It fails on options that
// cannot work: a deny pattern that is not a regular expression, a default
// timeout above the maximum, or isolation required where the host has
// none.
func Tools(opts Options) ([]*agentsdk.Tool, error) {
	ws := workspace.Workspaces{Root: opts.Root}
	if ws.Root == "" {
		ws.Root = workspace.DefaultRoot()
	}
	b, err := newBash(ws, opts.Bash)
	if err != nil {
		return nil, err
	}
	return append(FileTools(ws), b.tool()), nil
}

// withPolicy sets a tool's default policy and risk.
func withPolicy(t *agentsdk.Tool, p agentsdk.ToolPolicy, risk string) *agentsdk.Tool {
	t.Policy, t.Risk = p, risk
	return t
}

// FileTools returns the file tools alone (no bash), confined to ws. The
// readers default to auto; the writers, like bash, to ask.
func FileTools(ws workspace.Workspaces) []*agentsdk.Tool {
	return []*agentsdk.Tool{
		withPolicy(inWorkspace(ws, ListFilesTool, listFilesDescription, listFiles), agentsdk.PolicyAuto, agentsdk.RiskLow),
		withPolicy(inWorkspace(ws, ReadFileTool, readFileDescription, readFile), agentsdk.PolicyAuto, agentsdk.RiskLow),
		withPolicy(inWorkspace(ws, GrepTool, grepDescription, grep), agentsdk.PolicyAuto, agentsdk.RiskLow),
		withPolicy(inWorkspace(ws, WriteFileTool, "Writes a file, replacing it if it exists and creating its directories.", writeFile),
			agentsdk.PolicyAsk, agentsdk.RiskMedium),
		withPolicy(inWorkspace(ws, EditFileTool, "Replaces old_text, which must occur exactly once in the file, with new_text. "+
			"Read the file first and copy old_text exactly, with enough surrounding lines to make it unique.", editFile),
			agentsdk.PolicyAsk, agentsdk.RiskMedium),
	}
}

// inWorkspace builds a tool, its schema from T, that runs in the calling
// execution's workspace (the invocation holds the execution ID).
func inWorkspace[T any](ws workspace.Workspaces, name, description string, fn func(ctx context.Context, w *workspace.Workspace, args T) (string, error)) *agentsdk.Tool {
	return agentsdk.NewTool(name, description, func(ctx context.Context, call agentsdk.ToolInvocation, args T) (string, error) {
		w, err := ws.Open(call.ExecutionID)
		if err != nil {
			return "", err
		}
		defer w.Close()
		return fn(ctx, w, args)
	})
}

// nonEmpty requires each named string property to be non-empty.
func nonEmpty(s *jsonschema.Schema, names ...string) {
	for _, n := range names {
		s.Properties[n].MinLength = jsonschema.Ptr(1)
	}
}

// atLeast sets the minimum of each named number property.
func atLeast(s *jsonschema.Schema, min float64, names ...string) {
	for _, n := range names {
		s.Properties[n].Minimum = jsonschema.Ptr(min)
	}
}

func shown(rel string) string {
	if rel == "." {
		return "the workspace"
	}
	return rel
}
