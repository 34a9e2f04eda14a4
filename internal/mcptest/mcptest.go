package mcptest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options choose what NewServer offers.
type Options struct {
	// Crash adds the crash tool, which exits the process: only for a
	// server running as its own process.
	Crash bool
}

// AddArgs are the add tool's arguments.
type AddArgs struct {
	A int `json:"a" jsonschema:"the first addend"`
	B int `json:"b" jsonschema:"the second addend"`
}

// FailArgs are the fail tool's arguments.
type FailArgs struct {
	Reason string `json:"reason" jsonschema:"what to say went wrong"`
}

// SlowArgs are the slow tool's arguments.
type SlowArgs struct {
	Millis int `json:"millis" jsonschema:"how long to take, in milliseconds"`
}

// EnvArgs are the env tool's arguments.
type EnvArgs struct {
	Name string `json:"name" jsonschema:"the variable to read"`
}

// ChangedEnv names a variable holding a file's path: while that file
// exists, a server starting lists "extra" instead of "pieces", as a server
// upgraded between two starts would.
const ChangedEnv = "MCPTEST_CHANGED_IF"

// CrashExitCode is the crash tool's exit status.
const CrashExitCode = 3

// TokenEnv names the variable the whoami tool reports: the credential a
// configuration gives the server, per organization.
const TokenEnv = "MCPTEST_TOKEN"

// readOnly marks a tool that changes nothing: the worker runs its calls
// without asking.
var readOnly = &sdk.ToolAnnotations{ReadOnlyHint: true}

func text(s string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
}

// NewServer is the test server.
func NewServer(opts Options) *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "mcptest", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "add", Description: "Adds two integers.", Annotations: readOnly},
		func(_ context.Context, _ *sdk.CallToolRequest, in AddArgs) (*sdk.CallToolResult, any, error) {
			return text(fmt.Sprint(in.A + in.B)), nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "fail", Description: "Always fails, saying why.", Annotations: readOnly},
		func(_ context.Context, _ *sdk.CallToolRequest, in FailArgs) (*sdk.CallToolResult, any, error) {
			r := text("cannot comply: " + in.Reason)
			r.IsError = true
			return r, nil, nil
		})
	if _, err := os.Stat(os.Getenv(ChangedEnv)); os.Getenv(ChangedEnv) != "" && err == nil {
		sdk.AddTool(s, &sdk.Tool{Name: "extra", Description: "Only in the changed list."},
			func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
				return text("extra"), nil, nil
			})
	} else {
		sdk.AddTool(s, &sdk.Tool{Name: "pieces", Description: "Answers in two text contents."},
			func(_ context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "first"}, &sdk.TextContent{Text: "second"}}}, nil, nil
			})
	}
	sdk.AddTool(s, &sdk.Tool{Name: "slow", Description: "Answers after a delay."},
		func(ctx context.Context, _ *sdk.CallToolRequest, in SlowArgs) (*sdk.CallToolResult, any, error) {
			select {
			case <-time.After(time.Duration(in.Millis) * time.Millisecond):
				return text("done"), nil, nil
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
		})
	sdk.AddTool(s, &sdk.Tool{Name: "env", Description: "Reads a variable of the server's environment.", Annotations: readOnly},
		func(_ context.Context, _ *sdk.CallToolRequest, in EnvArgs) (*sdk.CallToolResult, any, error) {
			v, ok := os.LookupEnv(in.Name)
			if !ok {
				return text("(unset)"), nil, nil
			}
			return text(v), nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "pid", Description: "The server's process ID.", Annotations: readOnly},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return text(fmt.Sprint(os.Getpid())), nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "whoami", Description: "Says the server's credential and the calling organization.", Annotations: readOnly},
		func(_ context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			org, _ := req.Params.Meta["agentree/org"].(string)
			return text(fmt.Sprintf("token=%s org=%s", os.Getenv(TokenEnv), org)), nil, nil
		})
	// grow adds the tool grown, which makes the server send its clients
	// notifications/tools/list_changed.
	destructive := true
	sdk.AddTool(s, &sdk.Tool{Name: "grow", Description: "Adds the tool grown.", Annotations: &sdk.ToolAnnotations{DestructiveHint: &destructive}},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			sdk.AddTool(s, &sdk.Tool{Name: "grown", Description: "Added by grow.", Annotations: readOnly},
				func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
					return text("grown"), nil, nil
				})
			return text("grew"), nil, nil
		})
	if opts.Crash {
		sdk.AddTool(s, &sdk.Tool{Name: "crash", Description: "Exits the server's process without answering."},
			func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
				os.Exit(CrashExitCode)
				return nil, nil, nil
			})
	}
	return s
}

// Build compiles the stdio server program into a temporary directory and
// returns its path.
func Build(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "mcptest-server")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/agentree/agentree/internal/mcptest/server")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("build the MCP test server: %v\n%s", err, strings.TrimSpace(string(out)))
	}
	return bin
}
