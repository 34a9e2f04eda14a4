package gateway_test

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/agentsdk/tools/builtin"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/step"
)

// adversary is a model that makes exactly the calls its user prompt
// spells, one "call <tool> <arguments JSON>" a line, whatever it was
// offered, then stops.
func adversary() *scripted.Provider {
	return scripted.New(func(turn int, req agentsdk.ModelRequest) scripted.Turn {
		if turn > 0 {
			return scripted.Turn{Text: "Done."}
		}
		var calls []agentsdk.ToolCall
		for _, m := range req.Messages {
			if m.Role != agentsdk.RoleUser {
				continue
			}
			for _, line := range strings.Split(m.Text(), "\n") {
				name, args, ok := strings.Cut(strings.TrimPrefix(line, "call "), " ")
				if ok && strings.HasPrefix(line, "call ") {
					calls = append(calls, agentsdk.ToolCall{ID: fmt.Sprintf("call_%d", len(calls)+1), Name: name, Arguments: json.RawMessage(args)})
				}
			}
		}
		return scripted.Turn{Text: "As told.", ToolCalls: calls}
	})
}

// bashCall is a prompt that makes the adversary run command with bash.
func bashCall(command string) string {
	args, _ := json.Marshal(builtin.BashArgs{Command: command})
	return "call bash " + string(args)
}

// builtinTools is the builtin tool set (toolSets: [builtin]) over a
// workspace root of the test's.
func builtinTools(t *testing.T, root string) []*agentsdk.Tool {
	tools, err := builtin.Tools(builtin.Options{Root: root})
	require.NoError(t, err)
	return tools
}

// startAs creates a one-shot execution in org with key: the adversary's
// prompt, tools and the tenant's tool policy.
func (e *env) startAs(key string, org entrystore.Org, prompt string, tools []string, policy map[string]string) (id, path string) {
	e.t.Helper()
	base := "/api/orgs/" + org.Slug + "/agent-executions"
	ex := e.ok(key, http.MethodPost, base, map[string]any{
		"kind": "react-agent", "userPrompt": prompt, "models": scriptedModel, "tools": tools,
		"config": map[string]any{"mode": "one-shot", "toolPolicy": policy},
	})
	id = ex["id"].(string)
	return id, base + "/" + id
}

// callRecord polls until the record of call id of the execution at path
// has one of statuses, and returns it.
func (e *env) callRecord(key, path, id string, statuses ...string) map[string]any {
	e.t.Helper()
	var rec map[string]any
	poll(e.t, time.Minute, func() bool {
		calls, _ := e.do(key, http.MethodGet, path+"/tool-calls?pageSize=500", nil).Body["toolCalls"].([]any)
		for _, c := range calls {
			if c := c.(map[string]any); c["toolCallId"] == id {
				rec = c
			}
		}
		return rec != nil && strings.Contains(strings.Join(statuses, " "), rec["status"].(string))
	}, "tool call %s of %s never reached %v (last: %v)", id, path, statuses, rec)
	return rec
}

func outputText(rec map[string]any) string {
	out, _ := rec["output"].(map[string]any)
	text, _ := out["text"].(string)
	return text
}

// TestTenantCannotLiftOperatorPolicy: the operator asks for bash
// worker-wide and forbids it to organization B; a tenant's
// {"bash":"auto"} or {"*":"auto"} lifts neither — A's call waits for a
// person, B's is refused — and the command never runs. A tenant still
// tightens: forbid or ask on a tool the operator leaves auto holds.
func TestTenantCannotLiftOperatorPolicy(t *testing.T) {
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{adversary()}, noWorker: true})
	o := envOptions{providers: []agentsdk.Provider{adversary()}, tools: builtinTools(t, t.TempDir()),
		toolPolicy: agentsdk.Policies{builtin.BashTool: agentsdk.PolicyAsk},
		orgTools: func(e *env) map[string]agentsdk.OrgTools {
			return map[string]agentsdk.OrgTools{e.orgB.ID: {ToolPolicy: agentsdk.Policies{builtin.BashTool: agentsdk.PolicyForbid}}}
		}}
	e.startWorker(e.queue, o)

	for _, lift := range []map[string]string{{"bash": "auto"}, {"*": "auto"}} {
		// Ask: the call waits for a person, unrun.
		id, path := e.startAs(e.keyA, e.orgA, bashCall("echo LIFTED"), []string{"bash"}, lift)
		e.waitStatus(id, "WAITING", time.Minute)
		rec := e.callRecord(e.keyA, path, "call_1", "awaiting_approval")
		require.Equal(t, "ask", rec["policy"], "%v lifted the operator's ask", lift)
		require.NotContains(t, outputText(rec), "LIFTED")

		// Forbid: B's create may not name bash, and a call the model
		// makes anyway is refused, unrun.
		r := e.fails(e.keyB, http.MethodPost, "/api/orgs/"+e.orgB.Slug+"/agent-executions", map[string]any{
			"kind": "react-agent", "userPrompt": bashCall("echo LIFTED"), "models": scriptedModel, "tools": []string{"bash"},
			"config": map[string]any{"toolPolicy": lift},
		}, http.StatusBadRequest, "invalid_argument")
		require.Contains(t, r.Body["message"], `tool "bash" is forbidden by the operator's policy`)
		_, path = e.startAs(e.keyB, e.orgB, bashCall("echo LIFTED"), []string{"read_file"}, lift)
		rec = e.callRecord(e.keyB, path, "call_1", "error", "completed")
		require.Equal(t, "error", rec["status"])
		require.Contains(t, outputText(rec), `tool "bash" is forbidden by the operator's policy`)
		require.NotContains(t, outputText(rec), "LIFTED")
	}

	// Tightening holds: read_file is auto for the operator.
	readCall := `call read_file {"path":"notes.txt"}`
	_, path := e.startAs(e.keyA, e.orgA, readCall, []string{"read_file"}, map[string]string{"read_*": "forbid"})
	rec := e.callRecord(e.keyA, path, "call_1", "error", "completed")
	require.Equal(t, "error", rec["status"])
	require.Contains(t, outputText(rec), `tool "read_file" is forbidden by this execution's tool policy`)
	id, path := e.startAs(e.keyA, e.orgA, readCall, []string{"read_file"}, map[string]string{"read_file": "ask"})
	e.waitStatus(id, "WAITING", time.Minute)
	require.Equal(t, "ask", e.callRecord(e.keyA, path, "call_1", "awaiting_approval")["policy"])
}

// TestForbiddenToolIsNotAdvertised: a tool the operator forbids an
// organization (by policy, or by leaving it off the organization's list)
// is missing from that organization's capabilities, and a create or a
// definition naming it is a 400 saying which tool and why. Another
// organization still sees and uses it.
func TestForbiddenToolIsNotAdvertised(t *testing.T) {
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{adversary()}, noWorker: true})
	e.startWorker(e.queue, envOptions{providers: []agentsdk.Provider{adversary()}, tools: builtinTools(t, t.TempDir()),
		orgTools: func(e *env) map[string]agentsdk.OrgTools {
			return map[string]agentsdk.OrgTools{e.orgB.ID: {
				Tools:      []string{builtin.ReadFileTool, builtin.WriteFileTool, builtin.BashTool},
				ToolPolicy: agentsdk.Policies{builtin.BashTool: agentsdk.PolicyForbid},
			}}
		}})

	toolsOf := func(key string, org entrystore.Org) []string {
		r := e.do(key, http.MethodGet, "/api/orgs/"+org.Slug+"/capabilities", nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
		var c capabilities
		require.NoError(t, json.Unmarshal(r.Raw, &c))
		for _, w := range c.Workers {
			if w.TaskQueue == e.queue {
				var names []string
				for _, tl := range w.Tools {
					names = append(names, tl.Name)
				}
				return names
			}
		}
		require.Fail(t, "no capabilities", "the worker on %s is not listed", e.queue)
		return nil
	}
	require.ElementsMatch(t, builtin.ToolNames, toolsOf(e.keyA, e.orgA))
	require.ElementsMatch(t, []string{builtin.ReadFileTool, builtin.WriteFileTool}, toolsOf(e.keyB, e.orgB))

	base := "/api/orgs/" + e.orgB.Slug
	for tool, why := range map[string]string{"bash": "forbidden", "grep": "off the list"} {
		r := e.fails(e.keyB, http.MethodPost, base+"/agent-executions", map[string]any{
			"kind": "react-agent", "userPrompt": "hi", "models": scriptedModel, "tools": []string{"read_file", tool},
		}, http.StatusBadRequest, "invalid_argument")
		require.Contains(t, r.Body["message"], fmt.Sprintf("tool %q is forbidden by the operator's policy", tool), why)
		r = e.fails(e.keyB, http.MethodPost, base+"/agent-definitions", map[string]any{
			"name": "d", "slug": "d-" + tool, "models": scriptedModel, "tools": []string{tool},
		}, http.StatusBadRequest, "invalid_argument")
		require.Contains(t, r.Body["message"], fmt.Sprintf("tool %q is forbidden by the operator's policy", tool), why)
	}

	// Nor may a fork's config name it.
	id, path := e.startAs(e.keyB, e.orgB, "hi", []string{"read_file"}, nil)
	poll(t, time.Minute, func() bool {
		return e.do(e.keyB, http.MethodGet, path, nil).Body["status"] == "COMPLETED"
	}, "execution %s never completed", id)
	entries := items(t, e.ok(e.keyB, http.MethodGet, path+"/entries?pageSize=500", nil), "entries")
	r := e.fails(e.keyB, http.MethodPost, path+"/fork", map[string]any{"entryId": entries[0]["id"], "userPrompt": "again",
		"config": map[string]any{"tools": []string{"bash"}}}, http.StatusBadRequest, "invalid_argument")
	require.Contains(t, r.Body["message"], `tool "bash" is forbidden by the operator's policy`)

	// Organization A is not configured apart: bash is served to it.
	e.ok(e.keyA, http.MethodPost, "/api/orgs/"+e.orgA.Slug+"/agent-executions", map[string]any{
		"kind": "react-agent", "userPrompt": "hi", "models": scriptedModel, "tools": []string{"bash", "grep"},
	})
}

// activityEnv is a Temporal test environment registered as a worker's
// activities are: the tool activities run there as on a worker, on the
// same store.
type activityEnv struct {
	*testsuite.TestActivityEnvironment
}

func (activityEnv) RegisterWorkflowWithOptions(any, workflow.RegisterOptions) {}

func (a activityEnv) RegisterActivityWithOptions(fn any, o activity.RegisterOptions) {
	a.TestActivityEnvironment.RegisterActivityWithOptions(fn, o)
}

// TestToolActivityRefusesAnUnapprovedCall: the tool activities
// themselves, called directly, refuse a call whose recorded policy is ask
// and that no person approved — it is answered with an error result and
// the tool does not run — and run it once a person approved it.
func TestToolActivityRefusesAnUnapprovedCall(t *testing.T) {
	root := t.TempDir()
	tools := builtinTools(t, root)
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{adversary()}, tools: tools})
	var s testsuite.WorkflowTestSuite
	acts := activityEnv{s.NewTestActivityEnvironment()}
	require.NoError(t, adapter.Register(acts, adapter.Options{Store: entrystore.New(newPool(t, e.dbURL)),
		Agents: []agentsdk.Agent{react.New(react.Options{})}, Tools: tools}))

	// write_file asks by default: both calls wait.
	id, path := e.startAs(e.keyA, e.orgA, `call write_file {"path":"approved.txt","content":"yes"}
call write_file {"path":"unapproved.txt","content":"no"}`, []string{"write_file"}, nil)
	e.waitStatus(id, "WAITING", time.Minute)
	rec := e.callRecord(e.keyA, path, "call_2", "awaiting_approval")
	in := step.ToolInput{OrgID: e.orgA.ID, ExecutionID: id, AssistantID: rec["messageId"].(string),
		LeafID: rec["messageId"].(string), ToolCallID: "call_2", Key: id + "/direct/1", StepNumber: 2}

	// Unapproved: refused by RunTool and by ExecuteTool (parallel calls).
	v, err := acts.ExecuteActivity(adapter.RunToolActivity, in)
	require.NoError(t, err, "a refusal is a result, not a failure")
	var res agentsdk.ToolResult
	require.NoError(t, v.Get(&res))
	require.True(t, res.IsError)
	require.Contains(t, res.Preview, `tool "write_file" needs a person's approval`)
	in.Key = id + "/direct/2"
	v, err = acts.ExecuteActivity(adapter.ExecuteToolActivity, in)
	require.NoError(t, err)
	var out step.ToolOutcome
	require.NoError(t, v.Get(&out))
	require.True(t, out.IsError)
	require.Contains(t, out.Preview, "needs a person's approval")
	require.Empty(t, written(t, root, "unapproved.txt"), "the refused call never ran")

	// Approved (over REST): the worker's activity runs it, and so does a
	// direct call.
	e.ok(e.keyA, http.MethodPost, path+"/tool-calls/call_1/approval", map[string]any{"decision": "approve"})
	rec = e.callRecord(e.keyA, path, "call_1", "completed", "error")
	require.Equal(t, "completed", rec["status"], "%v", rec)
	require.Contains(t, outputText(rec), "wrote 3 bytes")
	require.Len(t, written(t, root, "approved.txt"), 1)
	in.ToolCallID, in.Key = "call_1", id+"/direct/3"
	v, err = acts.ExecuteActivity(adapter.RunToolActivity, in)
	require.NoError(t, err)
	require.NoError(t, v.Get(&res))
	require.False(t, res.IsError, "%s", res.Preview)
	require.Contains(t, res.Preview, "wrote 3 bytes")
}

// written lists the files named name anywhere under root.
func written(t *testing.T, root, name string) []string {
	var found []string
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == name {
			found = append(found, p)
		}
		return err
	}))
	return found
}
