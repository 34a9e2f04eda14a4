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

// pricedStepper is stepper whose calls cost 0.01 USD a turn more each
// (0.01, 0.02, …), so each call's cost is its own.
func pricedStepper(until int) *scripted.Provider {
	return scripted.New(func(turn int, req agentsdk.ModelRequest) scripted.Turn {
		usage := agentsdk.Usage{Input: int64(10 * len(req.Messages)), Output: 5, Cost: 0.01 * float64(turn+1)}
		if turn < until {
			return scripted.Turn{Usage: usage, ToolCalls: []agentsdk.ToolCall{{ID: fmt.Sprintf("call_%d", turn), Name: "echo",
				Arguments: []byte(fmt.Sprintf(`{"text":"step %d"}`, turn))}}}
		}
		return scripted.Turn{Usage: usage, Text: "All steps done."}
	})
}

// TestTokenTimelineCountsCallsAndCost: the timeline marks each model
// call with its tokens and cost and accumulates the cost along the path,
// across pages; the time travel view of a call carries the same figures.
func TestTokenTimelineCountsCallsAndCost(t *testing.T) {
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{pricedStepper(3)}, tools: []*agentsdk.Tool{echoTool()}})
	base := "/api/orgs/" + e.orgA.Slug + "/agent-executions"
	id := e.ok(e.keyA, http.MethodPost, base, map[string]any{
		"kind": "react-agent", "userPrompt": "Steps.", "models": scriptedModel, "tools": []string{"echo"},
	})["id"].(string)
	path := base + "/" + id
	e.waitStatus(id, "COMPLETED", time.Minute)

	points := e.all(path+"/token-timeline?pageSize=2", "points") // pages of two: the cursor carries the cost
	require.Equal(t, points, items(t, e.ok(e.keyA, http.MethodGet, path+"/token-timeline?pageSize=500", nil), "points"))
	var calls int
	total := 0.0
	for _, p := range points {
		if p["modelCall"] == true {
			calls++
			require.InDelta(t, 0.01*float64(calls), p["cost"], 1e-9, "call %d's own cost", calls)
			require.EqualValues(t, 5, int64Field(t, p, "callOutputTokens"))
			require.Positive(t, int64Field(t, p, "callInputTokens"))
			total += p["cost"].(float64)

			ctx := e.ok(e.keyA, http.MethodGet, path+"/entries/"+p["entryId"].(string)+"/context", nil)
			require.Equal(t, true, ctx["sent"])
			require.Equal(t, p["cost"], ctx["cost"], "time travel shows the call's cost")
			require.Equal(t, p["callInputTokens"], ctx["callInputTokens"])
		} else {
			require.Zero(t, p["cost"])
			require.Zero(t, int64Field(t, p, "callInputTokens"))
		}
		require.InDelta(t, total, p["costTotal"], 1e-9, "the cost so far")
	}
	require.Equal(t, 4, calls, "three tool-calling turns and the answer")
	usage := e.ok(e.keyA, http.MethodGet, path+"/usage", nil)
	require.InDelta(t, usage["total"].(map[string]any)["cost"], points[len(points)-1]["costTotal"], 1e-9, "the path's cost is the usage's")

	first := items(t, e.ok(e.keyA, http.MethodGet, path+"/entries?pageSize=1", nil), "entries")[0]
	ctx := e.ok(e.keyA, http.MethodGet, path+"/entries/"+first["id"].(string)+"/context", nil)
	require.Equal(t, false, ctx["sent"])
	require.Zero(t, ctx["cost"], "no call at the user's message")
}
