package agentsdk

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
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

	once   sync.Once
	schema *jsonschema.Schema
	err    error
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
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return fmt.Errorf("%w: arguments of %s are not JSON: %v", ErrInvalidInput, t.Name, err)
	}
	if err := t.schema.Validate(v); err != nil {
		return fmt.Errorf("%w: arguments of %s: %v", ErrInvalidInput, t.Name, err)
	}
	return nil
}

func compileSchema(name string, raw json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("tool %s: schema is not JSON: %w", name, err)
	}
	c := jsonschema.NewCompiler()
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

// FuncTool builds a Tool whose arguments decode into T.
func FuncTool[T any](name, description string, parameters string, fn func(ctx context.Context, args T) (string, error)) *Tool {
	return &Tool{
		Name:        name,
		Description: description,
		Parameters:  json.RawMessage(parameters),
		Run: func(ctx context.Context, call ToolInvocation) (string, error) {
			var args T
			if len(call.Arguments) > 0 {
				if err := json.Unmarshal(call.Arguments, &args); err != nil {
					return "", fmt.Errorf("%w: %v", ErrInvalidInput, err)
				}
			}
			return fn(ctx, args)
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
