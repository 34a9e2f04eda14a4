package gateway_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/event"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/entrystore"
)

func echoTool() *agentsdk.Tool {
	return agentsdk.NewTool("echo", "Echoes its text.",
		func(_ context.Context, _ agentsdk.ToolInvocation, a echoArgs) (string, error) {
			return "echo: " + a.Text, nil
		})
}

type echoArgs struct {
	Text string `json:"text"`
}

// scriptedModel is the JSON of the scripted model reference.
var scriptedModel = []any{map[string]any{"provider": scripted.Name, "modelId": "scripted-1"}}

// tokenText joins the text of the token events.
func tokenText(t testing.TB, evs []sseEvent) string {
	t.Helper()
	var b strings.Builder
	for _, ev := range evs {
		if ev.Event != event.NameToken {
			continue
		}
		tok, err := event.Decode(ev.Event, []byte(ev.Data))
		require.NoError(t, err, ev.Data)
		b.WriteString(tok.(*event.Token).Data)
	}
	return b.String()
}

// tableIDs are the execution's stream event IDs in the table, up to last.
func (e *env) tableIDs(execID string, last int64) []int64 {
	e.t.Helper()
	var out []int64
	for after := int64(0); ; {
		evs, err := e.es.StreamEventsAfter(context.Background(), e.orgA.ID, execID, after, entrystore.MaxPageLimit)
		require.NoError(e.t, err)
		for _, ev := range evs {
			if ev.ID <= last {
				out = append(out, ev.ID)
			}
		}
		if len(evs) < entrystore.MaxPageLimit {
			return out
		}
		after = evs[len(evs)-1].ID
	}
}

// items returns a list response's array field.
func items(t testing.TB, body map[string]any, field string) []map[string]any {
	t.Helper()
	raw, ok := body[field].([]any)
	require.True(t, ok, "%s is not a list in %v", field, body)
	out := make([]map[string]any, len(raw))
	for i, r := range raw {
		out[i] = r.(map[string]any)
	}
	return out
}

// TestExecutionLifeOverRESTAndSSE drives one multi-turn execution's whole
// life through REST and SSE only: create it, stream its first turn to
// WAITING, signal a follow-up while subscribed, drop the connection
// mid-answer and resume with Last-Event-ID missing nothing, read its
// history, cancel it, and replay its ended stream.
func TestExecutionLifeOverRESTAndSSE(t *testing.T) {
	long := strings.TrimSpace(strings.Repeat("tokens stream one by one, ", 12))
	model := scripted.New(func(turn int, _ agentsdk.ModelRequest) scripted.Turn {
		switch turn {
		case 0:
			return scripted.Turn{Text: "Let me check. ", ToolCalls: []agentsdk.ToolCall{{ID: "c1", Name: "echo", Arguments: []byte(`{"text":"ping"}`)}}}
		case 1:
			return scripted.Turn{Text: "The echo said ping."}
		}
		return scripted.Turn{Text: long, TokenDelay: 10 * time.Millisecond}
	})
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{model}, tools: []*agentsdk.Tool{echoTool()}})
	base := "/api/orgs/" + e.orgA.Slug + "/agent-executions"

	ex := e.ok(e.keyA, http.MethodPost, base, map[string]any{
		"kind": "react-agent", "systemPrompt": "You are terse.", "userPrompt": "Echo ping, then tell me.",
		"models": scriptedModel, "tools": []string{"echo"},
		"config": map[string]any{"mode": "multi-turn", "maxTurns": 10},
	})
	id := ex["id"].(string)
	require.Contains(t, []string{"PENDING", "RUNNING"}, ex["status"])
	require.Equal(t, "multi-turn", ex["config"].(map[string]any)["mode"])
	path := base + "/" + id

	// The first turn, streamed to the end of the answer.
	s1 := e.openStream(t, e.keyA, path+"/stream/consolidated", "")
	first := s1.until(t, "agent.waiting", time.Minute)
	require.Equal(t, "agent.started", first[0].Event)
	require.Equal(t, "Let me check. The echo said ping.", tokenText(t, first))
	require.Contains(t, names(first), "data", "tool call start/end")
	require.Contains(t, names(first), "agent.checkpoint")
	e.waitStatus(id, "WAITING", 10*time.Second)

	// Subscribe-before-signal: s1 is still open when the follow-up goes.
	sig := e.ok(e.keyA, http.MethodPost, path+"/signal", map[string]any{
		"signalName": "userMessage", "signalValue": map[string]any{"text": "Now a long answer, please."},
	})
	require.NotEmpty(t, sig["signalId"])
	var second []sseEvent
	for tokens := 0; tokens < 5; {
		ev, ok := s1.next(t, time.Minute)
		require.True(t, ok)
		second = append(second, ev)
		if ev.Event == "token" {
			tokens++
		}
	}
	s1.close() // mid-answer

	s2 := e.openStream(t, e.keyA, path+"/stream/consolidated", strconv.FormatInt(second[len(second)-1].ID, 10))
	second = append(second, s2.until(t, "agent.waiting", time.Minute)...)
	s2.close()
	require.Contains(t, names(second), "agent.resumed")
	require.Equal(t, long, tokenText(t, second), "every token, once, in order")

	var got []int64
	for _, ev := range append(first, second...) {
		require.NotZero(t, ev.ID, "every event has an id")
		if len(got) > 0 {
			require.Greater(t, ev.ID, got[len(got)-1], "IDs strictly increase")
		}
		got = append(got, ev.ID)
	}
	require.Equal(t, e.tableIDs(id, got[len(got)-1]), got, "no gap against agent_stream_event")

	e.checkHistory(path, id, long)

	listed := items(t, e.ok(e.keyA, http.MethodGet, base+"?status=WAITING&kind=react-agent", nil), "agentExecutions")
	require.Len(t, listed, 1)
	require.Equal(t, id, listed[0]["id"])

	// Cancel ends the life; a stream opened afterwards replays and ends.
	cancelled := e.ok(e.keyA, http.MethodDelete, path, nil)
	require.Contains(t, []string{"CANCELLING", "CANCELLED"}, cancelled["status"])
	e.waitStatus(id, "CANCELLED", 30*time.Second)
	late := e.openStream(t, e.keyA, path+"/stream", "").rest(t, 30*time.Second)
	require.NotEmpty(t, late)
	require.Equal(t, "agent.cancelled", late[len(late)-1].Event)
	for _, ev := range late {
		require.True(t, strings.HasPrefix(ev.Event, "agent."), "the plain stream carries lifecycle events only: %s", ev.Event)
	}
	e.fails(e.keyA, http.MethodPost, path+"/signal", map[string]any{
		"signalName": "userMessage", "signalValue": map[string]any{"text": "too late"},
	}, http.StatusConflict, "conflict")
}

// all pages through a list (path has a query already) and returns every
// item of field.
func (e *env) all(path, field string) []map[string]any {
	e.t.Helper()
	var out []map[string]any
	for cursor := ""; ; {
		page := e.ok(e.keyA, http.MethodGet, path+"&cursor="+url.QueryEscape(cursor), nil)
		out = append(out, items(e.t, page, field)...)
		if cursor = page["nextCursor"].(string); cursor == "" {
			return out
		}
	}
}

// checkHistory reads the execution's history over REST after its second
// turn.
func (e *env) checkHistory(path, id, long string) {
	t := e.t
	// Entries, two a page: every stored entry, once, and an llm_call
	// entry for each of the three model calls.
	entries := e.all(path+"/entries?pageSize=2", "entries")
	stored, _, err := e.es.ListEntries(context.Background(), e.orgA.ID, id, entrystore.Page{Limit: 500})
	require.NoError(t, err)
	require.Len(t, entries, len(stored)+3)
	one := e.ok(e.keyA, http.MethodGet, path+"/entries/"+entries[0]["id"].(string), nil)
	require.Equal(t, "user", one["role"])
	require.Equal(t, id, one["executionId"])

	// Tool calls, tasks and checkpoints.
	calls := items(t, e.ok(e.keyA, http.MethodGet, path+"/tool-calls?toolName=echo&status=completed", nil), "toolCalls")
	require.Len(t, calls, 1)
	require.Equal(t, map[string]any{"text": "ping"}, calls[0]["input"])
	call := e.ok(e.keyA, http.MethodGet, path+"/tool-calls/"+calls[0]["id"].(string), nil)
	require.Contains(t, fmt.Sprint(call["output"]), "echo: ping")
	require.Empty(t, items(t, e.ok(e.keyA, http.MethodGet, path+"/tool-calls?status=error", nil), "toolCalls"))
	tasks := items(t, e.ok(e.keyA, http.MethodGet, path+"/tasks", nil), "tasks")
	require.Len(t, tasks, 1)
	require.Equal(t, "echo", tasks[0]["kind"])
	require.Equal(t, "COMPLETED", tasks[0]["status"])
	cps := items(t, e.ok(e.keyA, http.MethodGet, path+"/checkpoints", nil), "checkpoints")
	require.GreaterOrEqual(t, len(cps), 2)
	cp := e.ok(e.keyA, http.MethodGet, fmt.Sprintf("%s/checkpoints/%v", path, cps[0]["sequence"]), nil)
	require.Equal(t, cps[0]["leafEntryId"], cp["leafEntryId"])
	latest := e.ok(e.keyA, http.MethodGet, path+"/checkpoints/latest", nil)
	require.Equal(t, e.all(path+"/checkpoints?pageSize=500", "checkpoints")[len(cps)-1], latest, "latest is the newest checkpoint")
	require.Equal(t, float64(len(cps)), latest["sequence"])

	// Every count is a JSON number (protojson writes 64-bit integers as
	// strings; the gateway writes them as numbers).
	for _, en := range entries {
		require.IsType(t, float64(0), en["seq"], "entry seq: %v", en)
	}
	require.IsType(t, float64(0), call["outputSize"])
	require.IsType(t, float64(0), call["stepNumber"])

	// Messages: the chat a page reload rebuilds, in pages of four.
	msgs := e.all(path+"/messages?pageSize=4", "messages")
	var roles, texts []string
	for _, m := range msgs {
		roles = append(roles, m["role"].(string))
		var text strings.Builder
		for _, b := range m["content"].([]any) {
			text.WriteString(b.(map[string]any)["text"].(string))
		}
		texts = append(texts, text.String())
	}
	require.Equal(t, []string{"user", "assistant", "tool_result", "assistant", "user", "assistant"}, roles)
	require.Equal(t, []string{"Echo ping, then tell me.", "Let me check. ", "echo: ping", "The echo said ping.",
		"Now a long answer, please.", long}, texts)
	var steps []any
	for _, m := range msgs {
		steps = append(steps, m["stepNumber"])
	}
	// A model's answer and its tool results share its step; the prompt is
	// step 0.
	require.Equal(t, []any{0.0, 1.0, 1.0, 2.0, 2.0, 3.0}, steps)
	require.NotEmpty(t, msgs[1]["turnId"])
	require.Equal(t, msgs[1]["turnId"], msgs[2]["turnId"], "the tool result is in the turn of the call it answers")
	usage := msgs[1]["usage"].(map[string]any)
	require.IsType(t, float64(0), usage["input"], "usage: %v", usage)
	toolUse := msgs[1]["content"].([]any)[1].(map[string]any)
	require.Equal(t, "tool_call", toolUse["type"])
	require.Equal(t, "echo", toolUse["toolCall"].(map[string]any)["name"])
}
