package gateway_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
)

// holdsCall reports whether an entry of the API is a model call's record:
// an llm_call entry, which every call has.
func holdsCall(en map[string]any) bool {
	return en["type"] == string(agentsdk.EntryLLMCall)
}

// measuredAt reports whether an entry on the path is where the provider's
// count replaces the estimates: an answer a call wrote (whose record it
// stores), or a compaction's llm_call entry.
func measuredAt(en map[string]any) bool {
	meta, _ := en["metadata"].(map[string]any)
	return en["type"] == string(agentsdk.EntryLLMCall) || (en["type"] == string(agentsdk.EntryMessage) && meta["llmCall"] != nil)
}

// onPath leaves out the llm_call entries served beside the answers they
// record: children of the answers, off the conversation's path.
func onPath(entries []map[string]any) []map[string]any {
	byID := map[any]map[string]any{}
	var out []map[string]any
	for _, en := range entries {
		byID[en["id"]] = en
		if p := byID[en["parentId"]]; holdsCall(en) && p != nil && p["role"] == string(agentsdk.RoleAssistant) {
			continue
		}
		out = append(out, en)
	}
	return out
}

// TestContextAtEntryIsWhatTheModelSaw: for every answer a model call
// wrote, the time travel view is the request the model received — system
// prompt, tools, messages, model — and at any other entry it is what a
// call there would send.
func TestContextAtEntryIsWhatTheModelSaw(t *testing.T) {
	var reqs requests
	model := scripted.New(func(turn int, req agentsdk.ModelRequest) scripted.Turn {
		reqs.add(req)
		if turn < 2 {
			return scripted.Turn{Text: "Echoing.", ToolCalls: echoCall("call_"+string(rune('a'+turn)), "x")}
		}
		return scripted.Turn{Text: "Done."}
	})
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{model}, tools: []*agentsdk.Tool{echoTool()}})
	base := "/api/orgs/" + e.orgA.Slug + "/agent-executions"
	ex := e.ok(e.keyA, http.MethodPost, base, map[string]any{
		"kind": "react-agent", "systemPrompt": "Be terse.", "userPrompt": "Echo twice.", "models": scriptedModel,
		"tools": []string{"echo"}, "config": map[string]any{"maxTokens": 321, "temperature": 0.5},
	})
	id := ex["id"].(string)
	path := base + "/" + id
	e.waitStatus(id, "COMPLETED", time.Minute)

	entries := e.all(path+"/entries?pageSize=500", "entries")
	var calls int
	for _, en := range entries {
		if !holdsCall(en) {
			continue
		}
		got := e.ok(e.keyA, http.MethodGet, path+"/entries/"+en["id"].(string)+"/context", nil)
		sent := reqs.turn(calls)
		calls++
		require.Equal(t, true, got["sent"])
		require.Equal(t, sent.System, got["system"])
		require.EqualValues(t, sent.MaxTokens, got["maxTokens"])
		require.EqualValues(t, *sent.Temperature, got["temperature"])
		require.Equal(t, map[string]any{"provider": "scripted", "modelId": "scripted-1", "endpoint": ""}, got["model"])
		wantMsgs, err := json.Marshal(sent.Messages)
		require.NoError(t, err)
		gotMsgs, err := json.Marshal(got["messages"])
		require.NoError(t, err)
		require.JSONEq(t, string(wantMsgs), string(gotMsgs), "llm_call %d: the messages the model received", calls)
		wantTools, err := json.Marshal(sent.Tools)
		require.NoError(t, err)
		gotTools, err := json.Marshal(got["tools"])
		require.NoError(t, err)
		require.JSONEq(t, string(wantTools), string(gotTools), "llm_call %d: the tools it was offered", calls)
	}
	require.Equal(t, 3, calls)

	// At the last tool result, which holds no call: what a call there
	// would send, which is what the last call was sent.
	var last map[string]any
	for _, en := range entries {
		if en["role"] == "tool_result" {
			last = en
		}
	}
	require.NotNil(t, last)
	got := e.ok(e.keyA, http.MethodGet, path+"/entries/"+last["id"].(string)+"/context", nil)
	require.Equal(t, false, got["sent"])
	wantMsgs, err := json.Marshal(reqs.turn(2).Messages)
	require.NoError(t, err)
	gotMsgs, err := json.Marshal(got["messages"])
	require.NoError(t, err)
	require.JSONEq(t, string(wantMsgs), string(gotMsgs), "everything up to the tool result")

	other := e.ok(e.keyA, http.MethodPost, base, map[string]any{
		"kind": "react-agent", "userPrompt": "Another.", "models": scriptedModel, "tools": []string{"echo"},
	})
	e.fails(e.keyA, http.MethodGet, base+"/"+other["id"].(string)+"/entries/"+last["id"].(string)+"/context", nil, http.StatusNotFound, "not_found")
	e.fails(e.keyA, http.MethodGet, path+"/entries/00000000-0000-0000-0000-000000000000/context", nil, http.StatusNotFound, "not_found")
	e.fails(e.keyA, http.MethodGet, path+"/entries/not-an-id/context", nil, http.StatusNotFound, "not_found")
	e.fails(e.keyB, http.MethodGet, "/api/orgs/"+e.orgB.Slug+"/agent-executions/"+id+"/entries/"+last["id"].(string)+"/context", nil, http.StatusNotFound, "not_found")
}
