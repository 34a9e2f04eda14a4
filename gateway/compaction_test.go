package gateway_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
)

// smallWindow is the context window of the model "scripted-small" in
// these tests: small enough that a few dozen turns pass 70% of it.
const smallWindow = 2048

var smallModel = []any{map[string]any{"provider": scripted.Name, "modelId": "scripted-small"}}

// roundsPerMessage is how many model calls answer each user message in
// TestLongConversationCompacts: tool calls, then an answer.
const roundsPerMessage = 10

var echoed = regexp.MustCompile(`echo: (m\d+)-(\d+)`)

// compactingModel answers a compaction request with a summary, and any
// other request from its last message alone (a compacted context has
// fewer answers in it than turns taken): a user message [mN] starts
// echo calls mN-1, mN-2, …; after roundsPerMessage-1 of them it answers.
// It counts the tokens it read as the test measures them.
func compactingModel(reqs *requests) *scripted.Provider {
	answer := compactingScript(reqs)
	return scripted.New(func(turn int, req agentsdk.ModelRequest) scripted.Turn {
		t := answer(turn, req)
		t.Usage = agentsdk.Usage{Input: int64(requestTokens(req)), Output: int64(len(t.Text)/4 + 1)}
		return t
	})
}

func compactingScript(reqs *requests) scripted.Script {
	summaries := 0
	return func(_ int, req agentsdk.ModelRequest) scripted.Turn {
		reqs.add(req)
		if strings.HasPrefix(req.System, "You compact the conversation") {
			summaries++
			return scripted.Turn{Text: fmt.Sprintf("## Goal\nEcho things (summary %d).\n## Decisions\nEcho each message %d times.", summaries, roundsPerMessage-1)}
		}
		last := req.Messages[len(req.Messages)-1]
		if last.Role == agentsdk.RoleUser {
			tag := strings.Trim(strings.Fields(last.Text())[0], "[]")
			return scripted.Turn{Text: "Echoing.", ToolCalls: echoCall(tag+"-1", tag+"-1")}
		}
		m := echoed.FindStringSubmatch(last.Text())
		n, _ := strconv.Atoi(m[2])
		if n >= roundsPerMessage-1 {
			return scripted.Turn{Text: "Done with " + m[1] + "."}
		}
		next := fmt.Sprintf("%s-%d", m[1], n+1)
		return scripted.Turn{Text: "Echoing.", ToolCalls: echoCall(next, next)}
	}
}

// requestTokens measures a request as the test sees it: 4 bytes a token
// of its system prompt, tools and each message's JSON.
func requestTokens(req agentsdk.ModelRequest) int {
	n := agentsdk.EstimateTokens([]byte(req.System))
	if len(req.Tools) > 0 {
		b, _ := json.Marshal(req.Tools)
		n += agentsdk.EstimateTokens(b)
	}
	for _, m := range req.Messages {
		b, _ := json.Marshal(m)
		n += agentsdk.EstimateTokens(b)
	}
	return n
}

// requireNoSplitCalls: every tool result in a request answers a call
// made earlier in it, and every call made in it is answered.
func requireNoSplitCalls(t *testing.T, i int, req agentsdk.ModelRequest) {
	made := map[string]bool{}
	answered := map[string]bool{}
	for _, m := range req.Messages {
		for _, tc := range m.ToolCalls() {
			made[tc.ID] = true
		}
		if m.Role == agentsdk.RoleToolResult {
			require.True(t, made[m.ToolCallID], "request %d: the result of %s without its call", i, m.ToolCallID)
			answered[m.ToolCallID] = true
		}
	}
	for id := range made {
		require.True(t, answered[id], "request %d: call %s without its result", i, id)
	}
}

// TestLongConversationCompacts: 300 model calls of one multi-turn
// conversation (30 user messages, each answered after 9 tool calls) on a
// model whose window is 2,048 tokens compact many times: every request
// the model received stays under the window, no tool call is split from
// its result, every llm_call's time travel view (compaction calls too)
// is the request sent, the timeline is a sawtooth, and the compaction
// audit accounts for what each compaction summarised.
func TestLongConversationCompacts(t *testing.T) {
	var reqs requests
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{compactingModel(&reqs)}, tools: []*agentsdk.Tool{echoTool()},
		windows: agentsdk.ContextWindows{"scripted-small": smallWindow}})
	base := "/api/orgs/" + e.orgA.Slug + "/agent-executions"
	ex := e.ok(e.keyA, http.MethodPost, base, map[string]any{
		"kind": "react-agent", "systemPrompt": "Echo as asked.", "userPrompt": "[m1] Echo this.", "models": smallModel,
		"tools": []string{"echo"}, "config": map[string]any{"mode": "multi-turn", "loopThreshold": -1},
	})
	id := ex["id"].(string)
	path := base + "/" + id
	seq := 0.0
	waitTurn := func() {
		poll(t, time.Minute, func() bool {
			got := e.ok(e.keyA, http.MethodGet, path, nil)
			require.NotEqual(t, "FAILED", got["status"], "%v", got["errorMessage"])
			return got["status"] == "WAITING" && got["currentCheckpointSeq"].(float64) > seq
		}, "turn never ended")
		seq = e.ok(e.keyA, http.MethodGet, path, nil)["currentCheckpointSeq"].(float64)
	}
	waitTurn()
	const messages = 30
	for i := 2; i <= messages; i++ {
		e.ok(e.keyA, http.MethodPost, path+"/signal", map[string]any{"signalName": "userMessage",
			"signalValue": map[string]any{"text": fmt.Sprintf("[m%d] Echo this.", i)}})
		waitTurn()
	}

	// Every answer came, and every request fitted.
	msgs := e.all(path+"/messages?pageSize=500", "messages")
	require.Len(t, msgs, messages*(1+2*(roundsPerMessage-1)+1))
	require.Equal(t, "Done with m30.", msgs[len(msgs)-1]["content"].([]any)[0].(map[string]any)["text"])
	var answers, summaries, largest int
	for i, req := range reqs.all() {
		n := requestTokens(req)
		require.Less(t, n, smallWindow, "request %d is %d tokens: past the window", i, n)
		largest = max(largest, n)
		requireNoSplitCalls(t, i, req)
		if strings.HasPrefix(req.System, "You compact") {
			summaries++
		} else {
			answers++
		}
	}
	require.Equal(t, messages*roundsPerMessage, answers)
	require.GreaterOrEqual(t, summaries, 5, "a conversation past its window several times over compacts several times")
	t.Logf("%d model calls, %d compactions, largest request %d tokens of %d", answers, summaries, largest, smallWindow)

	// Time travel: each call's view (at the answer it wrote, or its
	// llm_call entry) is what the model was sent, a compaction's summary
	// call included.
	entries := e.all(path+"/entries?pageSize=500", "entries")
	calls := 0
	var compactions []map[string]any
	for _, en := range entries {
		switch en["type"] {
		case string(agentsdk.EntryCompaction):
			compactions = append(compactions, en)
			require.Positive(t, en["tokens"], "a compaction's tokens are its summary's")
		case string(agentsdk.EntryMessage):
			require.Positive(t, en["tokens"], "every entry has a token count")
		}
		if holdsCall(en) {
			got := e.ok(e.keyA, http.MethodGet, path+"/entries/"+en["id"].(string)+"/context", nil)
			sent := reqs.turn(calls)
			calls++
			require.Equal(t, sent.System, got["system"], "call %d", calls)
			wantMsgs, err := json.Marshal(sent.Messages)
			require.NoError(t, err)
			gotMsgs, err := json.Marshal(got["messages"])
			require.NoError(t, err)
			require.JSONEq(t, string(wantMsgs), string(gotMsgs), "call %d: the messages the model received", calls)
		}
	}
	require.Equal(t, reqs.count(), calls)
	require.Len(t, compactions, summaries)

	// The timeline is a sawtooth: it climbs, drops at each compaction,
	// and never reaches the window.
	tl := e.ok(e.keyA, http.MethodGet, path+"/token-timeline", nil)
	require.EqualValues(t, smallWindow, tl["limit"])
	drops, prev := 0, int64(0)
	for _, pt := range e.all(path+"/token-timeline?pageSize=500", "points") {
		ctxTokens := int64Field(t, pt, "contextTokens")
		if pt["compaction"] == true {
			require.Less(t, ctxTokens, prev, "the context shrinks at a compaction")
			drops++
		}
		prev = ctxTokens
	}
	require.Equal(t, summaries, drops)

	// The audit of the last compaction: it summarised the messages from
	// the previous boundary to its own, and folded the previous summary in.
	last := compactions[len(compactions)-1]
	audit := e.ok(e.keyA, http.MethodGet, path+"/compactions/"+last["id"].(string), nil)
	var rec agentsdk.CompactionRecord
	raw, err := json.Marshal(last["content"])
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &rec))
	require.Equal(t, "auto", audit["trigger"])
	require.Equal(t, rec.Summary, audit["summary"])
	require.NotEmpty(t, audit["previousCompactionId"])
	require.Less(t, audit["tokensAfter"], audit["tokensBefore"])
	compacted := audit["compactedEntries"].([]any)
	require.Len(t, compacted, rec.CompactedMessages)
	sum := 0
	for _, c := range compacted {
		sum += int(c.(map[string]any)["tokens"].(float64))
	}
	prevSummary := 0
	for _, c := range compactions {
		if c["id"] == audit["previousCompactionId"] {
			prevSummary = int(c["tokens"].(float64))
		}
	}
	require.EqualValues(t, sum+prevSummary, audit["compactedTokens"], "the compacted entries' tokens and the previous summary's")

	// Usage counts every model call, the summaries' too.
	usage := e.ok(e.keyA, http.MethodGet, path+"/usage", nil)
	require.Equal(t, int64(reqs.count()), int64Field(t, usage["total"].(map[string]any), "calls"))
}

// TestManualCompaction: POST …/compact compacts a waiting execution at
// once, whatever its size; the next call sends the summary and the kept
// messages. Bad requests get clear errors.
func TestManualCompaction(t *testing.T) {
	var reqs requests
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{compactingModel(&reqs)}, tools: []*agentsdk.Tool{echoTool()}})
	base := "/api/orgs/" + e.orgA.Slug + "/agent-executions"
	ex := e.ok(e.keyA, http.MethodPost, base, map[string]any{
		"kind": "react-agent", "userPrompt": "[m1] Echo this.", "models": scriptedModel,
		"tools": []string{"echo"}, "config": map[string]any{"mode": "multi-turn", "loopThreshold": -1},
	})
	id := ex["id"].(string)
	path := base + "/" + id
	e.waitStatus(id, "WAITING", time.Minute)
	e.ok(e.keyA, http.MethodPost, path+"/signal", map[string]any{"signalName": "userMessage", "signalValue": map[string]any{"text": "[m2] Echo this."}})
	poll(t, time.Minute, func() bool {
		msgs := items(t, e.ok(e.keyA, http.MethodGet, path+"/messages?pageSize=500", nil), "messages")
		return len(msgs) == 2*(1+2*(roundsPerMessage-1)+1)
	}, "the second answer never came")
	e.waitStatus(id, "WAITING", time.Minute)
	require.Equal(t, 2*roundsPerMessage, reqs.count(), "no compaction below the threshold")

	sig := e.ok(e.keyA, http.MethodPost, path+"/compact", map[string]any{})
	require.Equal(t, "compact", sig["signalName"])
	var comp map[string]any
	poll(t, time.Minute, func() bool {
		for _, en := range e.all(path+"/entries?pageSize=500", "entries") {
			if en["type"] == string(agentsdk.EntryCompaction) {
				comp = en
			}
		}
		return comp != nil
	}, "no compaction entry")
	e.waitStatus(id, "WAITING", time.Minute)
	audit := e.ok(e.keyA, http.MethodGet, path+"/compactions/"+comp["id"].(string), nil)
	require.Equal(t, "manual", audit["trigger"])
	require.NotEmpty(t, audit["compactedEntries"])
	require.Equal(t, 2*roundsPerMessage+1, reqs.count(), "the summary's call")

	// The next call sends the summary first, then the kept messages.
	e.ok(e.keyA, http.MethodPost, path+"/signal", map[string]any{"signalName": "userMessage", "signalValue": map[string]any{"text": "[m3] Echo this."}})
	poll(t, time.Minute, func() bool { return reqs.count() > 2*roundsPerMessage+1 }, "no call after the compaction")
	next := reqs.turn(2*roundsPerMessage + 1)
	require.True(t, strings.HasPrefix(next.Messages[0].Text(), "The conversation before this point was compacted"), next.Messages[0].Text())
	require.Contains(t, next.Messages[0].Text(), "summary 1")
	require.Equal(t, "[m2] Echo this.", next.Messages[1].Text(), "kept from the last user message on")
	ctxView := e.ok(e.keyA, http.MethodGet, path+"/entries/"+comp["id"].(string)+"/context", nil)
	require.Equal(t, comp["id"], ctxView["compactionEntryId"])
	require.Positive(t, ctxView["tokens"])

	// Bad input.
	e.fails(e.keyA, http.MethodGet, path+"/compactions/"+audit["firstKeptEntryId"].(string), nil, http.StatusNotFound, "not_found")
	e.fails(e.keyA, http.MethodGet, path+"/compactions/00000000-0000-0000-0000-000000000000", nil, http.StatusNotFound, "not_found")
	e.fails(e.keyB, http.MethodGet, "/api/orgs/"+e.orgB.Slug+"/agent-executions/"+id+"/compactions/"+comp["id"].(string), nil, http.StatusNotFound, "not_found")
	e.fails(e.keyB, http.MethodPost, "/api/orgs/"+e.orgB.Slug+"/agent-executions/"+id+"/compact", map[string]any{}, http.StatusNotFound, "not_found")
	e.ok(e.keyA, http.MethodDelete, path, nil)
	e.waitStatus(id, "CANCELLED", time.Minute)
	e.fails(e.keyA, http.MethodPost, path+"/compact", map[string]any{}, http.StatusConflict, "conflict")
	e.fails(e.keyA, http.MethodPost, base, map[string]any{
		"kind": "react-agent", "userPrompt": "x", "models": scriptedModel, "config": map[string]any{"compaction": map[string]any{"threshold": 1.5}},
	}, http.StatusBadRequest, "invalid_argument")
	e.fails(e.keyA, http.MethodPost, base, map[string]any{
		"kind": "react-agent", "userPrompt": "x", "models": scriptedModel, "config": map[string]any{"compaction": map[string]any{"threshold": 0.5, "keepRecent": 0.6}},
	}, http.StatusBadRequest, "invalid_argument")
}

// int64Field reads an int64 field of a JSON object as the gateway writes
// it: a number, not protojson's decimal string.
func int64Field(t *testing.T, obj map[string]any, name string) int64 {
	v, ok := obj[name].(float64)
	require.True(t, ok, "%s is a JSON number: %v", name, obj[name])
	return int64(v)
}

// count is how many requests were recorded.
func (r *requests) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.got)
}

// all is a copy of the requests recorded.
func (r *requests) all() []agentsdk.ModelRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]agentsdk.ModelRequest(nil), r.got...)
}
