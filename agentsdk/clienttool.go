package agentsdk

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
)

// Client tools are tools the client of an execution runs itself (the
// OpenAI Responses API's function tools): the model is offered them beside
// the worker's tools, and a call to one is not run by any worker. The
// execution waits, WAITING with reason WaitClientTool, until the client
// sends each call's output as a toolResult signal; the turn then goes on
// with the next model call, in the same execution.

// SignalToolResult is the signal that carries a client tool call's
// output; its value is a ToolResultValue.
const SignalToolResult = "toolResult"

// WaitClientTool is the reason an execution waits for client tool calls'
// outputs.
const WaitClientTool = "client_tool"

// ToolResultValue is the value of a toolResult signal.
type ToolResultValue struct {
	ToolCallID string `json:"toolCallId"`
	Output     string `json:"output"`
	// IsError tells the model the call failed.
	IsError bool `json:"isError,omitempty"`
}

// Bounds of Config.ClientTools: they travel with the configuration, and
// every model call sends them.
const (
	MaxClientTools           = 64
	MaxClientToolDescription = 4096  // characters
	MaxClientToolSchema      = 16384 // bytes of JSON
	// MaxToolResultOutput bounds a toolResult signal's output, in bytes.
	MaxToolResultOutput = 1 << 20
)

// toolName is what providers accept as a function name.
var toolName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// IsClientTool reports whether name is one of the configuration's client
// tools.
func (c Config) IsClientTool(name string) bool {
	return slices.ContainsFunc(c.ClientTools, func(t ToolSpec) bool { return t.Name == name })
}

// clientToolProblems lists what is wrong with the client tools
// (ClientToolProblems) and any named as a worker tool: one in Tools, or
// in worker (the worker tools' names, when known).
func (c Config) clientToolProblems(worker Tools) []string {
	problems := ClientToolProblems(c.ClientTools, "clientTools")
	for i, t := range c.ClientTools {
		_, known := worker[t.Name]
		if slices.Contains(c.Tools, t.Name) || known {
			problems = append(problems, fmt.Sprintf("clientTools[%d].name %q is the name of a worker tool", i, t.Name))
		}
	}
	return problems
}

// ClientToolProblems lists what is wrong with client tool specs, each
// named as field[i] (field "" for a caller that adds its own prefix: then
// [i] is left out): a bad or repeated name, a schema that is not an
// object schema, or past the bounds.
func ClientToolProblems(specs []ToolSpec, field string) []string {
	var problems []string
	if len(specs) > MaxClientTools {
		problems = append(problems, fmt.Sprintf("%s has %d tools, over the %d allowed", field, len(specs), MaxClientTools))
	}
	seen := map[string]bool{}
	for i, t := range specs {
		f := fmt.Sprintf("%s[%d]", field, i)
		if field == "" {
			f = ""
		}
		switch {
		case !toolName.MatchString(t.Name):
			problems = append(problems, fmt.Sprintf("%s.name must be 1 to 64 letters, digits, _ or -; got %q", f, t.Name))
		case seen[t.Name]:
			problems = append(problems, fmt.Sprintf("%s.name %q is given twice", f, t.Name))
		}
		seen[t.Name] = true
		if n := len([]rune(t.Description)); n > MaxClientToolDescription {
			problems = append(problems, fmt.Sprintf("%s.description is %d characters, over the %d allowed", f, n, MaxClientToolDescription))
		}
		if p := schemaProblem(t.Parameters); p != "" {
			problems = append(problems, f+".parameters "+p)
		}
	}
	return problems
}

// schemaProblem says why raw is not a JSON Schema of an arguments object
// ("" when it is one).
func schemaProblem(raw json.RawMessage) string {
	if len(raw) > MaxClientToolSchema {
		return fmt.Sprintf("is %d bytes, over the %d allowed", len(raw), MaxClientToolSchema)
	}
	var s struct {
		Type any `json:"type"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &s) != nil {
		return "must be a JSON Schema object"
	}
	if s.Type != "object" {
		return `must be an object schema ("type": "object")`
	}
	return ""
}
