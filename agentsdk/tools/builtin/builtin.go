package builtin

import (
	"context"
	"log/slog"

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
	// Quota is the most disk a workspace may use, in bytes; default
	// DefaultQuota; negative: none. Past it, write_file and edit_file are
	// refused and a bash call fails (killed if it is still running) until
	// files are removed.
	Quota int64
	// ReadLimit is the largest file read_file and edit_file open, in
	// bytes (they check before reading); default DefaultReadLimit.
	ReadLimit int64
	// Bash configures the bash tool.
	Bash BashOptions
	// Logger is told why bash is not offered, and warned when it runs
	// without isolation; default slog.Default().
	Logger *slog.Logger
}

// Defaults of Options.
const (
	DefaultQuota     = 4 << 30
	DefaultReadLimit = 64 << 20
)

func (o Options) withDefaults() Options {
	if o.Root == "" {
		o.Root = workspace.DefaultRoot()
	}
	if o.Quota == 0 {
		o.Quota = DefaultQuota
	}
	if o.ReadLimit == 0 {
		o.ReadLimit = DefaultReadLimit
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

func (o Options) workspaces() workspace.Workspaces {
	return workspace.Workspaces{Root: o.Root, Quota: max(o.Quota, 0)}
}

// Tools returns the tool set. Each call returns new values, so workers and
// tests never share a tool's compiled schema. It fails on options that
// cannot work: a deny pattern that is not a regular expression, a default
// timeout above the maximum, an unknown isolation level.
//
// Bash is offered only when its isolation level runs on this host: where
// it does not (no bwrap, no user namespaces), the set holds the file
// tools alone and the logger says why. Isolation none, which the
// operator must choose, is logged as a warning.
func Tools(opts Options) ([]*agentsdk.Tool, error) {
	opts = opts.withDefaults()
	ws := opts.workspaces()
	b, unavailable, err := newBash(ws, opts.Bash)
	if err != nil {
		return nil, err
	}
	tools := FileTools(opts)
	if unavailable != nil {
		opts.Logger.Error("builtin tools: bash is not offered: its isolation cannot run on this worker", "reason", unavailable.Error())
		return tools, nil
	}
	if b.jail.iso.Level == IsolationNone {
		opts.Logger.Warn("builtin tools: bash runs commands WITHOUT isolation (isolation: none): " +
			"a command reads whatever the worker's user can, its keys and configuration included")
	}
	return append(tools, b.tool()), nil
}

// withPolicy sets a tool's default policy and risk.
func withPolicy(t *agentsdk.Tool, p agentsdk.ToolPolicy, risk string) *agentsdk.Tool {
	t.Policy, t.Risk = p, risk
	return t
}

// readOnly marks t as changing nothing (agentsdk.Tool.ReadOnly).
func readOnly(t *agentsdk.Tool) *agentsdk.Tool {
	t.ReadOnly = true
	return t
}

// FileTools returns the file tools alone (no bash), confined to the
// options' workspaces. The readers default to auto; the writers, like
// bash, to ask.
func FileTools(opts Options) []*agentsdk.Tool {
	opts = opts.withDefaults()
	ws := opts.workspaces()
	fs := files{readLimit: opts.ReadLimit}
	return []*agentsdk.Tool{
		readOnly(withPolicy(inWorkspace(ws, ListFilesTool, listFilesDescription, listFiles), agentsdk.PolicyAuto, agentsdk.RiskLow)),
		readOnly(withPolicy(inWorkspace(ws, ReadFileTool, readFileDescription, fs.readFile), agentsdk.PolicyAuto, agentsdk.RiskLow)),
		readOnly(withPolicy(inWorkspace(ws, GrepTool, grepDescription, grep), agentsdk.PolicyAuto, agentsdk.RiskLow)),
		withPolicy(inWorkspace(ws, WriteFileTool, "Writes a file, replacing it if it exists and creating its directories.", writeFile),
			agentsdk.PolicyAsk, agentsdk.RiskMedium),
		withPolicy(inWorkspace(ws, EditFileTool, "Replaces old_text, which must occur exactly once in the file, with new_text. "+
			"Read the file first and copy old_text exactly, with enough surrounding lines to make it unique.", fs.editFile),
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
