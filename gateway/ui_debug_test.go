package gateway_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/gateway"
)

// openPanel opens the execution page's side panel titled name.
func openPanelNamed(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	poll(t, time.Minute, func() bool {
		return eval[bool](t, ctx, fmt.Sprintf(`(() => {
			const s = [...document.querySelectorAll(".panel summary")].find((s) => s.textContent === %q);
			if (!s) return false;
			if (!s.parentElement.open) s.click();
			return true;
		})()`, name))
	}, "no panel %q", name)
}

// TestUIDebugPanels: the execution page lists the decision points (their
// outcomes, the approval's decider, a filter) and makes and shows the
// explanation of the run.
func TestUIDebugPanels(t *testing.T) {
	var reqs requests
	model := decisionScript(&reqs)
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{model}, tools: decisionTools(),
		gateway: func(o *gateway.Options) { o.ExplainModel = scripted.Model("scripted-explain") }})
	base := "/api/orgs/" + e.orgA.Slug + "/agent-executions"
	x := e.ok(e.keyA, http.MethodPost, base, map[string]any{
		"kind": "react-agent", "userPrompt": "Refund order 4711.", "models": scriptedModel,
		"tools": []string{"echo", "lookup", "refund"}, "config": map[string]any{"toolPolicy": map[string]string{"refund": "ask"}},
	})
	id := x["id"].(string)
	path := base + "/" + id
	poll(t, time.Minute, func() bool {
		return e.do(e.keyA, http.MethodPost, path+"/tool-calls/call_refund/approval", map[string]any{"decision": "approve"}).Status == http.StatusOK
	}, "the refund never waited for approval")
	e.waitStatus(id, "COMPLETED", time.Minute)

	ctx := browser(t)
	signIn(t, ctx, e, e.orgA.Slug, e.keyA)
	require.NoError(t, chromedp.Run(ctx, chromedp.WaitVisible("#executions", chromedp.ByID), chromedp.Navigate(e.base+"/#/executions/"+id)))
	waitText(t, ctx, "#status", func(s string) bool { return s == "COMPLETED" }, "completed")
	openPanelNamed(t, ctx, "Decision points")
	list := waitText(t, ctx, "#decision-points", func(s string) bool { return strings.Contains(s, "stop") }, "the decision points")
	require.Contains(t, list, "lookup · error")
	require.Contains(t, list, "order 4711 not found")
	require.Contains(t, list, "Thinking: The user wants order 4711 checked")
	require.Contains(t, list, "approve by "+e.keyID(e.keyA))
	require.Equal(t, 5, eval[int](t, ctx, `document.querySelectorAll("#decision-points li.dp").length`))
	// By script: a refresh of the panel re-inserts its nodes, which
	// invalidates the node ids chromedp's own actions hold.
	require.NoError(t, chromedp.Run(ctx, chromedp.Evaluate(`(() => {
		const k = document.querySelector("#dp-kind");
		k.value = "approval";
		k.dispatchEvent(new Event("change"));
	})()`, nil)))
	poll(t, time.Minute, func() bool {
		return eval[int](t, ctx, `document.querySelectorAll("#decision-points li.dp").length`) == 1
	}, "the kind filter")
	require.Contains(t, text(t, ctx, "#decision-points"), "approval")
	screenshot(t, ctx, "decision-points")

	openPanelNamed(t, ctx, "Explanation")
	poll(t, time.Minute, func() bool {
		return eval[bool](t, ctx, `(() => { const b = document.querySelector("#explain"); if (!b) return false; b.click(); return true; })()`)
	}, "the Explain button")
	waitText(t, ctx, "#explanation-text", func(s string) bool { return strings.Contains(s, "refunded order 4711") }, "the explanation")
	require.Contains(t, text(t, ctx, "#explanation-meta"), "completed")
	require.Len(t, reqs.all(), 4, "the explanation is not one of the agent's calls")
	screenshot(t, ctx, "explanation")
}
