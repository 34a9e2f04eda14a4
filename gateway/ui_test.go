package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/entrystore"
)

// The web UI's tests drive headless Chromium (Debian's chromium package,
// which make test installs when missing) against a real gateway and
// worker. Each asserts on what the page shows.

// storyEnd ends the first answer of the UI's scripted model: the
// transcript must hold it exactly once, however the page was reloaded.
const storyEnd = "THE-END"

func uiModel() *scripted.Provider {
	var story strings.Builder
	for i := range 60 {
		fmt.Fprintf(&story, "word%d ", i)
	}
	story.WriteString(storyEnd)
	return scripted.New(func(_ int, req agentsdk.ModelRequest) scripted.Turn {
		lastMsg := req.Messages[len(req.Messages)-1]
		last := lastMsg.Text()
		switch {
		case lastMsg.Role == agentsdk.RoleToolResult:
			return scripted.Turn{Text: "Second answer: done."}
		case strings.Contains(last, "follow"):
			return scripted.Turn{Text: "Let me echo that.", ToolCalls: echoCall("call_ui_"+fmt.Sprint(len(req.Messages)), "hi from the UI")}
		case strings.Contains(last, "poem"):
			return scripted.Turn{Text: "A short poem."}
		}
		return scripted.Turn{Text: story.String()}
	}).WithLatency(scripted.Latency{TokenDelay: 40 * time.Millisecond})
}

// browser starts headless Chromium for one test.
func browser(t *testing.T) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		path, err = exec.LookPath("chromium-browser")
	}
	require.NoError(t, err, "the UI tests need Chromium; make test installs it (apt-get install chromium)")
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.WindowSize(1280, 900))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })
	require.NoError(t, chromedp.Run(ctx, chromedp.Navigate("about:blank")), "start Chromium")
	return ctx
}

// signIn opens the UI and signs in with org and key.
func signIn(t *testing.T, ctx context.Context, e *env, org, key string) {
	t.Helper()
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate(e.base+"/#/login"),
		chromedp.WaitVisible("#org", chromedp.ByID),
		chromedp.SetValue("#org", org, chromedp.ByID),
		chromedp.SetValue("#key", key, chromedp.ByID),
		chromedp.Click("#signin", chromedp.ByID),
	))
}

// text is the inner text of the element sel.
func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	// Read in one evaluation: the transcript re-renders as events arrive,
	// so a node looked up first may be gone when read.
	return eval[string](t, ctx, fmt.Sprintf(`(document.querySelector(%q) || {}).innerText || ""`, sel))
}

// eval evaluates a JavaScript expression on the page.
func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	var v T
	require.NoError(t, chromedp.Run(ctx, chromedp.Evaluate(js, &v)), js)
	return v
}

// waitText polls until the element sel's text satisfies ok.
func waitText(t *testing.T, ctx context.Context, sel string, ok func(string) bool, what string) string {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		got := text(t, ctx, sel)
		if ok(got) {
			return got
		}
		if time.Now().After(deadline) {
			// The text as last read (poll's message would hold the
			// text before the first read).
			require.Fail(t, "condition not met in time", "%s (last text: %q; status %q)", what, got, text(t, ctx, "#status"))
		}
		<-tick.C
	}
}

// screenshot saves the page as docs/ui-<name>.png when
// AGENTREE_UI_SCREENSHOTS=1 (how the checked-in ones are made), else in a
// temporary directory; either way it must be a PNG.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	var png []byte
	require.NoError(t, chromedp.Run(ctx, chromedp.FullScreenshot(&png, 100)))
	require.True(t, len(png) > 1000 && string(png[1:4]) == "PNG", "a screenshot")
	dir := t.TempDir()
	if os.Getenv("AGENTREE_UI_SCREENSHOTS") == "1" {
		dir = filepath.Join("..", "docs")
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ui-"+name+".png"), png, 0o644))
}

// TestUIExecutionLifecycle signs in (a wrong key first), starts a
// multi-turn execution and sees its tokens stream, reloads in the middle
// of the answer and sees the same transcript continue, sends a follow-up,
// and cancels.
func TestUIExecutionLifecycle(t *testing.T) {
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{uiModel()}, tools: []*agentsdk.Tool{echoTool()}})
	ctx := browser(t)

	signIn(t, ctx, e, e.orgA.Slug, "agt_not-a-key")
	waitText(t, ctx, "#login-error", func(s string) bool { return strings.Contains(s, "API key was not accepted") }, "a wrong key is refused clearly")
	require.Empty(t, eval[string](t, ctx, `sessionStorage.getItem("agentree.key") || ""`), "a refused key is not kept")
	signIn(t, ctx, e, e.orgA.Slug, e.keyA)
	require.NoError(t, chromedp.Run(ctx, chromedp.WaitVisible("#executions", chromedp.ByID)))
	require.NotContains(t, eval[string](t, ctx, `location.href`), e.keyA, "the key is never in a URL")

	// Start a multi-turn execution from the list's form.
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Click("details.card > summary", chromedp.ByQuery),
		chromedp.WaitVisible("#new-prompt", chromedp.ByID),
		chromedp.SetValue("#new-model", "scripted/scripted-1", chromedp.ByID),
		chromedp.SetValue("#new-prompt", "Tell me a long story.", chromedp.ByID),
		chromedp.SetValue("#new-tools", "echo", chromedp.ByID),
		chromedp.Click("#new-start", chromedp.ByID),
	))
	partial := waitText(t, ctx, ".msg.assistant.live", func(s string) bool { return strings.Contains(s, "word5 ") }, "tokens stream in")
	require.NotContains(t, partial, storyEnd, "caught mid-stream")
	screenshot(t, ctx, "execution-streaming")
	href := eval[string](t, ctx, `location.href`)
	id := href[strings.LastIndex(href, "/")+1:]

	// Reload in the middle of the answer: the same transcript, continuing.
	require.NoError(t, chromedp.Run(ctx, chromedp.Reload()))
	words := strings.Fields(partial)
	again := waitText(t, ctx, "#transcript", func(s string) bool { return strings.Contains(s, words[len(words)-1]) }, "the answer so far is back after the reload")
	require.Contains(t, again, "Tell me a long story.")
	final := waitText(t, ctx, "#transcript", func(s string) bool { return strings.Contains(s, storyEnd) }, "the answer goes on live")
	waitText(t, ctx, "#status", func(s string) bool { return s == "WAITING" }, "the execution waits for input")
	final = text(t, ctx, "#transcript")
	require.Equal(t, 1, strings.Count(final, storyEnd), "no duplicate after the reload: %q", final)
	require.Equal(t, 1, strings.Count(final, "word5 "), "no token twice: %q", final)
	require.False(t, eval[bool](t, ctx, `document.querySelector("#message").disabled`), "input enabled while WAITING")
	require.Zero(t, eval[int](t, ctx, `document.querySelectorAll(".spinner").length`), "no spinner while waiting")

	// A follow-up.
	require.NoError(t, chromedp.Run(ctx,
		chromedp.SetValue("#message", "A follow-up, please.", chromedp.ByID),
		chromedp.Click("#send", chromedp.ByID),
	))
	require.Empty(t, eval[string](t, ctx, `document.querySelector("#message").value`), "the click sent the follow-up (Send was enabled)")
	waitText(t, ctx, "#transcript", func(s string) bool { return strings.Contains(s, "Second answer: done.") }, "the follow-up is answered")
	waitText(t, ctx, "#status", func(s string) bool { return s == "WAITING" }, "waiting again")
	final = text(t, ctx, "#transcript")
	require.Equal(t, 1, strings.Count(final, "A follow-up, please."), "the follow-up shows once: %q", final)
	// The tool call is a card: its name, status and result.
	card := waitText(t, ctx, ".tool", func(s string) bool { return strings.Contains(s, "completed") }, "the tool card completes")
	require.Contains(t, card, "echo")
	require.Contains(t, card, "completed")
	require.Contains(t, card, "echo: hi from the UI")
	// The transcript re-renders as lifecycle events land; a click on a
	// card replaced meanwhile is lost, so the button is pressed until the
	// output shows (it is kept across re-renders once fetched).
	var full string
	poll(t, time.Minute, func() bool {
		full = eval[string](t, ctx, `(document.querySelector(".tool .full") || {}).innerText || ""`)
		if full == "" {
			// A click on a node replaced meanwhile fails; the next tick
			// clicks the new one.
			_ = chromedp.Run(ctx, chromedp.Click(".tool button.link", chromedp.ByQuery))
		}
		return full != ""
	}, "the full output on demand")
	require.Contains(t, full, "echo: hi from the UI")
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Click(".panel summary", chromedp.ByQuery), // usage and cost
		chromedp.WaitVisible(".panel table", chromedp.ByQuery),
		chromedp.Click(".panel.tree-panel summary", chromedp.ByQuery),
		chromedp.WaitVisible(".tree .active", chromedp.ByQuery),
	))
	require.Contains(t, text(t, ctx, ".panel table"), "scripted/scripted-1")
	require.Contains(t, text(t, ctx, ".tree"), "llm_call: scripted/scripted-1", "the tree shows each answer's model call")
	require.NotContains(t, text(t, ctx, ".tree"), "branch", "a model call's record is not a branch")
	screenshot(t, ctx, "execution-finished")

	// Cancel: the status is final and nothing spins.
	require.NoError(t, chromedp.Run(ctx, chromedp.Click("#cancel", chromedp.ByID)))
	waitText(t, ctx, "#status", func(s string) bool { return s == "CANCELLED" }, "cancelled")
	poll(t, 10*time.Second, func() bool { return eval[int](t, ctx, `document.querySelectorAll(".spinner").length`) == 0 }, "no spinner once terminal")
	require.True(t, eval[bool](t, ctx, `document.querySelector("#message").disabled`), "no input once terminal")
	require.Equal(t, "CANCELLED", e.ok(e.keyA, "GET", e.execPath(e.orgA, id), nil)["status"], "the REST API agrees")

	// The list shows it, with its live status.
	require.NoError(t, chromedp.Run(ctx, chromedp.Navigate(e.base+"/#/executions")))
	waitText(t, ctx, "#executions", func(s string) bool {
		return strings.Contains(s, "CANCELLED") && strings.Contains(s, "Tell me a long story.")
	}, "the list shows the execution")
	screenshot(t, ctx, "executions")

	// Readable on a phone: nothing wider than the screen.
	for _, page := range []string{"/#/executions", "/#/executions/" + id} {
		require.NoError(t, chromedp.Run(ctx, chromedp.EmulateViewport(390, 844), chromedp.Navigate(e.base+page)))
		waitText(t, ctx, "main", func(s string) bool { return strings.Contains(s, "Tell me a long story.") }, "the page renders at 390 px")
		require.LessOrEqual(t, eval[int](t, ctx, `document.documentElement.scrollWidth`), 390, "%s fits 390 px", page)
	}
	screenshot(t, ctx, "execution-narrow")
}

// TestUIDefinitions creates, edits, starts from and deletes a definition
// in the browser.
func TestUIDefinitions(t *testing.T) {
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{uiModel()}})
	ctx := browser(t)
	signIn(t, ctx, e, e.orgA.Slug, e.keyA)
	require.NoError(t, chromedp.Run(ctx,
		chromedp.WaitVisible("#executions", chromedp.ByID),
		chromedp.Navigate(e.base+"/#/definitions/new"),
		chromedp.WaitVisible("#def-name", chromedp.ByID),
		chromedp.SetValue("#def-name", "Poet", chromedp.ByID),
		chromedp.SetValue("#def-slug", "poet", chromedp.ByID),
		chromedp.SetValue("#def-models", "scripted/scripted-1", chromedp.ByID),
		chromedp.SetValue("#def-systemPrompt", "Write poems.", chromedp.ByID),
		chromedp.Click("#def-save", chromedp.ByID),
	))
	waitText(t, ctx, "#definitions", func(s string) bool { return strings.Contains(s, "Poet") }, "the new definition is listed")
	defs := items(t, e.ok(e.keyA, "GET", "/api/orgs/"+e.orgA.Slug+"/agent-definitions", nil), "agentDefinitions")
	require.Len(t, defs, 1)
	require.Equal(t, "Write poems.", defs[0]["systemPrompt"])
	defID := defs[0]["id"].(string)

	// Edit it.
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Click(`#definitions a`, chromedp.ByQuery),
		chromedp.WaitVisible("#new-prompt", chromedp.ByID), // the form is filled in when the start form shows
	))
	require.Equal(t, "Poet", eval[string](t, ctx, `document.querySelector("#def-name").value`))
	require.NoError(t, chromedp.Run(ctx,
		chromedp.SetValue("#def-name", "Poet laureate", chromedp.ByID),
		chromedp.Click("#def-save", chromedp.ByID),
	))
	waitText(t, ctx, "#definitions", func(s string) bool { return strings.Contains(s, "Poet laureate") }, "the edit is listed")
	require.Equal(t, "Poet laureate", e.ok(e.keyA, "GET", "/api/orgs/"+e.orgA.Slug+"/agent-definitions/"+defID, nil)["name"])
	screenshot(t, ctx, "definitions")

	// Start an execution from it.
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Click(`#definitions a`, chromedp.ByQuery),
		chromedp.WaitVisible("#new-prompt", chromedp.ByID),
		chromedp.SetValue("#new-prompt", "A poem, please.", chromedp.ByID),
		chromedp.SetValue("#new-mode", "one-shot", chromedp.ByID),
		chromedp.Click("#new-start", chromedp.ByID),
	))
	waitText(t, ctx, "#status", func(s string) bool { return s == "COMPLETED" }, "the execution from the definition completes")
	require.Contains(t, text(t, ctx, "#transcript"), "A short poem.")
	xs := items(t, e.ok(e.keyA, "GET", "/api/orgs/"+e.orgA.Slug+"/agent-executions?agentDefinitionId="+defID, nil), "agentExecutions")
	require.Len(t, xs, 1, "made from the definition")

	// Delete it (the button asks once more).
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate(e.base+"/#/definitions"),
		chromedp.WaitVisible(`#definitions button.danger`, chromedp.ByQuery),
		chromedp.Click(`#definitions button.danger`, chromedp.ByQuery),
		chromedp.Click(`#definitions button.danger`, chromedp.ByQuery),
	))
	waitText(t, ctx, "#definitions", func(s string) bool { return !strings.Contains(s, "Poet") }, "the definition is gone from the list")
	e.fails(e.keyA, "GET", "/api/orgs/"+e.orgA.Slug+"/agent-definitions/"+defID, nil, 404, "not_found")
}

// TestUILargeTranscript measures (and reports, not asserts) how long a
// 2,000-message execution takes from navigation to its last message
// being visible, and the page's JavaScript heap then.
func TestUILargeTranscript(t *testing.T) {
	e := newEnv(t, envOptions{})
	bg := context.Background()
	ex, err := e.es.CreateExecution(bg, entrystore.Execution{OrgID: e.orgA.ID, Kind: "react-agent", Input: json.RawMessage(`{"userPrompt":"message 0"}`)})
	require.NoError(t, err)
	const n = 2000
	for start := 0; start < n; start += 500 {
		batch := make([]agentsdk.Entry, 0, 500)
		var es []entrystore.Entry
		for i := start; i < start+500; i++ {
			role := agentsdk.RoleUser
			if i%2 == 1 {
				role = agentsdk.RoleAssistant
			}
			b, _ := json.Marshal(agentsdk.TextMessage(role, fmt.Sprintf("message %d of a long conversation", i)))
			batch = append(batch, agentsdk.Entry{Type: agentsdk.EntryMessage, Role: role, Content: b})
		}
		parent := ex.LeafEntryID
		for i, en := range batch {
			p := entrystore.PrevParent
			if i == 0 {
				p = parent
			}
			es = append(es, entrystore.Entry{OrgID: e.orgA.ID, ExecutionID: ex.ID, ParentID: p, Type: string(en.Type), Role: string(en.Role),
				Content: en.Content, IdempotencyKey: fmt.Sprintf("m%d", start+i)})
		}
		_, err := e.es.AppendEntries(bg, es)
		require.NoError(t, err)
		ex, err = e.es.GetExecution(bg, e.orgA.ID, ex.ID)
		require.NoError(t, err)
	}
	for _, s := range []entrystore.Status{entrystore.StatusRunning, entrystore.StatusCompleted} {
		_, err = e.es.Transition(bg, e.orgA.ID, ex.ID, entrystore.Transition{To: s})
		require.NoError(t, err)
	}

	ctx := browser(t)
	signIn(t, ctx, e, e.orgA.Slug, e.keyA)
	require.NoError(t, chromedp.Run(ctx, chromedp.WaitVisible("#executions", chromedp.ByID)))
	start := time.Now()
	require.NoError(t, chromedp.Run(ctx, chromedp.Navigate(e.base+"/#/executions/"+ex.ID)))
	last := fmt.Sprintf("message %d of a long conversation", n-1)
	waitText(t, ctx, "#transcript", func(s string) bool { return strings.Contains(s, last) }, "the last message is shown")
	elapsed := time.Since(start)
	require.Equal(t, n, eval[int](t, ctx, `document.querySelectorAll("#transcript .msg").length`), "every message is rendered")
	heap := eval[float64](t, ctx, `performance.memory ? performance.memory.usedJSHeapSize : 0`)
	t.Logf("2,000-message transcript: visible %v after navigation; JS heap %.1f MiB", elapsed.Round(time.Millisecond), heap/(1<<20))
}

// TestUIApproval: an execution waiting for a tool call's approval shows an
// approval card; approving it runs the tool and the answer follows. A key
// without the approve role sees the card without its buttons.
func TestUIApproval(t *testing.T) {
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{uiModel()}, tools: []*agentsdk.Tool{echoTool()}})
	x := e.ok(e.keyA, "POST", "/api/orgs/"+e.orgA.Slug+"/agent-executions", map[string]any{
		"kind": "react-agent", "userPrompt": "Please follow the steps.", "models": scriptedModel, "tools": []string{"echo"},
		"config": map[string]any{"toolPolicy": map[string]string{"echo": "ask"}},
	})
	id := x["id"].(string)

	// A key without the approve role sees the card but nothing to press.
	watcher := browser(t)
	signIn(t, watcher, e, e.orgA.Slug, e.keyWith(entrystore.RoleRun, entrystore.RoleRead))
	require.NoError(t, chromedp.Run(watcher, chromedp.WaitVisible("#executions", chromedp.ByID), chromedp.Navigate(e.base+"/#/executions/"+id)))
	waitText(t, watcher, ".approval", func(s string) bool { return strings.Contains(s, "lacks the approve role") }, "the card says the key cannot decide")
	require.Zero(t, eval[int](t, watcher, `document.querySelectorAll(".approval button").length`), "no Approve or Reject for this key")

	ctx := browser(t)
	signIn(t, ctx, e, e.orgA.Slug, e.keyA)
	require.NoError(t, chromedp.Run(ctx, chromedp.WaitVisible("#executions", chromedp.ByID), chromedp.Navigate(e.base+"/#/executions/"+id)))
	card := waitText(t, ctx, ".approval", func(s string) bool { return strings.Contains(s, "Approve echo?") }, "an approval card")
	require.NotContains(t, card, "lacks the approve role")
	require.Contains(t, card, "hi from the UI", "the card shows the arguments")
	require.True(t, eval[bool](t, ctx, `document.querySelector("#message").disabled`), "no follow-up while a decision is due")
	screenshot(t, ctx, "approval")
	require.NoError(t, chromedp.Run(ctx, chromedp.Click(".approval button.approve", chromedp.ByQuery)))
	waitText(t, ctx, "#transcript", func(s string) bool { return strings.Contains(s, "Second answer: done.") }, "the approved call runs and the agent answers")
	waitText(t, ctx, "#status", func(s string) bool { return s == "COMPLETED" }, "completed")
	require.Zero(t, eval[int](t, ctx, `document.querySelectorAll(".approval").length`), "no approval card left")
	calls := items(t, e.ok(e.keyA, "GET", e.execPath(e.orgA, id)+"/tool-calls", nil), "toolCalls")
	require.Len(t, calls, 1)
	require.Equal(t, "approve", calls[0]["approval"].(map[string]any)["decision"])
}
