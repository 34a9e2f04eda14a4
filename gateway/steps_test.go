package gateway_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
)

// TestOneStepCounter: a step is a model call and the tool calls it asks
// for. The messages and tool calls of one turn carry the same stepNumber;
// stepCount counts the model calls and maxSteps budgets them; a resume
// numbers on from where the paused execution stopped, its messages and
// tool calls alike.
func TestOneStepCounter(t *testing.T) {
	// Two tool calls an answer, for the first three answers; then a
	// final one.
	model := scripted.New(func(turn int, _ agentsdk.ModelRequest) scripted.Turn {
		if turn < 3 {
			return scripted.Turn{Text: fmt.Sprintf("Step %d.", turn+1), ToolCalls: append(
				echoCall(fmt.Sprintf("call_%d_a", turn), "a"), echoCall(fmt.Sprintf("call_%d_b", turn), "b")...)}
		}
		return scripted.Turn{Text: "Done."}
	})
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{model}, tools: []*agentsdk.Tool{echoTool()}})
	base := "/api/orgs/" + e.orgA.Slug + "/agent-executions"
	ex := e.ok(e.keyA, http.MethodPost, base, map[string]any{
		"kind": "react-agent", "userPrompt": "Go.", "models": scriptedModel, "tools": []string{"echo"},
		"config": map[string]any{"maxSteps": 2},
	})
	id := ex["id"].(string)
	paused := e.waitStatus(id, "PAUSED", time.Minute)
	require.EqualValues(t, 2, paused["stepCount"], "two model calls, four tool calls: two steps")

	// steps lists the stepNumbers of a list, in its order, and of the
	// messages by role.
	type numbered struct {
		role string
		step float64
	}
	messages := func(id string) []numbered {
		var out []numbered
		for _, m := range e.all(base+"/"+id+"/messages?pageSize=500", "messages") {
			out = append(out, numbered{m["role"].(string), m["stepNumber"].(float64)})
		}
		return out
	}
	callSteps := func(id string) []float64 {
		var out []float64
		for _, c := range e.all(base+"/"+id+"/tool-calls?pageSize=500", "toolCalls") {
			out = append(out, c["stepNumber"].(float64))
		}
		return out
	}
	require.Equal(t, []numbered{{"user", 0}, {"assistant", 1}, {"tool_result", 1}, {"tool_result", 1},
		{"assistant", 2}, {"tool_result", 2}, {"tool_result", 2}}, messages(id), "an answer and its results share its step")
	require.Equal(t, []float64{1, 1, 2, 2}, callSteps(id), "a tool call has the step of the answer that asked for it")

	// The resume numbers on: its message in step 2's place, then step 3
	// with its calls, then the answer, step 4.
	rid := e.ok(e.keyA, http.MethodPost, base+"/"+id+"/resume", map[string]any{"maxSteps": 5, "message": "Go on."})["id"].(string)
	done := e.waitStatus(rid, "COMPLETED", time.Minute)
	require.EqualValues(t, 4, done["stepCount"], "cumulative across the resume")
	got := messages(rid)
	require.Equal(t, []numbered{{"user", 2}, {"assistant", 3}, {"tool_result", 3}, {"tool_result", 3}, {"assistant", 4}}, got[7:],
		"the resume's messages go on from the paused step")
	require.Equal(t, []float64{3, 3}, callSteps(rid), "and its tool calls with them")
}
