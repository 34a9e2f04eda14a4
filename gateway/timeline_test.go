package gateway_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
)

// TestTokenTimeline: a point per entry of the conversation; at each
// answer a model call wrote the size is the provider's count of what it
// read and wrote, between them estimates that only grow; all against the
// model's window.
func TestTokenTimeline(t *testing.T) {
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{stepper(3)}, tools: []*agentsdk.Tool{echoTool()}})
	base := "/api/orgs/" + e.orgA.Slug + "/agent-executions"
	ex := e.ok(e.keyA, http.MethodPost, base, map[string]any{
		"kind": "react-agent", "userPrompt": "Steps.", "models": scriptedModel, "tools": []string{"echo"},
	})
	id := ex["id"].(string)
	path := base + "/" + id
	e.waitStatus(id, "COMPLETED", time.Minute)

	tl := e.ok(e.keyA, http.MethodGet, path+"/token-timeline", nil)
	require.EqualValues(t, 32768, tl["limit"], "the scripted model's window")
	points := items(t, tl, "points")
	entries := onPath(e.all(path+"/entries?pageSize=500", "entries"))
	require.Len(t, points, len(entries), "a point per entry of the conversation")
	var measured int
	prev := 0.0
	for i, p := range points {
		require.Equal(t, entries[i]["id"], p["entryId"])
		size := mustNumber(t, p["contextTokens"])
		require.InDelta(t, size/32768, p["ratio"], 1e-9)
		if measuredAt(entries[i]) {
			measured++
			require.Equal(t, false, p["estimated"])
			usage := entries[i]["content"].(map[string]any)["usage"].(map[string]any)
			require.Equal(t, usage["input"].(float64)+usage["output"].(float64), size,
				"the provider's count of what the call read and of its answer")
		} else {
			require.Equal(t, true, p["estimated"])
			require.Greater(t, size, prev, "a message only adds")
		}
		prev = size
	}
	require.Equal(t, 4, measured)
	e.fails(e.keyB, http.MethodGet, "/api/orgs/"+e.orgB.Slug+"/agent-executions/"+id+"/token-timeline", nil, http.StatusNotFound, "not_found")
}
