package gateway_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/providertest"
	"github.com/agentree/agentree/agentsdk/tools/demo"
)

// TestLLMCallEntriesForEveryModelCall: a one-shot and a multi-turn
// execution over REST against a fake Anthropic server: /entries has one
// llm_call entry per model call (seed 000), right after the answer it
// records, with the model, tokens, the cost as {input, output, total}, the
// latency and the stop reason; small pages give what one page does, a GET
// by its ID gives the same entry, its context is the call's request, and
// the checkpoint's totalUsage names tokens as the seed does.
func TestLLMCallEntriesForEveryModelCall(t *testing.T) {
	const model = "claude-sonnet-4-5"
	usage := providertest.AnthropicUsage{Input: 40}
	srv := providertest.NewServer(t,
		// One-shot: a tool turn, then the answer.
		reply(providertest.NewAnthropicStream(model, usage).Text("Searching.").
			ToolUse("toolu_1", demo.SearchNotesTool, `{"query": "history"}`).End("tool_use", 30)),
		reply(providertest.NewAnthropicStream(model, usage).Text("Done.").End("end_turn", 12)),
		// Multi-turn: an answer, then the follow-up's tool turn and answer.
		reply(providertest.NewAnthropicStream(model, usage).Text("Hello.").End("end_turn", 5)),
		reply(providertest.NewAnthropicStream(model, usage).Text("Counting.").
			ToolUse("toolu_2", demo.WordCountTool, `{"text": "two words"}`).End("tool_use", 20)),
		reply(providertest.NewAnthropicStream(model, usage).Text("Two.").End("end_turn", 7)),
	)
	e := newAnthropicEnv(t, srv)
	base := "/api/orgs/" + e.orgA.Slug + "/agent-executions"
	create := func(mode string) (string, string) {
		ex := e.ok(e.keyA, http.MethodPost, base, map[string]any{
			"kind": "react-agent", "userPrompt": "Go.",
			"models": []any{map[string]any{"provider": "anthropic", "modelId": model}},
			"tools":  []string{demo.SearchNotesTool, demo.WordCountTool},
			"config": map[string]any{"mode": mode},
		})
		return ex["id"].(string), base + "/" + ex["id"].(string)
	}

	oneShot, oneShotPath := create("one-shot")
	e.waitStatus(oneShot, "COMPLETED", time.Minute)
	checkLLMCalls(t, e, oneShotPath, []string{"tool_use", "end_turn"}, []float64{30, 12})

	multi, multiPath := create("multi-turn")
	e.waitStatus(multi, "WAITING", time.Minute)
	e.ok(e.keyA, http.MethodPost, multiPath+"/signal", map[string]any{
		"signalName": "userMessage", "signalValue": map[string]any{"text": "Count two words."},
	})
	poll(t, time.Minute, func() bool {
		ex := e.ok(e.keyA, http.MethodGet, multiPath, nil)
		if ex["status"] != "WAITING" {
			return false
		}
		n := 0
		for _, en := range e.all(multiPath+"/entries?pageSize=500", "entries") {
			if en["type"] == string(agentsdk.EntryLLMCall) {
				n++
			}
		}
		return n == 3
	}, "the follow-up was never answered")
	checkLLMCalls(t, e, multiPath, []string{"end_turn", "tool_use", "end_turn"}, []float64{5, 20, 7})

	cp := e.ok(e.keyA, http.MethodGet, multiPath+"/checkpoints/latest", nil)
	total := cp["state"].(map[string]any)["totalUsage"].(map[string]any)
	require.EqualValues(t, 5+20+7, total["outputTokens"], "the seed's name")
	require.EqualValues(t, total["outputTokens"], total["output"], "the earlier name, kept for a release")
	require.Positive(t, total["inputTokens"])
}

// checkLLMCalls checks an execution's llm_call entries: one per answer,
// in order, with the stop reasons and output tokens given.
func checkLLMCalls(t *testing.T, e *env, path string, stops []string, outputs []float64) {
	t.Helper()
	all := e.all(path+"/entries?pageSize=500", "entries")
	require.Equal(t, all, e.all(path+"/entries?pageSize=3", "entries"), "pages of 3 give what one page does")
	byID := map[string]map[string]any{}
	var calls []map[string]any
	for i, en := range all {
		byID[en["id"].(string)] = en
		if i > 0 {
			require.Greater(t, mustNumber(t, en["seq"]), mustNumber(t, all[i-1]["seq"]), "arrival order")
		}
		if en["type"] != string(agentsdk.EntryLLMCall) {
			continue
		}
		calls = append(calls, en)
		answer := all[i-1]
		require.Equal(t, answer["id"], en["parentId"], "the record follows the answer it records, its child")
		require.Equal(t, "assistant", answer["role"])
		require.Equal(t, answer["turnId"], en["turnId"])
		require.Equal(t, answer["stepNumber"], en["stepNumber"])

		m := en["metadata"].(map[string]any)
		require.Equal(t, map[string]any{"provider": "anthropic", "modelId": "claude-sonnet-4-5"}, m["model"])
		u := m["usage"].(map[string]any)
		require.Positive(t, u["input"])
		require.Equal(t, mustNumber(t, u["input"])+mustNumber(t, u["output"])+mustNumber(t, u["cacheRead"])+mustNumber(t, u["cacheWrite"]),
			mustNumber(t, u["totalTokens"]))
		cost := m["cost"].(map[string]any)
		require.Positive(t, cost["input"], "the model has a list price")
		require.Positive(t, cost["output"])
		require.InDelta(t, mustNumber(t, cost["total"]), mustNumber(t, cost["input"])+mustNumber(t, cost["output"]), 1e-12)
		require.Contains(t, m, "latencyMs")
		require.GreaterOrEqual(t, mustNumber(t, m["latencyMs"]), 0.0)

		got := e.ok(e.keyA, http.MethodGet, path+"/entries/"+en["id"].(string), nil)
		require.Equal(t, en, got, "a GET by its ID")
		ctx := e.ok(e.keyA, http.MethodGet, path+"/entries/"+en["id"].(string)+"/context", nil)
		require.Equal(t, true, ctx["sent"], "its context is the request the call sent")
	}
	require.Len(t, calls, len(stops), "one llm_call entry per model call")
	for i, c := range calls {
		m := c["metadata"].(map[string]any)
		require.Equal(t, stops[i], m["stopReason"])
		require.EqualValues(t, outputs[i], m["usage"].(map[string]any)["output"])
	}
	e.fails(e.keyA, http.MethodGet, path+"/entries?cursor=bm90LWEtY3Vyc29y", nil, http.StatusBadRequest, "invalid_argument")
}
