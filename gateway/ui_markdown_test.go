package gateway_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/gateway"
	"github.com/agentree/agentree/gateway/ui"
)

// hostileAnswer is a model answer that tries every way this page could be
// made to run or load something: raw HTML, event handlers, script URLs in
// links, external images, frames, and constructs left open. Each payload
// would set window.pwned; around them is safe Markdown that must render as
// elements.
const hostileAnswer = "# Safe heading\n\n" +
	"Some *emphasis*, **strong** text and `inline <b>code</b>`.\n\n" +
	"- first item\n- second item with [a safe link](https://example.com/docs)\n  - nested item\n\n" +
	"1. one\n2. two\n\n" +
	"```html\n<script>window.pwned = 'fence'</script>\n```\n\n" +
	"<script>window.pwned = 'script'</script>\n\n" +
	"<img src=x onerror=\"window.pwned = 'onerror'\">\n\n" +
	"[click me](javascript:window.pwned='link') and [again](JaVaScRiPt:window.pwned='case') " +
	"and [tabbed](java\tscript:window.pwned='tab') and [data](data:text/html,<script>window.pwned='data'</script>) " +
	"and [vb](vbscript:msgbox) and [entity](&#106;avascript:window.pwned='entity')\n\n" +
	"![tracker](https://tracker.example/pixel.png) ![proto-relative](//tracker.example/p.png) ![same](/ui/app.css)\n\n" +
	"<iframe src=\"javascript:window.pwned='iframe'\"></iframe>\n\n" +
	"<a href=\"#\" onclick=\"window.pwned='onclick'\">html link</a> <svg onload=\"window.pwned='svg'\"></svg>\n\n" +
	"<div style=\"background:url(https://tracker.example/bg.png)\">styled</div>\n\n" +
	"> quoted <object data=\"https://tracker.example/x\"></object>\n\n" +
	"**unclosed *nested [link](javascript:alert(1) `code <script>window.pwned='unclosed'</script>\n\n" +
	"```\nan unclosed fence <img src=x onerror=\"window.pwned='fence2'\">"

// recorder is a slog handler that keeps the records logged with a given
// message: how a test observes what the gateway logs.
type recorder struct {
	msg  string
	mu   sync.Mutex
	recs []map[string]string
}

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *recorder) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *recorder) WithGroup(string) slog.Handler            { return r }
func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	if rec.Message != r.msg {
		return nil
	}
	m := map[string]string{}
	rec.Attrs(func(a slog.Attr) bool { m[a.Key] = a.Value.String(); return true })
	r.mu.Lock()
	r.recs = append(r.recs, m)
	r.mu.Unlock()
	return nil
}

func (r *recorder) all() []map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]map[string]string(nil), r.recs...)
}

// TestUIMarkdownIsSanitized: a model answer full of hostile Markdown and
// HTML renders its safe Markdown as elements (a heading, lists, a code
// block, an https link) and runs nothing: a sentinel every payload would
// change is unchanged, no script, frame, handler or foreign URL reaches the
// DOM, and the gateway's CSP report endpoint receives no violation — but
// the one the test causes itself afterwards, which shows the reports do
// arrive.
func TestUIMarkdownIsSanitized(t *testing.T) {
	reports := &recorder{msg: ui.ViolationMessage}
	model := scripted.New(func(int, agentsdk.ModelRequest) scripted.Turn { return scripted.Turn{Text: hostileAnswer} })
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{model},
		gateway: func(o *gateway.Options) { o.Logger = slog.New(reports) }})
	x := e.ok(e.keyA, http.MethodPost, "/api/orgs/"+e.orgA.Slug+"/agent-executions", map[string]any{
		"kind": "react-agent", "userPrompt": "Show me what you can do.", "models": scriptedModel, "config": map[string]any{"mode": "one-shot"},
	})
	id := x["id"].(string)
	e.waitStatus(id, "COMPLETED", time.Minute)

	ctx := browser(t)
	signIn(t, ctx, e, e.orgA.Slug, e.keyA)
	require.NoError(t, chromedp.Run(ctx, chromedp.WaitVisible("#executions", chromedp.ByID)))
	// The same document from here on (hash routing), so the sentinel stays.
	eval[any](t, ctx, `window.pwned = 'untouched'; location.hash = '#/executions/`+id+`'; null`)
	waitText(t, ctx, "#transcript .md", func(s string) bool { return strings.Contains(s, "an unclosed fence") }, "the answer is rendered")

	// The safe Markdown is elements.
	require.Equal(t, "Safe heading", text(t, ctx, "#transcript .md h1"))
	require.Equal(t, "emphasis", text(t, ctx, "#transcript .md p em"))
	require.Equal(t, "strong", text(t, ctx, "#transcript .md p strong"))
	require.Equal(t, "inline <b>code</b>", text(t, ctx, "#transcript .md p code"))
	require.Equal(t, 2, eval[int](t, ctx, `document.querySelectorAll("#transcript .md > ul > li").length`), "a list of two")
	require.Equal(t, "nested item", text(t, ctx, "#transcript .md > ul > li > ul > li"))
	require.Equal(t, 2, eval[int](t, ctx, `document.querySelectorAll("#transcript .md > ol > li").length`), "a numbered list")
	require.Equal(t, "<script>window.pwned = 'fence'</script>", text(t, ctx, "#transcript .md pre code.language-html"), "fenced code is text")
	require.Equal(t, "a safe link", text(t, ctx, `#transcript .md a[href="https://example.com/docs"]`))
	require.Equal(t, "noopener noreferrer nofollow", eval[string](t, ctx, `document.querySelector('#transcript .md a').rel`))
	require.Equal(t, e.base+"/ui/app.css", eval[string](t, ctx, `(document.querySelector("#transcript .md img") || {}).src || ""`), "a same-origin image is an image")

	// Nothing hostile is: no element that runs or embeds, no handler or
	// style attribute, no link but http(s), no image from elsewhere.
	bad := eval[[]string](t, ctx, `(() => {
		const out = [];
		const root = document.querySelector('#transcript .md');
		for (const n of root.querySelectorAll('*')) {
			if (!['P','H1','H2','H3','H4','H5','H6','EM','STRONG','CODE','PRE','UL','OL','LI','A','IMG','BLOCKQUOTE','HR'].includes(n.tagName)) out.push('element ' + n.tagName);
			for (const a of n.attributes) if (!['href','rel','target','src','alt','loading','class','start'].includes(a.name)) out.push(n.tagName + ' attribute ' + a.name);
		}
		for (const a of root.querySelectorAll('a')) if (!/^https?:/.test(a.href)) out.push('link ' + a.href);
		for (const i of root.querySelectorAll('img')) if (new URL(i.src).origin !== location.origin) out.push('image ' + i.src);
		return out;
	})()`)
	require.Empty(t, bad)
	shown := text(t, ctx, "#transcript .md")
	for _, s := range []string{"<script>window.pwned = 'script'</script>", "<iframe src=", "[click me](javascript:window.pwned='link')",
		"![tracker](https://tracker.example/pixel.png)", "<img src=x onerror="} {
		require.Contains(t, shown, s, "shown as the text it is")
	}
	// Entities are not decoded: "&#106;avascript:" is a path on this origin.
	require.Equal(t, []string{"https://example.com/docs", e.base + "/&#106;avascript:window.pwned='entity'"},
		eval[[]string](t, ctx, `[...document.querySelectorAll("#transcript .md a")].map((a) => a.href)`), "the safe link and a relative one")

	// The renderer alone, on constructs an answer could hold.
	for _, src := range []string{
		"[a](javascript:alert(1))", "[a]( javascript:alert(1) )", "[a](<javascript:alert(1)>)", "[a](JAVASCRIPT:alert(1))",
		"[a](java\nscript:alert(1))", "[a](\x01javascript:alert(1))", "[a](data:text/html;base64,PHNjcmlwdD4=)",
		"[a](vbscript:x)", "[a](file:///etc/passwd)", "[a](https://user:pw@evil.example/)", "<javascript:alert(1)>",
		"![a](https://evil.example/x.png)", "![a](//evil.example/x.png)", "![a](data:image/png;base64,AAAA)",
		"[![a](https://evil.example/x.png)](javascript:alert(1))", "[[[[[[[[[[[[x](javascript:1)]]]]]]]]]]]",
		strings.Repeat("> ", 50) + "deep", strings.Repeat("- ", 50) + "deep", strings.Repeat("*", 200) + "x",
		"<style>body{display:none}</style>", "<base href=\"https://evil.example/\">", "<meta http-equiv=refresh content=0>",
		// Long hostile text renders in linear time (else the browser's
		// deadline fails the test).
		strings.Repeat("*a ", 50000), strings.Repeat("_a ", 50000), strings.Repeat("[", 100000), strings.Repeat("` ", 50000),
		strings.Repeat("<", 100000), "# " + strings.Repeat(" ", 100000) + "x", strings.Repeat("- ", 50000) + "x",
		strings.Repeat("[a](", 30000), "# " + strings.Repeat("#", 100000) + " x",
	} {
		js, _ := json.Marshal(src)
		got := eval[map[string]any](t, ctx, `(() => {
			const d = document.createElement('div');
			d.append(agentree.markdown(`+string(js)+`));
			const links = [...d.querySelectorAll('a')].map((a) => a.href);
			const imgs = [...d.querySelectorAll('img')].map((i) => i.src);
			const other = [...d.querySelectorAll('*')].filter((n) => !['P','H1','H2','H3','H4','H5','H6','UL','OL','LI','BLOCKQUOTE','EM','STRONG','CODE','PRE','HR','A','IMG'].includes(n.tagName)).map((n) => n.tagName);
			return {links, imgs, other};
		})()`)
		short := src[:min(len(src), 40)]
		require.Empty(t, got["links"], "%q makes no link", short)
		require.Empty(t, got["imgs"], "%q makes no image", short)
		require.Empty(t, got["other"], "%q makes no other element", short)
	}
	require.Equal(t, "untouched", eval[string](t, ctx, `String(window.pwned)`), "no payload ran")
	screenshot(t, ctx, "markdown")

	// A violation the test makes itself is reported; when it has arrived,
	// any earlier one would have too: there is none.
	eval[any](t, ctx, `document.body.append(Object.assign(document.createElement('img'), {src: 'https://control.example/probe.png'})); null`)
	poll(t, 30*time.Second, func() bool {
		for _, r := range reports.all() {
			if strings.Contains(r["blocked"], "control.example") {
				return true
			}
		}
		return false
	}, "the control violation is reported")
	for _, r := range reports.all() {
		require.Contains(t, r["blocked"], "control.example", "only the control violated the policy: %v", r)
		require.Equal(t, "img-src", r["directive"])
	}
	require.Equal(t, "untouched", eval[string](t, ctx, `String(window.pwned)`), "no payload ran")
}
