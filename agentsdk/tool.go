package agentsdk

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	compiler "github.com/santhosh-tekuri/jsonschema/v6"
)

// Tool is something a model may call. Parameters is the JSON Schema of its
// arguments object; arguments that do not match it are answered with an
// error result the model can read, and Run is not called.
type Tool struct {
	Name        string
	Description string
	Parameters  json.RawMessage
	// Run does the work. Its error (other than ctx's) becomes an error
	// result the model sees; wrap it with Retryable to have the runtime
	// retry the call instead.
	Run func(ctx context.Context, call ToolInvocation) (string, error)
	// Policy is the tool's default policy when neither the execution nor
	// the worker sets one; empty = auto. Tools that write or run commands
	// default to ask.
	Policy ToolPolicy
	// Risk is shown with a call waiting for approval: low, medium (the
	// default) or high.
	Risk string
	// ReadOnly says the tool changes nothing outside its result (a read, a
	// search, a computation): a counterfactual branch runs its new calls
	// without asking, where a call of any other tool waits for a person's
	// approval (Config.Counterfactual).
	ReadOnly bool
	// LongRunning runs the tool's calls as activities from their first
	// attempt: heartbeating, cancellable at once, retried on another
	// worker within the heartbeat timeout when theirs dies. Mark tools
	// that may outlast the runtime's local-call limit (20 s by default)
	// or must not be cut and made again: a shell command, a build, a
	// crawl, a remote server's tool. By default (false) a call's first
	// attempt is a Temporal local activity, in the workflow task of the
	// answer that asked for it: no task-queue round trip before or after
	// it, so an answer, its tool calls and the next model call run in one
	// workflow task. Such a call that outlasts the limit is stopped and
	// made again as an activity, and so is a first attempt that fails
	// other than with the tool's own final error; a worker lost mid-call
	// is noticed when the workflow task times out (5 s). Resolved when
	// the model answers (the model call's result, recorded in the
	// workflow's history, says it), so a replay runs a call as its first
	// run did whatever the worker's tools say now.
	LongRunning bool
	// Orgs are the organizations (by ID) whose executions may see and
	// call the tool; nil: every organization. A tool that holds an
	// operator's credential for some tenants only (an MCP server's) is
	// neither offered to others' models nor run for them.
	Orgs []string

	once   sync.Once
	schema *compiler.Schema
	err    error
	// built is why NewTool could not derive Parameters; NewTools reports
	// it.
	built error
}

// ToolInvocation is one call of a tool.
type ToolInvocation struct {
	ExecutionID string
	OrgID       string
	ToolCallID  string
	Arguments   json.RawMessage
	// Emit streams a data event (terminal output, progress) to the
	// execution's stream. It never blocks for long and may be nil-safe called.
	Emit func(v any)
}

// ServesOrg reports whether org's executions may see and call t.
func (t *Tool) ServesOrg(org string) bool {
	return t.Orgs == nil || slices.Contains(t.Orgs, org)
}

// Spec is what the model is told about t.
func (t *Tool) Spec() ToolSpec {
	p := t.Parameters
	if len(p) == 0 {
		p = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return ToolSpec{Name: t.Name, Description: t.Description, Parameters: p}
}

// Validate checks args against the tool's schema.
func (t *Tool) Validate(args json.RawMessage) error {
	t.once.Do(func() { t.schema, t.err = compileSchema(t.Name, t.Spec().Parameters) })
	if t.err != nil {
		return t.err
	}
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage(`{}`)
	}
	v, err := compiler.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return fmt.Errorf("%w: arguments of %s are not JSON: %v", ErrInvalidInput, t.Name, err)
	}
	if err := t.schema.Validate(v); err != nil {
		return fmt.Errorf("%w: arguments of %s: %v", ErrInvalidInput, t.Name, err)
	}
	return nil
}

func compileSchema(name string, raw json.RawMessage) (*compiler.Schema, error) {
	doc, err := compiler.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("tool %s: schema is not JSON: %w", name, err)
	}
	c := compiler.NewCompiler()
	url := "agentree:///tools/" + name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("tool %s: schema: %w", name, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("tool %s: schema: %w", name, err)
	}
	return s, nil
}

// NewTool builds a Tool whose arguments decode into Args and whose
// Parameters are Args' JSON Schema, generated from the type by
// jsonschema.For (github.com/google/jsonschema-go, as the MCP Go SDK
// does), so the schema the model sees and the struct the tool reads cannot
// drift. Each exported field is a property named by its json tag; it is
// required unless tagged omitempty or omitzero; its `jsonschema:"…"` tag is
// its description; other properties are refused. For constraints a Go type
// cannot state (minLength, enum, ranges), Args may implement
// SchemaRefiner. A type For cannot describe (a func, a chan) makes
// NewTools fail with the reason.
func NewTool[Args any](name, description string, fn func(ctx context.Context, call ToolInvocation, args Args) (string, error)) *Tool {
	t := FuncTool(name, description, "", fn)
	s, err := jsonschema.For[Args](nil)
	if err == nil {
		if r, ok := any(new(Args)).(SchemaRefiner); ok {
			r.RefineSchema(s)
		}
		t.Parameters, err = json.Marshal(s)
	}
	if err != nil {
		t.built = fmt.Errorf("tool %s: schema of its arguments: %w", name, err)
	}
	return t
}

// SchemaRefiner is implemented (on a pointer receiver or a value) by a
// NewTool argument type whose generated schema needs what its Go type
// cannot say, such as a minimum length. RefineSchema adjusts s in place.
type SchemaRefiner interface {
	RefineSchema(s *jsonschema.Schema)
}

// FuncTool builds a Tool whose arguments decode into T, with a hand-written
// JSON Schema; prefer NewTool, whose schema cannot drift from T.
func FuncTool[T any](name, description string, parameters string, fn func(ctx context.Context, call ToolInvocation, args T) (string, error)) *Tool {
	var p json.RawMessage
	if parameters != "" {
		p = json.RawMessage(parameters)
	}
	return &Tool{
		Name:        name,
		Description: description,
		Parameters:  p,
		Run: func(ctx context.Context, call ToolInvocation) (string, error) {
			var args T
			if len(call.Arguments) > 0 {
				if err := json.Unmarshal(call.Arguments, &args); err != nil {
					return "", fmt.Errorf("%w: %v", ErrInvalidInput, err)
				}
			}
			return fn(ctx, call, args)
		},
	}
}

// RetryableError asks the runtime to retry a tool call instead of showing
// the error to the model.
type RetryableError struct{ Err error }

func (e *RetryableError) Error() string { return e.Err.Error() }
func (e *RetryableError) Unwrap() error { return e.Err }

// Retryable marks err as worth retrying.
func Retryable(err error) error { return &RetryableError{Err: err} }

// IsRetryable reports whether err was marked Retryable.
func IsRetryable(err error) bool {
	var r *RetryableError
	return errors.As(err, &r)
}

// Tools is a set of tools by name.
type Tools map[string]*Tool

// NewTools indexes tools by name; a duplicate name is an error.
func NewTools(tools ...*Tool) (Tools, error) {
	ts := Tools{}
	for _, t := range tools {
		if t.Name == "" || t.Run == nil {
			return nil, fmt.Errorf("agentsdk: tool %q needs a name and Run", t.Name)
		}
		if t.built != nil {
			return nil, fmt.Errorf("agentsdk: %w", t.built)
		}
		if _, dup := ts[t.Name]; dup {
			return nil, fmt.Errorf("agentsdk: duplicate tool %q", t.Name)
		}
		if _, err := compileSchema(t.Name, t.Spec().Parameters); err != nil {
			return nil, fmt.Errorf("agentsdk: %w", err)
		}
		ts[t.Name] = t
	}
	return ts, nil
}

// Get returns the named tool or an ErrInvalidInput error.
func (ts Tools) Get(name string) (*Tool, error) {
	if t, ok := ts[name]; ok {
		return t, nil
	}
	return nil, fmt.Errorf("%w: unknown tool %q (known: %v)", ErrInvalidInput, name, ts.Names())
}

// Names lists the tools' names, sorted.
func (ts Tools) Names() []string {
	out := make([]string, 0, len(ts))
	for n := range ts {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Specs returns the specs of the named tools, in the order given.
func (ts Tools) Specs(names []string) ([]ToolSpec, error) {
	specs := make([]ToolSpec, 0, len(names))
	for _, n := range names {
		t, err := ts.Get(n)
		if err != nil {
			return nil, err
		}
		specs = append(specs, t.Spec())
	}
	return specs, nil
}
