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
	"github.com/agentree/agentree/agentsdk/scripted"
)

// summarisingModel answers each user message at length (so a compaction
// has something to save) and a compaction request with a short summary,
// each call at 0.001 USD.
func summarisingModel() *scripted.Provider {
	return scripted.New(func(_ int, req agentsdk.ModelRequest) scripted.Turn {
		usage := agentsdk.Usage{Input: int64(requestTokens(req)), Output: 40, Cost: 0.001}
		if strings.HasPrefix(req.System, "You compact the conversation") {
			return scripted.Turn{Text: "## Goal\nAnswer the messages.", Usage: usage}
		}
		last := req.Messages[len(req.Messages)-1].Text()
		return scripted.Turn{Text: "answer to " + last + ": " + strings.Repeat("lorem ipsum ", 40), Usage: usage}
	})
}

// TestUITokenTimelineChart: a run of three turns with a compaction between
// the second and the third is charted with a point per model call (the
// compaction's summary call too), the compaction's drop marked with its
// size, the cost accumulated, and a readout on hover.
func TestUITokenTimelineChart(t *testing.T) {
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{summarisingModel()}})
	base := "/api/orgs/" + e.orgA.Slug + "/agent-executions"
	id := e.ok(e.keyA, http.MethodPost, base, map[string]any{
		"kind": "react-agent", "userPrompt": "message 1", "models": scriptedModel, "config": map[string]any{"mode": "multi-turn"},
	})["id"].(string)
	path := base + "/" + id
	seq := 0.0
	waitTurn := func() {
		poll(t, time.Minute, func() bool {
			got := e.ok(e.keyA, http.MethodGet, path, nil)
			return got["status"] == "WAITING" && got["currentCheckpointSeq"].(float64) > seq
		}, "the turn never ended")
		seq = e.ok(e.keyA, http.MethodGet, path, nil)["currentCheckpointSeq"].(float64)
	}
	signal := func(text string) {
		e.ok(e.keyA, http.MethodPost, path+"/signal", map[string]any{"signalName": "userMessage", "signalValue": map[string]any{"text": text}})
	}
	waitTurn()
	signal("message 2")
	waitTurn()
	e.ok(e.keyA, http.MethodPost, path+"/compact", map[string]any{})
	poll(t, time.Minute, func() bool {
		for _, p := range e.all(path+"/token-timeline?pageSize=500", "points") {
			if p["compaction"] == true {
				return true
			}
		}
		return false
	}, "no compaction")
	waitTurn()
	signal("message 3")
	waitTurn()

	points := e.all(path+"/token-timeline?pageSize=500", "points")
	var calls []map[string]any
	drop := int64(0)
	for i, p := range points {
		if p["modelCall"] == true {
			calls = append(calls, p)
		}
		if p["compaction"] == true {
			drop = int64Field(t, points[i-1], "contextTokens") - int64Field(t, p, "contextTokens")
		}
	}
	require.Len(t, calls, 4, "three answers and the summary")
	require.Positive(t, drop, "the context shrank at the compaction")

	ctx := browser(t)
	signIn(t, ctx, e, e.orgA.Slug, e.keyA)
	require.NoError(t, chromedp.Run(ctx,
		chromedp.WaitVisible("#executions", chromedp.ByID),
		chromedp.Navigate(e.base+"/#/executions/"+id),
	))
	openPanel(t, ctx, "timeline-panel")
	require.NoError(t, chromedp.Run(ctx, chromedp.WaitVisible(".token-chart", chromedp.ByQuery)))
	var ids []string
	for _, c := range calls {
		ids = append(ids, c["entryId"].(string))
	}
	require.Equal(t, ids, eval[[]string](t, ctx, `[...document.querySelectorAll(".token-chart .call-point")].map((c) => c.dataset.entry)`),
		"a point per model call, in order")
	marks := eval[[]string](t, ctx, `[...document.querySelectorAll(".token-chart .compaction-mark title")].map((t) => t.textContent)`)
	require.Len(t, marks, 1, "the compaction is marked")
	require.Contains(t, marks[0], fmt.Sprintf("(−%d)", drop), "with its drop")
	require.Equal(t, len(points), eval[int](t, ctx, `document.querySelector(".token-chart .context").points.numberOfItems`), "the context line has a point per entry")
	require.Contains(t, text(t, ctx, ".timeline-summary"), "4 model calls · 1 compaction")
	require.Contains(t, text(t, ctx, ".timeline-summary"), "$0.0040 spent")
	require.Equal(t, 4, eval[int](t, ctx, `document.querySelectorAll(".calls-table tbody tr").length`), "the table has a row per call")

	// Hover (or focus) a point: the readout says what it is.
	// The readout is drawn after the event: poll for it (a CI run read it empty).
	eval[any](t, ctx, `document.querySelectorAll(".token-chart .call-point")[1].dispatchEvent(new MouseEvent("mouseenter")); null`)
	var readout string
	poll(t, 10*time.Second, func() bool {
		readout = eval[string](t, ctx, `document.querySelector(".token-chart .readout").textContent`)
		return strings.Contains(readout, "call 2")
	}, "the readout never named the hovered call")
	require.Contains(t, readout, fmt.Sprintf("call 2: read %d, wrote 40 tokens", int64Field(t, calls[1], "callInputTokens")))
	require.Contains(t, readout, "$0.0020 so far")
	screenshot(t, ctx, "token-chart")
}
