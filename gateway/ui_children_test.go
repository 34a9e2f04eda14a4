package gateway_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
)

// familyModel: "Research" spawns two sub-agents, alpha (3 steps allowed)
// and beta (1 step: it pauses), then sums up; any other execution echoes
// twice, then answers. Every call costs 0.001 USD.
func familyModel() *scripted.Provider {
	return scripted.New(func(_ int, req agentsdk.ModelRequest) scripted.Turn {
		usage := agentsdk.Usage{Input: 10, Output: 5, Cost: 0.001}
		if firstUserText(req) == "Research" {
			if !lastIsToolResult(req) {
				return scripted.Turn{Usage: usage, ToolCalls: []agentsdk.ToolCall{{ID: "call_spawn", Name: agentsdk.ToolSpawnAgents,
					Arguments: []byte(`{"agents":[{"name":"alpha","prompt":"topic alpha","maxSteps":3},{"name":"beta","prompt":"topic beta","maxSteps":1}]}`)}}}
			}
			return scripted.Turn{Usage: usage, Text: "Summary."}
		}
		results := 0
		for _, m := range req.Messages {
			if m.Role == agentsdk.RoleToolResult {
				results++
			}
		}
		if results < 2 {
			return scripted.Turn{Usage: usage, ToolCalls: echoCall("call_w"+string(rune('0'+results)), "w")}
		}
		return scripted.Turn{Usage: usage, Text: "worked twice"}
	})
}

// TestUIChildrenAndResume: a parent's sub-agents are listed under it with
// their status, steps and cost, linked; a PAUSED one shows Resume, which
// starts the execution that continues it and opens it as it runs to
// COMPLETED; a resume the API refuses shows the API's error.
func TestUIChildrenAndResume(t *testing.T) {
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{familyModel()}, tools: []*agentsdk.Tool{echoTool(), agentsdk.SpawnAgentsTool()}})
	base := "/api/orgs/" + e.orgA.Slug + "/agent-executions"
	parent := e.ok(e.keyA, http.MethodPost, base, map[string]any{
		"kind": "react-agent", "userPrompt": "Research", "models": scriptedModel, "tools": []string{"echo", agentsdk.ToolSpawnAgents},
	})["id"].(string)
	e.waitStatus(parent, "COMPLETED", 2*time.Minute)
	children := items(t, e.ok(e.keyA, http.MethodGet, base+"/"+parent+"/children", nil), "agentExecutions")
	require.Len(t, children, 2)
	byPrompt := map[string]map[string]any{}
	for _, c := range children {
		byPrompt[c["input"].(map[string]any)["userPrompt"].(string)] = c
	}
	alpha, beta := byPrompt["topic alpha"], byPrompt["topic beta"]
	require.Equal(t, "COMPLETED", alpha["status"])
	require.Equal(t, "PAUSED", beta["status"])
	betaID := beta["id"].(string)

	ctx := browser(t)
	signIn(t, ctx, e, e.orgA.Slug, e.keyA)
	require.NoError(t, chromedp.Run(ctx,
		chromedp.WaitVisible("#executions", chromedp.ByID),
		chromedp.Navigate(e.base+"/#/executions/"+parent),
	))
	openPanel(t, ctx, "children-panel")
	require.NoError(t, chromedp.Run(ctx, chromedp.WaitVisible(".children .child", chromedp.ByQuery)))
	row := func(id string) string {
		return waitText(t, ctx, `.child[data-id="`+id+`"]`, func(s string) bool { return strings.Contains(s, "$") }, "the child's cost")
	}
	a := row(alpha["id"].(string))
	require.Contains(t, a, "COMPLETED")
	require.Contains(t, a, "topic alpha")
	require.Contains(t, a, "steps 3")
	require.Contains(t, a, "$0.0030", "three calls")
	b := row(betaID)
	require.Contains(t, b, "PAUSED")
	require.Contains(t, b, "$0.0010", "one call")
	require.Equal(t, "#/executions/"+betaID, eval[string](t, ctx, `document.querySelector('.child[data-id="`+betaID+`"] a').getAttribute("href")`))
	require.False(t, eval[bool](t, ctx, `!!(document.querySelector("#resume") || {}).offsetParent`), "no Resume on a completed run")
	screenshot(t, ctx, "children")

	// The paused sub-agent: its page names its parent and offers Resume.
	require.NoError(t, chromedp.Run(ctx, chromedp.Click(`.child[data-id="`+betaID+`"] a`, chromedp.ByQuery)))
	waitText(t, ctx, "#status", func(s string) bool { return s == "PAUSED" }, "the sub-agent's page")
	require.Contains(t, text(t, ctx, ".ext-header"), "sub-agent of "+parent[:8])
	require.NoError(t, chromedp.Run(ctx,
		chromedp.WaitVisible("#resume", chromedp.ByID),
		chromedp.SetValue("#resume-message", "Go on.", chromedp.ByID),
		chromedp.SetValue("#resume-steps", "5", chromedp.ByID),
	))
	waitText(t, ctx, "#transcript", func(s string) bool { return strings.Contains(s, "echo: w") }, "the transcript is in")
	screenshot(t, ctx, "resume")
	require.NoError(t, chromedp.Run(ctx, chromedp.Click("#resume", chromedp.ByID)))
	var next string
	poll(t, time.Minute, func() bool {
		h := eval[string](t, ctx, `location.hash`)
		next = strings.TrimPrefix(h, "#/executions/")
		return next != betaID && next != h
	}, "Resume opens the new execution")
	waitText(t, ctx, "#status", func(s string) bool { return s == "COMPLETED" }, "the resumed run completes")
	require.Contains(t, text(t, ctx, ".ext-header"), "resumes "+betaID[:8])
	require.Contains(t, text(t, ctx, "#transcript"), "Go on.")
	require.Contains(t, text(t, ctx, "#transcript"), "worked twice")
	resumed := e.ok(e.keyA, http.MethodGet, base+"/"+next, nil)
	require.Equal(t, betaID, resumed["resumedFrom"])
	require.Equal(t, "COMPLETED", resumed["status"])
	require.EqualValues(t, 5, resumed["maxSteps"], "the steps asked for")

	// A resume the API refuses: the page says why, in the API's words.
	require.NoError(t, chromedp.Run(ctx, chromedp.Navigate(e.base+"/#/executions/"+betaID), chromedp.WaitVisible("#resume", chromedp.ByID)))
	require.NoError(t, chromedp.Run(ctx, chromedp.Click("#resume", chromedp.ByID)))
	refused := waitText(t, ctx, ".resume-error", func(s string) bool { return s != "" }, "the refusal is shown")
	require.Contains(t, refused, "(conflict)")
	require.Contains(t, refused, "resumed already")
	require.Equal(t, "#/executions/"+betaID, eval[string](t, ctx, `location.hash`), "the page stays")
}
