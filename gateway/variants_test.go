package gateway_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
)

// recordingModel is echoingModel that keeps every request it got, and
// answers a branch summary's request with "SUMMARY of the branch".
type recordingModel struct {
	mu   sync.Mutex
	reqs []agentsdk.ModelRequest
	// hold, when set, holds the answer to "slow" until it is closed.
	hold chan struct{}
}

func (m *recordingModel) provider() *scripted.Provider {
	return scripted.New(func(_ int, req agentsdk.ModelRequest) scripted.Turn {
		m.mu.Lock()
		m.reqs = append(m.reqs, req)
		m.mu.Unlock()
		last := req.Messages[len(req.Messages)-1]
		switch {
		case strings.Contains(req.System, "abandoned"):
			return scripted.Turn{Text: "SUMMARY of the branch"}
		case last.Text() == "slow" && m.hold != nil:
			<-m.hold
		case last.Role == agentsdk.RoleUser && last.Text() == "use a tool":
			return scripted.Turn{ToolCalls: echoCall("call_t", "t")}
		}
		return scripted.Turn{Text: "answer to " + last.Text()}
	})
}

// texts are the texts of the last request's messages, in order.
func (m *recordingModel) texts() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, msg := range m.reqs[len(m.reqs)-1].Messages {
		out = append(out, msg.Text())
	}
	return out
}

func (m *recordingModel) calls() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.reqs)
}

// talk drives one multi-turn execution through the REST API.
type talk struct {
	t    *testing.T
	e    *env
	path string
	seq  float64
}

func startConversation(t *testing.T, e *env, prompt string) *talk {
	base := "/api/orgs/" + e.orgA.Slug + "/agent-executions"
	ex := e.ok(e.keyA, http.MethodPost, base, map[string]any{
		"kind": "react-agent", "userPrompt": prompt, "models": scriptedModel, "tools": []string{"echo"},
		"config": map[string]any{"mode": "multi-turn"},
	})
	c := &talk{t: t, e: e, path: base + "/" + ex["id"].(string)}
	c.waitTurn()
	return c
}

func (c *talk) waitTurn() {
	poll(c.t, time.Minute, func() bool {
		got := c.e.ok(c.e.keyA, http.MethodGet, c.path, nil)
		return got["status"] == "WAITING" && got["currentCheckpointSeq"].(float64) > c.seq
	}, "turn never ended")
	c.seq = c.e.ok(c.e.keyA, http.MethodGet, c.path, nil)["currentCheckpointSeq"].(float64)
}

func (c *talk) say(text string) {
	c.e.ok(c.e.keyA, http.MethodPost, c.path+"/signal", map[string]any{"signalName": "userMessage", "signalValue": map[string]any{"text": text}})
	c.waitTurn()
}

// entry is the ID of the execution's entry whose text is text.
func (c *talk) entry(text string) string {
	for _, en := range c.e.all(c.path+"/entries?pageSize=500", "entries") {
		if blocks, ok := en["content"].(map[string]any)["content"].([]any); ok && len(blocks) > 0 && blocks[0].(map[string]any)["text"] == text {
			return en["id"].(string)
		}
	}
	c.t.Fatalf("no entry says %q", text)
	return ""
}

// TestVariantsExcludeEntriesFromContext: excluding an entry the model saw
// forks the variant (the original keeps its record) and the next call
// leaves the entry out; switching back to main moves the waiting
// execution's leaf back, and its next call sees main's path again.
func TestVariantsExcludeEntriesFromContext(t *testing.T) {
	m := &recordingModel{}
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{m.provider()}, tools: []*agentsdk.Tool{echoTool()}})
	c := startConversation(t, e, "message 1")
	c.say("message 2")
	u1 := c.entry("message 1")

	vs := items(t, e.ok(e.keyA, http.MethodGet, c.path+"/variants", nil), "variants")
	require.Len(t, vs, 1)
	require.Equal(t, "main", vs[0]["name"])
	require.Equal(t, true, vs[0]["active"])

	edit := e.ok(e.keyA, http.MethodPut, c.path+"/variants/main/exclusions", map[string]any{"excludedEntryIds": []string{u1}})
	require.Equal(t, true, edit["forked"], "message 1 was in the last call's context: the edit forks")
	fork := edit["variant"].(map[string]any)
	require.Equal(t, "main-edit-1", fork["name"])
	require.Equal(t, "main", fork["forkedFrom"])
	require.Equal(t, true, fork["active"])
	require.Equal(t, []any{u1}, fork["excludedEntryIds"])
	main := e.ok(e.keyA, http.MethodGet, c.path+"/variants/main", nil)
	require.Empty(t, main["excludedEntryIds"], "the original variant is not rewritten")
	require.Equal(t, false, main["active"])

	c.say("message 3")
	got := m.texts()
	require.NotContains(t, got, "message 1")
	require.Equal(t, []string{"answer to message 1", "message 2", "answer to message 2", "message 3"}, got)

	// Time travel and the token timeline show the variant's view: the
	// active one's by default, another's when named.
	texts := func(ctxt map[string]any) []string {
		var out []string
		for _, msg := range ctxt["messages"].([]any) {
			out = append(out, msg.(map[string]any)["content"].([]any)[0].(map[string]any)["text"].(string))
		}
		return out
	}
	a3 := c.entry("answer to message 3")
	require.Equal(t, got, texts(e.ok(e.keyA, http.MethodGet, c.path+"/entries/"+a3+"/context", nil)), "what the call was sent")
	require.Equal(t, []string{"message 1", "answer to message 1", "message 2", "answer to message 2", "message 3"},
		texts(e.ok(e.keyA, http.MethodGet, c.path+"/entries/"+a3+"/context?variant=main", nil)))
	points := items(t, e.ok(e.keyA, http.MethodGet, c.path+"/token-timeline", nil), "points")
	require.Equal(t, u1, points[0]["entryId"])
	require.Equal(t, true, points[0]["excluded"])
	require.Equal(t, false, items(t, e.ok(e.keyA, http.MethodGet, c.path+"/token-timeline?variant=main", nil), "points")[0]["excluded"])
	e.fails(e.keyA, http.MethodGet, c.path+"/token-timeline?variant=nope", nil, http.StatusNotFound, "not_found")

	// Back to main: its leaf was the answer to message 2, so message 4
	// goes on from there, beside message 3, with nothing excluded.
	e.ok(e.keyA, http.MethodPost, c.path+"/variants/main/activate", map[string]any{})
	c.say("message 4")
	require.Equal(t, []string{"message 1", "answer to message 1", "message 2", "answer to message 2", "message 4"}, m.texts())
	msgs := items(t, e.ok(e.keyA, http.MethodGet, c.path+"/messages?pageSize=500", nil), "messages")
	require.Len(t, msgs, 6, "the active path: main's, message 3 and its answer left beside it")

	// A tool call and its result go together.
	c.say("use a tool")
	var call, result string
	for _, en := range e.all(c.path+"/entries?pageSize=500", "entries") {
		switch en["role"] {
		case "tool_result":
			result = en["id"].(string)
		case "assistant":
			if blocks := en["content"].(map[string]any)["content"].([]any); blocks[0].(map[string]any)["type"] == "tool_call" {
				call = en["id"].(string)
			}
		}
	}
	require.NotEmpty(t, call)
	r := e.fails(e.keyA, http.MethodPut, c.path+"/variants/main/exclusions", map[string]any{"excludedEntryIds": []string{result}}, http.StatusBadRequest, "invalid_argument")
	require.Contains(t, r.Body["message"], "exclude the call and its results together")
	edit = e.ok(e.keyA, http.MethodPut, c.path+"/variants/main/exclusions", map[string]any{"excludedEntryIds": []string{call, result}})
	require.Equal(t, true, edit["forked"])
	require.Equal(t, "main-edit-2", edit["variant"].(map[string]any)["name"])

	// Bad input: unknown entry or variant, another execution's or org's.
	e.fails(e.keyA, http.MethodPut, c.path+"/variants/main/exclusions", map[string]any{"excludedEntryIds": []string{"00000000-0000-0000-0000-000000000000"}}, http.StatusNotFound, "not_found")
	e.fails(e.keyA, http.MethodPut, c.path+"/variants/nope/exclusions", map[string]any{"excludedEntryIds": []string{}}, http.StatusNotFound, "not_found")
	other := startConversation(t, e, "another execution")
	e.fails(e.keyA, http.MethodPost, c.path+"/variants", map[string]any{"name": "x", "entryId": other.entry("another execution")}, http.StatusNotFound, "not_found")
	e.fails(e.keyA, http.MethodPost, c.path+"/variants", map[string]any{"name": "Bad Name", "entryId": u1}, http.StatusBadRequest, "invalid_argument")
	e.fails(e.keyB, http.MethodGet, strings.Replace(c.path, e.orgA.Slug, e.orgB.Slug, 1)+"/variants", nil, http.StatusNotFound, "not_found")

	// A variant made at an entry, with a model override, promoted.
	v := e.ok(e.keyA, http.MethodPost, c.path+"/variants", map[string]any{"name": "early", "entryId": c.entry("answer to message 1")})
	require.Equal(t, false, v["active"])
	e.ok(e.keyA, http.MethodPost, c.path+"/variants/early/promote", map[string]any{})
	c.say("message 5")
	require.Equal(t, []string{"answer to message 1", "message 5"}, m.texts()[len(m.texts())-2:])
	require.NotContains(t, m.texts(), "message 2")
}

// TestInjectionEntriesJoinTheContext: an injection after the last model
// call joins the next call's context where it was placed; an edit of it
// (now before a call) forks the variant and the next call sees the new
// text only; a delete retires it, and every version stays in the tree.
func TestInjectionEntriesJoinTheContext(t *testing.T) {
	m := &recordingModel{}
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{m.provider()}, tools: []*agentsdk.Tool{echoTool()}})
	c := startConversation(t, e, "message 1")
	a1 := c.entry("answer to message 1")

	add := e.ok(e.keyA, http.MethodPost, c.path+"/injections", map[string]any{"parentId": a1, "text": "OPERATOR: be brief"})
	require.Equal(t, false, add["forked"], "after the last call: nothing it saw changes")
	inj := add["entry"].(map[string]any)
	require.Equal(t, "injection", inj["type"])
	require.Equal(t, a1, inj["parentId"])
	c.say("message 2")
	require.Equal(t, []string{"message 1", "answer to message 1", "OPERATOR: be brief", "message 2"}, m.texts())
	msgs := items(t, e.ok(e.keyA, http.MethodGet, c.path+"/messages?pageSize=500", nil), "messages")
	require.Len(t, msgs, 4, "the injection is beside the path, not on it")

	edit := e.ok(e.keyA, http.MethodPatch, c.path+"/injections/"+inj["id"].(string), map[string]any{"text": "OPERATOR: be thorough"})
	require.Equal(t, true, edit["forked"], "the answer to message 2 saw the old text")
	require.Equal(t, "main-edit-1", edit["variant"].(map[string]any)["name"])
	c.say("message 3")
	got := m.texts()
	require.Contains(t, got, "OPERATOR: be thorough")
	require.NotContains(t, got, "OPERATOR: be brief")

	// Placed after the last call, deleting retires it for every variant.
	late := e.ok(e.keyA, http.MethodPost, c.path+"/injections", map[string]any{"parentId": c.entry("answer to message 3"), "text": "OPERATOR: late note"})
	del := e.ok(e.keyA, http.MethodDelete, c.path+"/injections/"+late["entry"].(map[string]any)["id"].(string), nil)
	require.Equal(t, false, del["forked"])
	c.say("message 4")
	require.NotContains(t, m.texts(), "OPERATOR: late note")
	require.Contains(t, m.texts(), "OPERATOR: be thorough")

	var kept int
	for _, en := range e.all(c.path+"/entries?pageSize=500", "entries") {
		if en["type"] == "injection" {
			kept++
		}
	}
	require.Equal(t, 3, kept, "every version stays in the tree for the audit")

	// Bad input.
	e.fails(e.keyA, http.MethodPost, c.path+"/injections", map[string]any{"parentId": a1, "text": " "}, http.StatusBadRequest, "invalid_argument")
	e.fails(e.keyA, http.MethodPost, c.path+"/injections", map[string]any{"parentId": "00000000-0000-0000-0000-000000000000", "text": "x"}, http.StatusNotFound, "not_found")
	e.fails(e.keyA, http.MethodDelete, c.path+"/injections/"+late["entry"].(map[string]any)["id"].(string), nil, http.StatusNotFound, "not_found")
	c.say("use a tool")
	var call string
	for _, en := range e.all(c.path+"/entries?pageSize=500", "entries") {
		if blocks, ok := en["content"].(map[string]any)["content"].([]any); ok && en["role"] == "assistant" && blocks[0].(map[string]any)["type"] == "tool_call" {
			call = en["id"].(string)
		}
	}
	r := e.fails(e.keyA, http.MethodPost, c.path+"/injections", map[string]any{"parentId": call, "text": "x"}, http.StatusBadRequest, "invalid_argument")
	require.Contains(t, r.Body["message"], "last tool result")
}

// TestBranchMovesTheLeafAndSummarises: a branch back to the first answer
// has the model summarise the abandoned turn (one call, recorded with its
// usage), and the next message goes on from the summary, beside the old
// path, which stays in the tree. A running execution cannot branch.
func TestBranchMovesTheLeafAndSummarises(t *testing.T) {
	m := &recordingModel{hold: make(chan struct{})}
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{m.provider()}, tools: []*agentsdk.Tool{echoTool()}})
	ctx := t.Context()
	c := startConversation(t, e, "message 1")
	c.say("message 2")
	a1 := c.entry("answer to message 1")
	calls := m.calls()

	out := e.ok(e.keyA, http.MethodPost, c.path+"/branch", map[string]any{"entryId": a1, "summarize": true})
	require.Equal(t, calls+1, m.calls(), "one model call wrote the summary")
	sum := out["summary"].(map[string]any)
	require.Equal(t, "branch_summary", sum["type"])
	require.Contains(t, sum["content"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"], "SUMMARY of the branch")
	require.Equal(t, sum["id"], out["execution"].(map[string]any)["leafEntryId"])
	m.mu.Lock()
	asked := m.reqs[len(m.reqs)-1].Messages[0].Text()
	m.mu.Unlock()
	require.Contains(t, asked, "message 2", "the summary is of the abandoned turn")
	require.Contains(t, asked, "answer to message 2")
	require.NotContains(t, asked, "message 1")
	var recorded int
	require.NoError(t, e.es.Pool().QueryRow(ctx, `SELECT count(*) FROM agent_entry WHERE agent_execution_id = $1
		AND entry_type = 'llm_call' AND metadata->>'purpose' = 'branch_summary'`, strings.TrimPrefix(c.path[strings.LastIndex(c.path, "/"):], "/")).Scan(&recorded))
	require.Equal(t, 1, recorded, "the summary's call is recorded, with its usage")

	c.say("message 3")
	got := m.texts()
	require.Len(t, got, 4)
	require.Equal(t, []string{"message 1", "answer to message 1"}, got[:2])
	require.Contains(t, got[2], "SUMMARY of the branch")
	require.Equal(t, "message 3", got[3])
	require.NotEmpty(t, c.entry("answer to message 2"), "the abandoned path stays in the tree")

	// Without a summary: back to the first prompt, message 4 its sibling.
	e.ok(e.keyA, http.MethodPost, c.path+"/branch", map[string]any{"entryId": c.entry("message 1")})
	c.say("message 4")
	require.Equal(t, []string{"message 1", "message 4"}, m.texts())

	// Bad input: unknown entry, another execution's, another org's.
	e.fails(e.keyA, http.MethodPost, c.path+"/branch", map[string]any{"entryId": "00000000-0000-0000-0000-000000000000"}, http.StatusNotFound, "not_found")
	e.fails(e.keyA, http.MethodPost, c.path+"/branch", map[string]any{}, http.StatusBadRequest, "invalid_argument")
	other := startConversation(t, e, "another execution")
	e.fails(e.keyA, http.MethodPost, c.path+"/branch", map[string]any{"entryId": other.entry("another execution")}, http.StatusNotFound, "not_found")
	e.fails(e.keyB, http.MethodPost, strings.Replace(c.path, e.orgA.Slug, e.orgB.Slug, 1)+"/branch", map[string]any{"entryId": a1}, http.StatusNotFound, "not_found")

	// A running execution: 409, and its turn goes on untouched.
	e.ok(e.keyA, http.MethodPost, c.path+"/signal", map[string]any{"signalName": "userMessage", "signalValue": map[string]any{"text": "slow"}})
	poll(t, time.Minute, func() bool { return e.ok(e.keyA, http.MethodGet, c.path, nil)["status"] == "RUNNING" }, "never ran")
	r := e.fails(e.keyA, http.MethodPost, c.path+"/branch", map[string]any{"entryId": a1}, http.StatusConflict, "conflict")
	require.Contains(t, r.Body["message"], "RUNNING")
	close(m.hold)
	c.waitTurn()
	require.Equal(t, []string{"message 1", "message 4", "answer to message 4", "slow"}, m.texts())
}
