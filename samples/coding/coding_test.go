package coding_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/agenttest"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/agentsdk/tools/builtin"
	"github.com/agentree/agentree/apiclient"
	agentreev1 "github.com/agentree/agentree/proto/agentree/v1"
	"github.com/agentree/agentree/samples/coding"
	"github.com/agentree/agentree/samples/internal/sampleenv"
	"github.com/agentree/agentree/samples/internal/sampletest"
)

// wantGreet is greet.go after the scripted session's write and edit.
const wantGreet = "package greet\n\n// Hello greets name.\nfunc Hello(name string) string {\n\treturn \"Hello, \" + name + \"!\"\n}\n"

// inMemoryExecution is the execution ID the in-memory runtime reports.
const inMemoryExecution = "mem"

// wantRead is what read_file shows of greet.go: numbered lines.
const wantRead = "     1\tpackage greet\n     2\t\n     3\t// Hello greets name.\n     4\tfunc Hello(name string) string {\n" +
	"     5\t\treturn \"Hello, \" + name + \"!\"\n     6\t}\n"

// runInMemory runs the script, approving each call that waits for
// approval (only the writers do).
func runInMemory(t *testing.T, dir string, script scripted.Script) (*agenttest.Execution, []agentsdk.Message) {
	t.Helper()
	x, err := agenttest.Start(agenttest.Options{
		Agent:      react.New(react.Options{}),
		Providers:  []agentsdk.Provider{scripted.New(script)},
		Tools:      tools(t, dir),
		Config:     coding.Config(),
		UserPrompt: coding.Prompt,
	})
	require.NoError(t, err)
	require.NoError(t, x.Run(context.Background()))
	for x.Status == agenttest.StatusWaiting {
		var asked int
		for _, r := range x.Store.ToolCalls() {
			if r.Status == agentsdk.ToolAwaitingApproval {
				asked++
				require.Equal(t, agentsdk.PolicyAsk, coding.Policy[r.ToolName], "%s waited for approval", r.ToolName)
				require.NoError(t, x.Signal(agentsdk.SignalToolApproval, agentsdk.Decision{ToolCallID: r.ToolCallID, Decision: agentsdk.DecisionApprove}))
			}
		}
		require.NotZero(t, asked, "waiting, but for no approval: %s", x.Reason)
		require.NoError(t, x.Run(context.Background()))
	}
	require.Equal(t, agenttest.StatusCompleted, x.Status, x.Reason)
	msgs, err := x.Messages()
	require.NoError(t, err)
	return x, msgs
}

func tools(t *testing.T, dir string) []*agentsdk.Tool {
	t.Helper()
	ts, err := coding.Tools(dir)
	require.NoError(t, err)
	return ts
}

func toolResults(msgs []agentsdk.Message) []agentsdk.Message {
	var out []agentsdk.Message
	for _, m := range msgs {
		if m.Role == agentsdk.RoleToolResult {
			out = append(out, m)
		}
	}
	return out
}

// TestScriptedSessionInMemory writes and edits a file in the in-memory
// runtime.
func TestScriptedSessionInMemory(t *testing.T) {
	dir := t.TempDir()
	_, msgs := runInMemory(t, dir, coding.Script())

	results := toolResults(msgs)
	require.Len(t, results, 4)
	for _, r := range results {
		require.False(t, r.IsError, "%s: %s", r.ToolName, r.Text())
	}
	require.Equal(t, "the workspace is empty", results[0].Text())
	require.Equal(t, wantRead, results[3].Text(), "read_file shows the edit")
	require.Equal(t, coding.FinalAnswer, msgs[len(msgs)-1].Text())

	b, err := os.ReadFile(filepath.Join(dir, inMemoryExecution, coding.GreetPath))
	require.NoError(t, err)
	require.Equal(t, wantGreet, string(b))
}

// TestModelSeesEscapeErrors: a refused path is a tool result the model
// reads (and may correct), not a failed execution.
func TestModelSeesEscapeErrors(t *testing.T) {
	dir := t.TempDir()
	_, msgs := runInMemory(t, dir, scripted.Turns(
		scripted.Turn{ToolCalls: []agentsdk.ToolCall{
			{ID: "a", Name: builtin.ReadFileTool, Arguments: []byte(`{"path":"../../../etc/passwd"}`)},
			{ID: "b", Name: builtin.WriteFileTool, Arguments: []byte(`{"path":"/tmp/agentree-evil.txt","content":"x"}`)},
		}},
		scripted.Turn{Text: "Those paths are outside my workspace."},
	))
	results := toolResults(msgs)
	require.Len(t, results, 2)
	require.True(t, results[0].IsError)
	require.Equal(t, `error: outside the workspace: "../../../etc/passwd" climbs out of the workspace`, results[0].Text())
	require.True(t, results[1].IsError)
	require.Equal(t, `error: outside the workspace: "/tmp/agentree-evil.txt" is an absolute path; give a path relative to the workspace`, results[1].Text())
	_, err := os.Stat("/tmp/agentree-evil.txt")
	require.ErrorIs(t, err, os.ErrNotExist)
}

// TestCodingEndToEnd runs the scripted session on a Temporal worker
// through the REST API, approving each call that waits: the workspace is
// named after the execution.
func TestCodingEndToEnd(t *testing.T) {
	dir := t.TempDir()
	env := sampletest.New(t, adapter.Options{
		Agents:    []agentsdk.Agent{react.New(react.Options{})},
		Providers: []agentsdk.Provider{scripted.New(coding.Script())},
		Tools:     tools(t, dir),
	})
	id := env.Start(react.Kind, coding.Config(), coding.Prompt).GetId()
	var printed strings.Builder
	stream := sampleenv.NewStream(env.API, id, &printed)
	var decided []string
	var ex *agentreev1.AgentExecution
	for {
		var err error
		ex, err = stream.Follow(env.Context(), func(ev apiclient.Event) bool { return sampleenv.Ended(ev) || sampleenv.Waiting(ev) })
		require.NoError(t, err)
		if ex.GetStatus() != "WAITING" {
			break
		}
		n, err := coding.DecidePending(env.Context(), env.API, id, func(c *agentreev1.ToolCall) (string, string) {
			decided = append(decided, c.GetToolName())
			return coding.Approve(c)
		})
		require.NoError(t, err)
		require.Equal(t, 1, n)
	}
	require.Equal(t, "COMPLETED", ex.GetStatus(), ex.GetError())
	require.Equal(t, []string{builtin.WriteFileTool, builtin.EditFileTool}, decided, "the writers, and only they, waited for approval")
	require.EqualValues(t, 5, ex.GetStepCount(), "a step per model call: four with tool calls, and the answer")
	for _, tool := range []string{builtin.ListFilesTool, builtin.WriteFileTool, builtin.EditFileTool, builtin.ReadFileTool} {
		require.Contains(t, printed.String(), "  → "+tool+" ")
	}
	require.True(t, strings.HasSuffix(printed.String(), coding.FinalAnswer+"\n"), printed.String())

	b, err := os.ReadFile(filepath.Join(dir, ex.GetId(), coding.GreetPath))
	require.NoError(t, err)
	require.Equal(t, wantGreet, string(b))
}
