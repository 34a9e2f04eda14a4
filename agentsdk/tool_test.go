package agentsdk_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
)

const readSchema = `{"type":"object","properties":{"path":{"type":"string"},"lines":{"type":"integer","minimum":1}},"required":["path"],"additionalProperties":false}`

func noop(context.Context, agentsdk.ToolInvocation) (string, error) { return "", nil }

func tool(name, schema string) *agentsdk.Tool {
	return &agentsdk.Tool{Name: name, Parameters: json.RawMessage(schema), Run: noop}
}

func TestToolValidateAcceptsArgumentsMatchingTheSchema(t *testing.T) {
	read := tool("read", readSchema)
	for _, args := range []string{`{"path":"a.txt"}`, `{"path":"a.txt","lines":3}`, ` {"lines": 1, "path": "b"} `} {
		require.NoError(t, read.Validate(json.RawMessage(args)), args)
	}
}

func TestToolValidateRejectsBadArguments(t *testing.T) {
	read := tool("read", readSchema)
	for name, args := range map[string]string{
		"not JSON":            `{"path":`,
		"not JSON at all":     `path=a.txt`,
		"wrong type":          `{"path":42}`,
		"wrong nested type":   `{"path":"a","lines":"three"}`,
		"below minimum":       `{"path":"a","lines":0}`,
		"missing required":    `{"lines":3}`,
		"unknown property":    `{"path":"a","mode":"r"}`,
		"not an object":       `["a.txt"]`,
		"empty means {}":      ``,
		"whitespace means {}": " \n\t",
	} {
		err := read.Validate(json.RawMessage(args))
		require.ErrorIs(t, err, agentsdk.ErrInvalidInput, name)
		require.ErrorContains(t, err, "arguments of read", name)
	}
	require.ErrorContains(t, read.Validate(json.RawMessage(`{"path":`)), "not JSON")
}

func TestToolValidateWithoutParametersTakesAnyObject(t *testing.T) {
	ls := &agentsdk.Tool{Name: "ls", Run: noop}
	require.JSONEq(t, `{"type":"object","properties":{}}`, string(ls.Spec().Parameters))
	require.NoError(t, ls.Validate(nil))
	require.NoError(t, ls.Validate(json.RawMessage(`{"anything":[1,2]}`)))
	require.ErrorIs(t, ls.Validate(json.RawMessage(`"a string"`)), agentsdk.ErrInvalidInput)
}

func TestToolValidateReportsABadSchema(t *testing.T) {
	for name, schema := range map[string]string{
		"not JSON":     `{"type":`,
		"not a schema": `{"type":"nonsense"}`,
		"bad keyword":  `{"type":"object","required":"path"}`,
	} {
		bad := tool("bad", schema)
		err := bad.Validate(json.RawMessage(`{}`))
		require.Error(t, err, name)
		require.ErrorContains(t, err, "tool bad: schema", name)
		require.Equal(t, err, bad.Validate(json.RawMessage(`{}`)), "%s: compiled once, same answer", name)
	}
}

func TestNewToolsIndexesByName(t *testing.T) {
	read, ls := tool("read", readSchema), &agentsdk.Tool{Name: "ls", Run: noop}
	tools, err := agentsdk.NewTools(read, ls)
	require.NoError(t, err)
	require.Equal(t, []string{"ls", "read"}, tools.Names())

	got, err := tools.Get("read")
	require.NoError(t, err)
	require.Same(t, read, got)
	_, err = tools.Get("write")
	require.ErrorIs(t, err, agentsdk.ErrInvalidInput)
	require.ErrorContains(t, err, `unknown tool "write"`)

	specs, err := tools.Specs([]string{"read", "ls"})
	require.NoError(t, err)
	require.Equal(t, []string{"read", "ls"}, []string{specs[0].Name, specs[1].Name})
	_, err = tools.Specs([]string{"ls", "write"})
	require.ErrorIs(t, err, agentsdk.ErrInvalidInput)
}

func TestNewToolsRejectsDuplicatesAndBadTools(t *testing.T) {
	for name, c := range map[string]struct {
		tools []*agentsdk.Tool
		want  string
	}{
		"duplicate":       {[]*agentsdk.Tool{tool("read", readSchema), tool("read", `{}`)}, `duplicate tool "read"`},
		"schema not JSON": {[]*agentsdk.Tool{tool("read", `{"type"`)}, "tool read: schema is not JSON"},
		"invalid schema":  {[]*agentsdk.Tool{tool("read", `{"type":"nonsense"}`)}, "tool read: schema"},
		"no name":         {[]*agentsdk.Tool{{Run: noop}}, "needs a name and Run"},
		"no Run":          {[]*agentsdk.Tool{{Name: "read"}}, `tool "read" needs a name and Run`},
	} {
		tools, err := agentsdk.NewTools(c.tools...)
		require.ErrorContains(t, err, c.want, name)
		require.Nil(t, tools, name)
	}
}

func TestFuncToolDecodesArguments(t *testing.T) {
	echo := agentsdk.FuncTool("echo", "Echoes.", `{"type":"object","properties":{"text":{"type":"string"}}}`,
		func(_ context.Context, call agentsdk.ToolInvocation, a struct {
			Text string `json:"text"`
		}) (string, error) {
			return call.ExecutionID + " echo: " + a.Text, nil
		})
	out, err := echo.Run(context.Background(), agentsdk.ToolInvocation{ExecutionID: "ex1", Arguments: json.RawMessage(`{"text":"hi"}`)})
	require.NoError(t, err)
	require.Equal(t, "ex1 echo: hi", out, "the invocation is passed on")
	_, err = echo.Run(context.Background(), agentsdk.ToolInvocation{Arguments: json.RawMessage(`{"text":1}`)})
	require.ErrorIs(t, err, agentsdk.ErrInvalidInput)
}

// readArgs are a tool's arguments, from which NewTool derives the schema.
type readArgs struct {
	Path  string `json:"path" jsonschema:"a file relative to the workspace"`
	Lines int    `json:"lines,omitempty"`
}

// RefineSchema adds what the Go types cannot say.
func (readArgs) RefineSchema(s *jsonschema.Schema) {
	s.Properties["path"].MinLength = jsonschema.Ptr(1)
}

// TestNewToolSchemaFromType: the schema comes from the argument struct
// (names, types, required, descriptions, no other properties, refinements),
// arguments are validated against it, and Run gets the invocation and the
// decoded struct.
func TestNewToolSchemaFromType(t *testing.T) {
	read := agentsdk.NewTool("read", "Reads a file.", func(_ context.Context, call agentsdk.ToolInvocation, a readArgs) (string, error) {
		return fmt.Sprintf("%s:%s:%d", call.ToolCallID, a.Path, a.Lines), nil
	})
	_, err := agentsdk.NewTools(read)
	require.NoError(t, err)
	var schema map[string]any
	require.NoError(t, json.Unmarshal(read.Spec().Parameters, &schema))
	require.Equal(t, "object", schema["type"])
	require.Equal(t, []any{"path"}, schema["required"], "omitempty fields are optional")
	require.Equal(t, false, schema["additionalProperties"])
	props := schema["properties"].(map[string]any)
	require.Equal(t, map[string]any{"type": "string", "description": "a file relative to the workspace", "minLength": 1.0}, props["path"])
	require.Equal(t, map[string]any{"type": "integer"}, props["lines"])

	require.NoError(t, read.Validate(json.RawMessage(`{"path":"a.go","lines":3}`)))
	for name, args := range map[string]string{
		"missing required": `{"lines":3}`,
		"wrong type":       `{"path":"a.go","lines":"3"}`,
		"unknown property": `{"path":"a.go","bogus":1}`,
		"refined":          `{"path":""}`,
	} {
		require.ErrorIs(t, read.Validate(json.RawMessage(args)), agentsdk.ErrInvalidInput, name)
	}
	out, err := read.Run(context.Background(), agentsdk.ToolInvocation{ToolCallID: "c1", Arguments: json.RawMessage(`{"path":"a.go","lines":3}`)})
	require.NoError(t, err)
	require.Equal(t, "c1:a.go:3", out)
}

// TestNewToolRefusesUndescribableArgs: an argument type no JSON Schema
// describes fails NewTools, naming the tool.
func TestNewToolRefusesUndescribableArgs(t *testing.T) {
	bad := agentsdk.NewTool("bad", "Takes a func.", func(context.Context, agentsdk.ToolInvocation, struct {
		F func() `json:"f"`
	}) (string, error) {
		return "", nil
	})
	_, err := agentsdk.NewTools(bad)
	require.ErrorContains(t, err, "tool bad: schema of its arguments")
}
