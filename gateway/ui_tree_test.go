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
)

// pricedEchoingModel answers each user message with "answer to <it>", at
// 0.002 USD a call.
func pricedEchoingModel() *scripted.Provider {
	return scripted.New(func(_ int, req agentsdk.ModelRequest) scripted.Turn {
		last := req.Messages[len(req.Messages)-1]
		return scripted.Turn{Text: "answer to " + last.Text(),
			Usage: agentsdk.Usage{Input: int64(10 * len(req.Messages)), Output: 4, Cost: 0.002}}
	})
}

// entryWithText is the ID of the entry of entries whose first text block
// is text.
func entryWithText(t *testing.T, entries []map[string]any, text string) string {
	t.Helper()
	for _, en := range entries {
		c, _ := en["content"].(map[string]any)
		blocks, _ := c["content"].([]any)
		if len(blocks) > 0 && blocks[0].(map[string]any)["text"] == text {
			return en["id"].(string)
		}
	}
	require.Fail(t, "no entry says "+text)
	return ""
}

// clickUntil clicks sel until done holds: the panels re-render as the
// execution changes, and a click on a node replaced meanwhile is lost.
func clickUntil(t *testing.T, ctx context.Context, sel string, done func() bool, what string) {
	t.Helper()
	poll(t, time.Minute, func() bool {
		if done() {
			return true
		}
		_ = chromedp.Run(ctx, chromedp.Click(sel, chromedp.ByQuery))
		return done()
	}, what)
}

// openPanel opens the execution page's panel of class cls: the page moves
// as the transcript comes in, so a click may land beside the summary, and
// it is clicked until the panel is open.
func openPanel(t *testing.T, ctx context.Context, cls string) {
	t.Helper()
	sel := ".panel." + cls
	require.NoError(t, chromedp.Run(ctx, chromedp.WaitVisible(sel+" summary", chromedp.ByQuery)))
	clickUntil(t, ctx, sel+" summary", func() bool {
		return eval[bool](t, ctx, `!!(document.querySelector("`+sel+`") || {}).open`)
	}, "the panel "+cls+" opens")
}

// TestUITreeTimeTravel: an execution of three turns with a fork from its
// second answer is drawn as a tree — a row and a dot per entry, the fork's
// entries in a lane of their own off the entry it forks at, the active
// path marked — and a click on an entry shows the context the API returns
// for it: the messages, the tokens and, at a model call, its cost.
func TestUITreeTimeTravel(t *testing.T) {
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{pricedEchoingModel()}})
	base := "/api/orgs/" + e.orgA.Slug + "/agent-executions"
	id := e.ok(e.keyA, http.MethodPost, base, map[string]any{
		"kind": "react-agent", "userPrompt": "message 1", "models": scriptedModel, "systemPrompt": "Answer briefly.",
		"config": map[string]any{"mode": "multi-turn"},
	})["id"].(string)
	path := base + "/" + id
	for i := 2; i <= 3; i++ {
		e.waitStatus(id, "WAITING", time.Minute)
		e.ok(e.keyA, http.MethodPost, path+"/signal", map[string]any{"signalName": "userMessage", "signalValue": map[string]any{"text": fmt.Sprintf("message %d", i)}})
		poll(t, time.Minute, func() bool {
			return len(items(t, e.ok(e.keyA, http.MethodGet, path+"/messages", nil), "messages")) == 2*i
		}, "turn %d never answered", i)
	}
	e.waitStatus(id, "WAITING", time.Minute)
	entries := e.all(path+"/entries?pageSize=500", "entries")
	forkAt := entryWithText(t, entries, "answer to message 2")
	fid := e.ok(e.keyA, http.MethodPost, path+"/fork", map[string]any{"entryId": forkAt, "userPrompt": "a different question"})["id"].(string)
	e.waitStatus(fid, "WAITING", time.Minute)
	forkEntries := e.all(base+"/"+fid+"/entries?pageSize=500", "entries")
	onTree := len(onPath(entries)) + len(onPath(forkEntries)) // the llm_call records are folded into their answers' rows

	ctx := browser(t)
	signIn(t, ctx, e, e.orgA.Slug, e.keyA)
	require.NoError(t, chromedp.Run(ctx,
		chromedp.WaitVisible("#executions", chromedp.ByID),
		chromedp.Navigate(e.base+"/#/executions/"+id),
	))
	openPanel(t, ctx, "tree-panel")
	require.NoError(t, chromedp.Run(ctx, chromedp.WaitVisible(".tree-node", chromedp.ByQuery)))
	require.Equal(t, onTree, eval[int](t, ctx, `document.querySelectorAll(".tree .tree-node").length`), "a row per entry")
	require.Equal(t, onTree, eval[int](t, ctx, `document.querySelectorAll(".tree svg circle").length`), "a dot per entry")
	require.Equal(t, []string{forkAt}, eval[[]string](t, ctx, `[...document.querySelectorAll(".tree-node.fork-point")].map((b) => b.dataset.entry)`),
		"the branch point is the entry the fork starts at")
	require.Equal(t, 2, eval[int](t, ctx, `document.querySelectorAll(".tree-node.forked").length`), "the fork's question and answer")
	require.Contains(t, text(t, ctx, ".tree-node.forked"), "a different question")
	require.Equal(t, fid, eval[string](t, ctx, `document.querySelector(".tree-node.forked").dataset.exec`))
	require.Equal(t, len(onPath(entries)), eval[int](t, ctx, `document.querySelectorAll(".tree-node.active").length`),
		"the active path is the execution's own conversation, not the fork")
	require.Zero(t, eval[int](t, ctx, `document.querySelectorAll(".tree-node.forked.active").length`))
	require.GreaterOrEqual(t, eval[int](t, ctx, `Number(document.querySelector(".tree svg").getAttribute("width"))`), 32, "two lanes: the fork's is beside the main one")
	require.Contains(t, text(t, ctx, ".tree"), "llm_call: scripted/scripted-1", "each answer shows its model call")

	// Time travel at the third answer: what its call was sent.
	answer := entryWithText(t, entries, "answer to message 3")
	want := e.ok(e.keyA, http.MethodGet, path+"/entries/"+answer+"/context", nil)
	clickUntil(t, ctx, `.tree-node[data-entry="`+answer+`"]`, func() bool { return travelledTo(t, ctx, answer) }, "the context of the third answer shows")
	require.Contains(t, text(t, ctx, "#time-travel h4"), "Sent to scripted/scripted-1")
	require.Equal(t, fmt.Sprintf("%d tokens in context", int64Field(t, want, "tokens")), text(t, ctx, "#time-travel .tt-tokens"))
	require.Equal(t, fmt.Sprintf("%d in / %d out", int64Field(t, want, "callInputTokens"), int64Field(t, want, "callOutputTokens")), text(t, ctx, "#time-travel .tt-call"))
	require.Equal(t, "$0.0020", text(t, ctx, "#time-travel .tt-cost"), "the call's cost")
	requireShownMessages(t, ctx, want)
	screenshot(t, ctx, "tree-time-travel")

	// And at the fork's answer: its own execution's context, the shared
	// prefix and its question.
	forkAnswer := entryWithText(t, forkEntries, "answer to a different question")
	want = e.ok(e.keyA, http.MethodGet, base+"/"+fid+"/entries/"+forkAnswer+"/context", nil)
	clickUntil(t, ctx, `.tree-node[data-entry="`+forkAnswer+`"]`, func() bool { return travelledTo(t, ctx, forkAnswer) }, "the context of the fork's answer shows")
	requireShownMessages(t, ctx, want)
	shown := text(t, ctx, "#time-travel .tt-messages")
	require.NotContains(t, shown, "message 3", "the fork never saw the third message")
}

// travelledTo reports whether the time travel view shows the context at
// entry id, loaded.
func travelledTo(t *testing.T, ctx context.Context, id string) bool {
	return eval[bool](t, ctx, `(() => {
		const b = document.querySelector("#time-travel");
		return !!b && b.dataset.entry === "`+id+`" && !!b.querySelector(".tt-messages");
	})()`)
}

// requireShownMessages: the time travel view lists the context's messages,
// in order, with their texts.
func requireShownMessages(t *testing.T, ctx context.Context, want map[string]any) {
	t.Helper()
	msgs := want["messages"].([]any)
	shown := eval[[]string](t, ctx, `[...document.querySelectorAll("#time-travel .tt-msg")].map((li) => li.innerText)`)
	require.Len(t, shown, len(msgs), "every message the model was sent")
	for i, m := range msgs {
		mm := m.(map[string]any)
		require.True(t, strings.HasPrefix(shown[i], mm["role"].(string)), "message %d is the %s's: %q", i, mm["role"], shown[i])
		for _, b := range mm["content"].([]any) {
			if tx, ok := b.(map[string]any)["text"].(string); ok {
				require.Contains(t, shown[i], tx, "message %d", i)
			}
		}
	}
}
