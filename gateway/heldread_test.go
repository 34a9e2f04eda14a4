package gateway_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
)

// TestWorkerHeldExecutionIsReadableOverREST: a worker-held execution's conversation
// is read from its worker, and every read answers what the same
// conversation kept in Postgres answers — the same items, fields and
// numbers, IDs and times aside — page by page; with its worker stopped,
// a read is a 503 saying the worker is not reachable. A fork or a resume
// of it is a 409 that says why.
func TestWorkerHeldExecutionIsReadableOverREST(t *testing.T) {
	model := scripted.New(func(_ int, req agentsdk.ModelRequest) scripted.Turn {
		last := req.Messages[len(req.Messages)-1]
		if last.Role == agentsdk.RoleUser {
			word := strings.Fields(last.Text())[0]
			return scripted.Turn{Text: "Echoing.", ToolCalls: append(echoCall("call_a_"+word, last.Text()), echoCall("call_b_"+word, "again")...)}
		}
		return scripted.Turn{Text: "Done: " + last.Text()}
	})
	e := newEnv(t, envOptions{noWorker: true})
	_, stop := e.startHoldingWorker("wr", t.TempDir(), time.Hour, []agentsdk.Provider{model}, []*agentsdk.Tool{echoTool()})
	base := "/api/orgs/" + e.orgA.Slug + "/agent-executions"

	// The same conversation twice: once local, once in Postgres. The
	// first prompt is long, so an answer is larger than a Temporal
	// payload kept inline.
	prompt := "first " + strings.Repeat("long prompt ", 3000)
	run := func(mode string) string {
		ex := e.ok(e.keyA, http.MethodPost, base, map[string]any{
			"kind": "react-agent", "userPrompt": prompt, "models": scriptedModel, "tools": []string{"echo"},
			"persistenceMode": mode, "config": map[string]any{"mode": "multi-turn"},
		})
		id := ex["id"].(string)
		waitTurn := func(seq float64) float64 {
			var got map[string]any
			poll(t, time.Minute, func() bool {
				got = e.ok(e.keyA, http.MethodGet, base+"/"+id, nil)
				require.NotEqual(t, "FAILED", got["status"], "%v", got["errorMessage"])
				return got["status"] == "WAITING" && got["currentCheckpointSeq"].(float64) > seq
			}, "the turn never ended")
			return got["currentCheckpointSeq"].(float64)
		}
		seq := waitTurn(0)
		e.ok(e.keyA, http.MethodPost, base+"/"+id+"/signal", map[string]any{"signalName": "userMessage", "signalValue": map[string]any{"text": "second message"}})
		waitTurn(seq)
		return id
	}
	local, remote := run("local"), run("remote")
	require.Equal(t, "wr", e.ok(e.keyA, http.MethodGet, base+"/"+local, nil)["localWorker"])

	// every reads a whole list page by page, pageSize items at a time.
	every := func(id, p, field string, pageSize int) []any {
		var all []any
		cursor := ""
		for range 100 {
			q := url.Values{"pageSize": {strconvI(pageSize)}}
			if cursor != "" {
				q.Set("cursor", cursor)
			}
			sep := "?"
			if strings.Contains(p, "?") {
				sep = "&"
			}
			got := e.ok(e.keyA, http.MethodGet, base+"/"+id+p+sep+q.Encode(), nil)
			items, _ := got[field].([]any)
			require.LessOrEqual(t, len(items), pageSize)
			all = append(all, items...)
			if cursor, _ = got["nextCursor"].(string); cursor == "" {
				return all
			}
		}
		require.Fail(t, "the pages never ended", p)
		return nil
	}
	lists := []struct{ path, field string }{
		{"/messages", "messages"}, {"/entries", "entries"}, {"/tool-calls", "toolCalls"},
		{"/checkpoints", "checkpoints"}, {"/tasks", "tasks"},
	}
	for _, l := range lists {
		whole := every(local, l.path, l.field, 500)
		require.NotEmpty(t, whole, l.path)
		require.Equal(t, shape(t, whole), shape(t, every(local, l.path, l.field, 2)), "%s: paged as whole", l.path)
		// The tool calls of one step run at once: within a step, each
		// store lists them in the order they were recorded.
		require.ElementsMatch(t, shape(t, every(remote, l.path, l.field, 500)), shape(t, whole), "%s: local as remote", l.path)
	}
	msgs := every(local, "/messages", "messages", 500)
	require.Len(t, msgs, 10, "two turns of a prompt, an answer asking two calls, their two results and the final answer")
	first := msgs[0].(map[string]any)["content"].([]any)[0].(map[string]any)["text"].(string)
	require.Equal(t, prompt, first, "the long first prompt, whole")
	require.ElementsMatch(t, shape(t, every(remote, "/tool-calls?toolName=echo&status=completed", "toolCalls", 500)),
		shape(t, every(local, "/tool-calls?toolName=echo&status=completed", "toolCalls", 1)), "filtered")

	for _, p := range []string{"/usage", "/token-timeline", "/checkpoints/latest", "/checkpoints/1"} {
		require.Equal(t, shape(t, e.ok(e.keyA, http.MethodGet, base+"/"+remote+p, nil)), shape(t, e.ok(e.keyA, http.MethodGet, base+"/"+local+p, nil)), p)
	}
	// Single items by the IDs the lists give.
	entries := every(local, "/entries", "entries", 500)
	for _, x := range entries {
		id := x.(map[string]any)["id"].(string)
		require.Equal(t, x, e.ok(e.keyA, http.MethodGet, base+"/"+local+"/entries/"+id, nil))
		if x.(map[string]any)["type"] == "message" {
			ctx := e.ok(e.keyA, http.MethodGet, base+"/"+local+"/entries/"+id+"/context", nil)
			require.NotEmpty(t, ctx["messages"], "the model context at %s", id)
		}
	}
	for _, x := range every(local, "/tool-calls", "toolCalls", 500) {
		c := x.(map[string]any)
		byRecord := e.ok(e.keyA, http.MethodGet, base+"/"+local+"/tool-calls/"+c["id"].(string), nil)
		byModel := e.ok(e.keyA, http.MethodGet, base+"/"+local+"/tool-calls/"+c["toolCallId"].(string), nil)
		require.Equal(t, c["id"], byRecord["id"])
		require.Equal(t, c["id"], byModel["id"])
	}
	e.fails(e.keyA, http.MethodGet, base+"/"+local+"/entries/"+remoteEntry(t, every(remote, "/entries", "entries", 1)), nil, http.StatusNotFound, "not_found")
	e.fails(e.keyA, http.MethodGet, base+"/"+local+"/entries?cursor=junk", nil, http.StatusBadRequest, "invalid_argument")

	// Fork and resume start a new execution from Postgres: refused.
	last := msgs[len(msgs)-1].(map[string]any)["entryId"].(string)
	r := e.fails(e.keyA, http.MethodPost, base+"/"+local+"/fork", map[string]any{"entryId": last, "userPrompt": "again"}, http.StatusConflict, "conflict")
	require.Contains(t, r.Body["message"], "persistenceMode local")
	require.Contains(t, r.Body["message"], "only remote executions can be forked")
	r = e.fails(e.keyA, http.MethodPost, base+"/"+local+"/resume", map[string]any{}, http.StatusConflict, "conflict")
	require.Contains(t, r.Body["message"], "only remote executions can be resumed")

	// Its worker stops: reads say so, and the execution's row still reads.
	stop()
	for _, p := range []string{"/messages", "/tool-calls", "/usage"} {
		r := e.fails(e.keyA, http.MethodGet, base+"/"+local+p, nil, http.StatusServiceUnavailable, "unavailable")
		require.Contains(t, r.Body["message"], `the worker holding the execution's conversation is not reachable: worker "wr"`, p)
	}
	require.Equal(t, "local", e.ok(e.keyA, http.MethodGet, base+"/"+local, nil)["persistenceMode"])
}

func strconvI(n int) string { b, _ := json.Marshal(n); return string(b) }

// remoteEntry is the ID of the first item of a page.
func remoteEntry(t *testing.T, page []any) string {
	require.NotEmpty(t, page)
	return page[0].(map[string]any)["id"].(string)
}

// shape is v with what differs between two stores of one conversation
// blanked: IDs, cursors, times and durations.
func shape(t *testing.T, v any) any {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	var out any
	require.NoError(t, json.Unmarshal(b, &out))
	return blank(out)
}

func blank(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			switch {
			case k == "id" || strings.HasSuffix(k, "Id") || strings.HasSuffix(k, "At") || k == "nextCursor" || strings.HasSuffix(k, "Ms"):
				if val != nil && val != "" {
					x[k] = "*"
				}
			default:
				x[k] = blank(val)
			}
		}
	case []any:
		for i := range x {
			x[i] = blank(x[i])
		}
	case string:
		// IDs inside text (a tool call's arguments hold none; an
		// idempotency key or a content reference may), and long text by
		// its length, so a failure prints what differs.
		if len(x) == 36 && strings.Count(x, "-") == 4 {
			return "*"
		}
		if len(x) > 200 {
			return x[:50] + "…(" + strconvI(len(x)) + " bytes)"
		}
	}
	return v
}
