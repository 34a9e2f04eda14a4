package gateway_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
)

// setSelect picks value in the select sel and tells the page it changed.
func setSelect(sel, value string) chromedp.Action {
	return chromedp.Evaluate(fmt.Sprintf(`(() => { const s = document.querySelector(%q); s.value = %q; s.dispatchEvent(new Event('change')); })()`, sel, value), nil)
}

// TestUICounterfactual: from an execution's "What if…" panel a person
// replaces a tool call with a call of another tool; the comparison page
// shows the branch's new call waiting, Approve runs it, and the two paths
// end side by side — the original's later call answered from its record.
func TestUICounterfactual(t *testing.T) {
	w := newWhatIf(t)
	e, id, echoRuns, noteRuns := w.env, w.id, w.echoRuns, w.noteRuns
	answer := e.entryCalling(w.path, "call_a")

	ctx := browser(t)
	signIn(t, ctx, e, e.orgA.Slug, e.keyA)
	require.NoError(t, chromedp.Run(ctx, chromedp.WaitVisible("#executions", chromedp.ByID), chromedp.Navigate(e.base+"/#/executions/"+id)))
	waitText(t, ctx, "#status", func(s string) bool { return s == "COMPLETED" }, "the original has completed")
	// The panels re-render as the page refreshes: the form is driven by
	// script, never through a node handle that may have been replaced.
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Evaluate(`[...document.querySelectorAll('.panel summary')].find((s) => s.innerText.includes('What if')).click()`, nil)))
	poll(t, time.Minute, func() bool { return eval[bool](t, ctx, `!!document.querySelector('#cf-entry')`) }, "the What if form")
	require.NoError(t, chromedp.Run(ctx, setSelect("#cf-entry", answer)))
	require.Equal(t, "action", eval[string](t, ctx, `document.querySelector('#cf-change').value`), "an answer that calls tools offers another tool call")
	require.JSONEq(t, `{"text":"a"}`, eval[string](t, ctx, `document.querySelector('#cf-arguments').value`), "prefilled with the call's arguments")
	require.NoError(t, chromedp.Run(ctx, chromedp.Evaluate(`(() => {
		document.querySelector('#cf-tool').value = 'note';
		document.querySelector('#cf-arguments').value = '{"text":"x"}';
		document.querySelector('#cf-run').click();
	})()`, nil)))
	waitText(t, ctx, "#cf-compare", func(s string) bool { return strings.Contains(s, "awaiting_approval") }, "the new side-effecting call waits")
	require.Zero(t, noteRuns.Load())
	require.Contains(t, text(t, ctx, "#cf-caption"), "A different tool call")
	require.NoError(t, chromedp.Run(ctx, chromedp.Evaluate(`document.querySelector('.cf-approve').click()`, nil)))
	got := waitText(t, ctx, "#cf-compare", func(s string) bool { return strings.Contains(s, "done differently") }, "the branch ends")
	require.Contains(t, got, "from the record", "echo(b) is marked as answered from the record")
	original := text(t, ctx, `section[aria-label="Original"]`)
	alternative := text(t, ctx, `section[aria-label="Counterfactual"]`)
	require.Contains(t, original, `echo({"text":"a"})`)
	require.NotContains(t, original, "note")
	require.Contains(t, alternative, `note({"text":"x"})`)
	require.Contains(t, alternative, "done differently")
	require.EqualValues(t, 1, noteRuns.Load())
	require.EqualValues(t, 2, echoRuns.Load(), "the branch did not run echo again")
	screenshot(t, ctx, "counterfactual")
}

// TestUISearch: the search page finds executions by the tool called and
// its arguments, shows a definition's statistics and the failure
// clusters, and a cluster's link searches its failures.
func TestUISearch(t *testing.T) {
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{promptedModel()}, tools: []*agentsdk.Tool{echoTool()}})
	def := e.ok(e.keyA, http.MethodPost, "/api/orgs/"+e.orgA.Slug+"/agent-definitions", map[string]any{
		"name": "Echoer", "slug": "echoer", "models": scriptedModel, "tools": []string{"echo"},
	})["id"].(string)
	start := func(prompt, status string) string {
		id := e.ok(e.keyA, http.MethodPost, "/api/orgs/"+e.orgA.Slug+"/agent-executions", map[string]any{
			"agentDefinitionId": def, "userPrompt": prompt,
		})["id"].(string)
		e.waitStatus(id, status, time.Minute)
		return id
	}
	needle := start("echo a needle", "COMPLETED")
	start("echo hay", "COMPLETED")
	start("say hi", "COMPLETED")
	failed := start("echo z then fail", "FAILED")

	ctx := browser(t)
	signIn(t, ctx, e, e.orgA.Slug, e.keyA)
	require.NoError(t, chromedp.Run(ctx, chromedp.WaitVisible("#executions", chromedp.ByID),
		chromedp.Click("#nav-search", chromedp.ByID),
		chromedp.WaitVisible("#search-form", chromedp.ByID),
		chromedp.SetValue("#search-toolName", "echo", chromedp.ByID),
		chromedp.SetValue("#search-toolArguments", "needle", chromedp.ByID),
		chromedp.Click("#search-go", chromedp.ByID),
	))
	poll(t, time.Minute, func() bool {
		return eval[int](t, ctx, `document.querySelectorAll('#search-results tr[data-id]').length`) == 1
	}, "one execution has echo with a needle")
	require.Equal(t, needle, eval[string](t, ctx, `document.querySelector('#search-results tr[data-id]').dataset.id`))
	require.Contains(t, text(t, ctx, "#search-results"), "echo")

	// A definition's search shows its statistics.
	require.NoError(t, chromedp.Run(ctx, chromedp.Navigate(e.base+"/#/search?agentDefinitionId="+def)))
	stats := waitText(t, ctx, "#definition-stats", func(s string) bool { return strings.Contains(s, "4 executions") }, "the definition's statistics")
	require.Contains(t, stats, "COMPLETED 3")
	require.Contains(t, stats, "Tool calls")
	poll(t, time.Minute, func() bool {
		return eval[int](t, ctx, `document.querySelectorAll('#search-results tr[data-id]').length`) == 4
	}, "the definition's four executions")

	clusters := waitText(t, ctx, "#failure-clusters", func(s string) bool { return strings.Contains(s, "model refused") }, "a failure cluster")
	require.Contains(t, clusters, "echo → completed", "the last decision before the failure")
	screenshot(t, ctx, "search")
	require.NoError(t, chromedp.Run(ctx, chromedp.Click(`#failure-clusters a[href^="#/search"]`, chromedp.ByQuery)))
	poll(t, time.Minute, func() bool {
		return eval[string](t, ctx, `[...document.querySelectorAll('#search-results tr[data-id]')].map((r) => r.dataset.id).join(',')`) == failed
	}, "the cluster's link finds its failure")
}
