package coding

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/agentsdk/tools/builtin"
)

// TaskQueue is the coding sample's task queue.
const TaskQueue = "agentree-coding"

// Prompt is the task the starter gives.
const Prompt = `Create a Go package "greet" with a function Hello(name string) string, then make the greeting end with an exclamation mark.`

// SystemPrompt is for a real model; the scripted session follows it.
const SystemPrompt = `You are a careful coding agent. Your tools work in a workspace directory and
refuse paths outside it. Look before you write, make small edits with edit_file,
and read a file back after changing it.`

// maxTurns is ample for the scripted session's five turns.
const maxTurns = 12

// ToolNames are the tools the agent is given: the product's built-ins.
var ToolNames = builtin.ToolNames

// Policy is the sample's tool policy: the readers run on their own; every
// call that changes the workspace waits for a person's approval.
var Policy = agentsdk.Policies{
	builtin.WriteFileTool: agentsdk.PolicyAsk,
	builtin.EditFileTool:  agentsdk.PolicyAsk,
	builtin.BashTool:      agentsdk.PolicyAsk,
}

// Config is the coding agent's configuration: the react-agent, one-shot,
// with the built-in tools under Policy. With no models it uses the
// scripted one.
func Config(models ...agentsdk.ModelRef) agentsdk.Config {
	if len(models) == 0 {
		models = []agentsdk.ModelRef{scripted.Model("")}
	}
	return agentsdk.Config{SystemPrompt: SystemPrompt, Models: models, Tools: ToolNames, Mode: agentsdk.ModeOneShot,
		MaxTurns: maxTurns, ToolPolicy: Policy}
}

// DefaultDir is where the worker and starter keep workspaces unless told
// otherwise.
func DefaultDir() string { return filepath.Join(os.TempDir(), "agentree-coding") }

// Tools are the built-in tools with one workspace per execution under dir.
func Tools(dir string) ([]*agentsdk.Tool, error) { return builtin.Tools(builtin.Options{Root: dir}) }

// GreetPath and the texts below are what the scripted session writes.
const (
	GreetPath   = "greet/greet.go"
	greetSource = "package greet\n\n// Hello greets name.\nfunc Hello(name string) string {\n\treturn \"Hello, \" + name\n}\n"
	// FinalAnswer is the scripted session's last message.
	FinalAnswer = `Done: greet/greet.go defines Hello, which now returns "Hello, <name>!".`
)

// Script is a scripted coding session: it looks at the workspace, writes
// the package, edits it, reads it back and reports.
func Script() scripted.Script {
	return scripted.Turns(
		scripted.Turn{Text: "Let me look at the workspace first.", ToolCalls: []agentsdk.ToolCall{
			toolCall("call_list", builtin.ListFilesTool, builtin.ListFilesArgs{Path: "."})}},
		scripted.Turn{Text: "It is empty, so I'll write the package.", ToolCalls: []agentsdk.ToolCall{
			toolCall("call_write", builtin.WriteFileTool, builtin.WriteFileArgs{Path: GreetPath, Content: greetSource})}},
		scripted.Turn{Text: "Now the exclamation mark, as a small edit.", ToolCalls: []agentsdk.ToolCall{
			toolCall("call_edit", builtin.EditFileTool, builtin.EditFileArgs{Path: GreetPath, OldText: `"Hello, " + name`, NewText: `"Hello, " + name + "!"`})}},
		scripted.Turn{Text: "Reading it back to check.", ToolCalls: []agentsdk.ToolCall{
			toolCall("call_read", builtin.ReadFileTool, builtin.ReadFileArgs{Path: GreetPath})}},
		scripted.Turn{Text: FinalAnswer},
	)
}

func toolCall(id, name string, args any) agentsdk.ToolCall {
	b, err := json.Marshal(args)
	if err != nil {
		panic(err)
	}
	return agentsdk.ToolCall{ID: id, Name: name, Arguments: b}
}
