package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/internal/temporaltest"
)

// firstUserText is the text of a request's first user message: which
// execution (parent or child) a shared scripted model is answering.
func firstUserText(req agentsdk.ModelRequest) string {
	for _, m := range req.Messages {
		if m.Role == agentsdk.RoleUser {
			return m.Text()
		}
	}
	return ""
}

func lastIsToolResult(req agentsdk.ModelRequest) bool {
	return len(req.Messages) > 0 && req.Messages[len(req.Messages)-1].Role == agentsdk.RoleToolResult
}

// spawnModel: the parent (prompt "Research") spawns one child per topic;
// a child echoes its topic, then answers "answer <topic>"; the parent then
// sums up what its tool result says.
func spawnModel(topics []string, childTool string) *scripted.Provider {
	return scripted.New(spawnTurns(topics, childTool))
}

// spawnTurns is spawnModel's script, for a test that adds to its turns.
func spawnTurns(topics []string, childTool string) func(int, agentsdk.ModelRequest) scripted.Turn {
	return func(_ int, req agentsdk.ModelRequest) scripted.Turn {
		prompt := firstUserText(req)
		if prompt == "Research" {
			if !lastIsToolResult(req) {
				var agents []map[string]any
				for _, t := range topics {
					agents = append(agents, map[string]any{"name": t, "prompt": "topic " + t, "maxSteps": 3})
				}
				args, _ := json.Marshal(map[string]any{"agents": agents})
				return scripted.Turn{Text: "Splitting it up.", ToolCalls: []agentsdk.ToolCall{{ID: "call_spawn", Name: agentsdk.ToolSpawnAgents, Arguments: args}}}
			}
			last := req.Messages[len(req.Messages)-1].Text()
			return scripted.Turn{Text: "Summary: " + strings.Join(strings.Fields(last)[:3], " ")}
		}
		topic := strings.TrimPrefix(prompt, "topic ")
		if !lastIsToolResult(req) {
			return scripted.Turn{ToolCalls: []agentsdk.ToolCall{{ID: "call_" + topic, Name: childTool, Arguments: []byte(`{"text":"` + topic + `"}`)}}}
		}
		return scripted.Turn{Text: "answer " + topic}
	}
}

// TestParentSpawnsThreeChildren: spawn_agents starts three child
// executions (Temporal child workflows of the parent), the parent's turn
// waits for them, their answers come back as agent_result entries and the
// call's result, and their usage rolls up into the parent's.
func TestParentSpawnsThreeChildren(t *testing.T) {
	topics := []string{"alpha", "beta", "gamma"}
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{spawnModel(topics, "echo")},
		tools: []*agentsdk.Tool{echoTool(), agentsdk.SpawnAgentsTool()}})
	base := "/api/orgs/" + e.orgA.Slug + "/agent-executions"
	ex := e.ok(e.keyA, http.MethodPost, base, map[string]any{
		"kind": "react-agent", "userPrompt": "Research", "models": scriptedModel, "tools": []string{"echo", agentsdk.ToolSpawnAgents},
	})
	id := ex["id"].(string)
	path := base + "/" + id
	done := e.waitStatus(id, "COMPLETED", 2*time.Minute)
	require.Equal(t, "Summary: 3 sub-agent(s) ended.", done["summary"])

	children := items(t, e.ok(e.keyA, http.MethodGet, path+"/children", nil), "agentExecutions")
	require.Len(t, children, 3)
	tc, err := client.Dial(client.Options{HostPort: temporaltest.Address(t), Logger: temporaltest.Logger{}})
	require.NoError(t, err)
	defer tc.Close()
	for _, c := range children {
		require.Equal(t, id, c["parentId"])
		require.Equal(t, "COMPLETED", c["status"])
		require.EqualValues(t, 3, c["maxSteps"])
		require.EqualValues(t, 2, c["stepCount"], "a step with its echo call, and the answer's")
		cfg := c["config"].(map[string]any)
		require.Equal(t, []any{"echo"}, cfg["tools"], "a sub-agent never spawns")
		d, err := tc.DescribeWorkflowExecution(context.Background(), c["id"].(string), "")
		require.NoError(t, err)
		require.Equal(t, id, d.GetWorkflowExecutionInfo().GetParentExecution().GetWorkflowId(), "a Temporal child workflow of the parent")
	}

	rec := e.toolCall(path, "call_spawn")
	require.Equal(t, "completed", rec["status"])
	result := rec["output"].(map[string]any)["text"].(string)
	for _, topic := range topics {
		require.Contains(t, result, "## "+topic+" (COMPLETED")
		require.Contains(t, result, "answer "+topic)
	}
	var results int
	for _, en := range e.all(path+"/entries?pageSize=500", "entries") {
		if en["type"] == string(agentsdk.EntryAgentResult) {
			results++
		}
	}
	require.Equal(t, 3, results, "one agent_result entry per child")

	cp := e.ok(e.keyA, http.MethodGet, path+"/checkpoints/latest", nil)
	total := cp["state"].(map[string]any)["totalUsage"].(map[string]any)
	require.EqualValues(t, 2+3*2, total["calls"], "the parent's two model calls and its children's six")
}

// TestCancelParentCancelsChildren: cancelling a parent while its children
// work cancels them too.
func TestCancelParentCancelsChildren(t *testing.T) {
	var started atomic.Int32
	block := agentsdk.NewTool("block", "Blocks.", func(ctx context.Context, _ agentsdk.ToolInvocation, _ echoArgs) (string, error) {
		started.Add(1)
		<-ctx.Done()
		return "", ctx.Err()
	})
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{spawnModel([]string{"one", "two"}, "block")},
		tools: []*agentsdk.Tool{block, agentsdk.SpawnAgentsTool()}})
	base := "/api/orgs/" + e.orgA.Slug + "/agent-executions"
	ex := e.ok(e.keyA, http.MethodPost, base, map[string]any{
		"kind": "react-agent", "userPrompt": "Research", "models": scriptedModel, "tools": []string{"block", agentsdk.ToolSpawnAgents},
	})
	id := ex["id"].(string)
	poll(t, time.Minute, func() bool { return started.Load() == 2 }, "the children's tools never started")
	e.ok(e.keyA, http.MethodDelete, base+"/"+id, nil)
	e.waitStatus(id, "CANCELLED", time.Minute)
	children := items(t, e.ok(e.keyA, http.MethodGet, base+"/"+id+"/children", nil), "agentExecutions")
	require.Len(t, children, 2)
	for _, c := range children {
		e.waitStatus(c["id"].(string), "CANCELLED", time.Minute)
	}
}

// TestSpawnBadArguments: a spawn_agents call the agent cannot honour is
// answered with an error the model reads, and starts nothing.
func TestSpawnBadArguments(t *testing.T) {
	model := scripted.New(func(_ int, req agentsdk.ModelRequest) scripted.Turn {
		if !lastIsToolResult(req) {
			return scripted.Turn{ToolCalls: []agentsdk.ToolCall{{ID: "call_bad", Name: agentsdk.ToolSpawnAgents,
				Arguments: []byte(`{"agents":[{"prompt":"x","tools":["bash"]}]}`)}}}
		}
		return scripted.Turn{Text: "Could not."}
	})
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{model}, tools: []*agentsdk.Tool{echoTool(), agentsdk.SpawnAgentsTool()}})
	base := "/api/orgs/" + e.orgA.Slug + "/agent-executions"
	ex := e.ok(e.keyA, http.MethodPost, base, map[string]any{
		"kind": "react-agent", "userPrompt": "Spawn", "models": scriptedModel, "tools": []string{"echo", agentsdk.ToolSpawnAgents},
	})
	id := ex["id"].(string)
	e.waitStatus(id, "COMPLETED", time.Minute)
	rec := e.toolCall(base+"/"+id, "call_bad")
	require.Equal(t, "error", rec["status"])
	require.Contains(t, rec["output"].(map[string]any)["text"], `agents[0].tools: "bash" is not a tool this agent can give`)
	require.Empty(t, items(t, e.ok(e.keyA, http.MethodGet, base+"/"+id+"/children", nil), "agentExecutions"))
	e.fails(e.keyA, http.MethodGet, base+"/00000000-0000-0000-0000-000000000000/children", nil, http.StatusNotFound, "not_found")
}

// TestSpawnResumesAPausedChild: a sub-agent that spends its budget pauses
// and says so in the parent's result; the parent resumes it with
// spawn_agents' resumeRunId, and it finishes its work in the same tree.
func TestSpawnResumesAPausedChild(t *testing.T) {
	idRE := regexp.MustCompile(`PAUSED, execution ([0-9a-f-]{36})`)
	model := scripted.New(func(_ int, req agentsdk.ModelRequest) scripted.Turn {
		last := req.Messages[len(req.Messages)-1]
		if firstUserText(req) == "Lead" {
			switch {
			case !lastIsToolResult(req):
				return scripted.Turn{ToolCalls: []agentsdk.ToolCall{{ID: "call_spawn", Name: agentsdk.ToolSpawnAgents,
					Arguments: []byte(`{"agents":[{"name":"w","prompt":"work","maxSteps":1}]}`)}}}
			case idRE.MatchString(last.Text()):
				id := idRE.FindStringSubmatch(last.Text())[1]
				return scripted.Turn{ToolCalls: []agentsdk.ToolCall{{ID: "call_resume", Name: agentsdk.ToolSpawnAgents,
					Arguments: []byte(`{"agents":[{"name":"w","resumeRunId":"` + id + `","maxSteps":5}]}`)}}}
			}
			return scripted.Turn{Text: "done: " + strings.TrimSpace(last.Text()[strings.LastIndex(last.Text(), ")")+1:])}
		}
		var results int
		for _, m := range req.Messages {
			if m.Role == agentsdk.RoleToolResult {
				results++
			}
		}
		if results < 2 {
			return scripted.Turn{ToolCalls: []agentsdk.ToolCall{{ID: fmt.Sprintf("call_w%d", results), Name: "echo", Arguments: []byte(`{"text":"w"}`)}}}
		}
		return scripted.Turn{Text: "worked twice"}
	})
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{model}, tools: []*agentsdk.Tool{echoTool(), agentsdk.SpawnAgentsTool()}})
	base := "/api/orgs/" + e.orgA.Slug + "/agent-executions"
	ex := e.ok(e.keyA, http.MethodPost, base, map[string]any{
		"kind": "react-agent", "userPrompt": "Lead", "models": scriptedModel, "tools": []string{"echo", agentsdk.ToolSpawnAgents},
	})
	id := ex["id"].(string)
	done := e.waitStatus(id, "COMPLETED", 2*time.Minute)
	require.Equal(t, "done: worked twice", done["summary"])

	children := items(t, e.ok(e.keyA, http.MethodGet, base+"/"+id+"/children", nil), "agentExecutions")
	require.Len(t, children, 2)
	resumed, paused := children[0], children[1] // newest first
	require.Equal(t, "PAUSED", paused["status"])
	require.EqualValues(t, 1, paused["stepCount"])
	require.Equal(t, "COMPLETED", resumed["status"])
	require.Equal(t, paused["id"], resumed["resumedFrom"])
	require.EqualValues(t, 3, resumed["stepCount"], "steps count on across the resume: its echo call's, and the answer's")
	calls := e.all(base+"/"+resumed["id"].(string)+"/tool-calls?pageSize=50", "toolCalls")
	require.Len(t, calls, 1)
	require.EqualValues(t, 2, calls[0]["stepNumber"])
}
