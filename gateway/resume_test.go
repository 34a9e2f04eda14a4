package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/entrystore"
)

// stepper calls echo once a turn until turn `until`, then answers.
func stepper(until int) *scripted.Provider {
	return scripted.New(func(turn int, _ agentsdk.ModelRequest) scripted.Turn {
		if turn < until {
			return scripted.Turn{ToolCalls: []agentsdk.ToolCall{{ID: fmt.Sprintf("call_%d", turn), Name: "echo",
				Arguments: []byte(fmt.Sprintf(`{"text":"step %d"}`, turn))}}}
		}
		return scripted.Turn{Text: "All steps done.\nDetails follow."}
	})
}

// TestBudgetPausesAndResumeContinues: an execution that spends its
// maxSteps ends PAUSED (agent.paused ends its stream), not FAILED; a resume
// is a new execution that continues the same tree from the paused leaf,
// without copying it, numbers its steps on from the paused total and has
// a fresh budget.
func TestBudgetPausesAndResumeContinues(t *testing.T) {
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{stepper(50)}, tools: []*agentsdk.Tool{echoTool()}})
	base := "/api/orgs/" + e.orgA.Slug + "/agent-executions"
	ex := e.ok(e.keyA, http.MethodPost, base, map[string]any{
		"kind": "react-agent", "userPrompt": "Take your steps.", "models": scriptedModel, "tools": []string{"echo"},
		"config": map[string]any{"maxSteps": 45},
	})
	id := ex["id"].(string)
	path := base + "/" + id
	evs := e.openStream(t, e.keyA, path+"/stream", "").rest(t, 2*time.Minute)
	last := evs[len(evs)-1]
	require.Equal(t, "agent.paused", last.Event, "the stream ends with agent.paused")
	require.JSONEq(t, `{"agentExecutionId":"`+id+`","status":"PAUSED","stopReason":"max_steps","steps":45}`, last.Data)

	paused := e.waitStatus(id, "PAUSED", 10*time.Second)
	require.EqualValues(t, 45, paused["stepCount"])
	require.EqualValues(t, 45, paused["maxSteps"])
	require.Equal(t, "max_steps", paused["stopReason"])
	require.NotEmpty(t, paused["completedAt"])
	pausedMsgs := items(t, e.ok(e.keyA, http.MethodGet, path+"/messages?pageSize=500", nil), "messages")
	e.fails(e.keyA, http.MethodPost, path+"/signal", map[string]any{"signalName": "userMessage", "signalValue": map[string]any{"text": "more"}},
		http.StatusConflict, "conflict")

	res := e.ok(e.keyA, http.MethodPost, path+"/resume", map[string]any{"maxSteps": 10, "message": "Keep going."})
	rid := res["id"].(string)
	require.NotEqual(t, id, rid)
	require.Equal(t, id, res["resumedFrom"])
	require.EqualValues(t, 10, res["maxSteps"])
	done := e.waitStatus(rid, "COMPLETED", 2*time.Minute)
	require.EqualValues(t, 51, done["stepCount"], "steps count on across the resume: five with tool calls, and the answer's")
	require.Equal(t, "All steps done.", done["summary"])
	require.Positive(t, done["durationMs"])

	rpath := base + "/" + rid
	calls := e.all(rpath+"/tool-calls?pageSize=500", "toolCalls")
	require.Len(t, calls, 5)
	require.EqualValues(t, 46, calls[0]["stepNumber"], "the first step after the resume is 46")
	require.EqualValues(t, 50, calls[4]["stepNumber"])

	// The same tree: the resume's conversation is the paused one plus what
	// it added, and it holds only its own entries.
	msgs := items(t, e.ok(e.keyA, http.MethodGet, rpath+"/messages?pageSize=500", nil), "messages")
	require.Equal(t, pausedMsgs, msgs[:len(pausedMsgs)], "the paused conversation, shared")
	require.Equal(t, "Keep going.", msgs[len(pausedMsgs)]["content"].([]any)[0].(map[string]any)["text"])
	own, _, err := e.es.ListEntries(context.Background(), e.orgA.ID, rid, entrystore.Page{Limit: 500})
	require.NoError(t, err)
	for _, en := range own {
		require.Equal(t, rid, en.ExecutionID)
	}
	require.Len(t, own, 1+5*2+1, "continue message, 5 × (answer, result), final answer: no copies")

	listed := items(t, e.ok(e.keyA, http.MethodGet, base+"?status=PAUSED", nil), "agentExecutions")
	require.Len(t, listed, 1)
	require.Equal(t, id, listed[0]["id"])
}

// TestResumeRefusedUnlessPaused: only a PAUSED run can be resumed, once.
func TestResumeRefusedUnlessPaused(t *testing.T) {
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{stepper(3)}, tools: []*agentsdk.Tool{echoTool()}})
	base := "/api/orgs/" + e.orgA.Slug + "/agent-executions"
	start := func(maxSteps int) string {
		ex := e.ok(e.keyA, http.MethodPost, base, map[string]any{
			"kind": "react-agent", "userPrompt": "Steps.", "models": scriptedModel, "tools": []string{"echo"},
			"config": map[string]any{"maxSteps": maxSteps},
		})
		return ex["id"].(string)
	}
	completed := start(0)
	e.waitStatus(completed, "COMPLETED", time.Minute)
	r := e.fails(e.keyA, http.MethodPost, base+"/"+completed+"/resume", map[string]any{}, http.StatusConflict, "conflict")
	require.Contains(t, r.Body["message"], "only paused runs can be resumed (it is COMPLETED)")

	paused := start(2)
	e.waitStatus(paused, "PAUSED", time.Minute)
	e.ok(e.keyA, http.MethodPost, base+"/"+paused+"/resume", map[string]any{})
	r = e.fails(e.keyA, http.MethodPost, base+"/"+paused+"/resume", map[string]any{}, http.StatusConflict, "conflict")
	require.Contains(t, r.Body["message"], "resumed already")

	// Bad input.
	e.fails(e.keyA, http.MethodPost, base+"/"+paused+"/resume", map[string]any{"maxSteps": -1}, http.StatusBadRequest, "invalid_argument")
	e.fails(e.keyA, http.MethodPost, base+"/"+paused+"/resume", map[string]any{"maxSteps": 501}, http.StatusBadRequest, "invalid_argument")
	e.fails(e.keyA, http.MethodPost, base+"/"+paused+"/resume", map[string]any{"message": "   "}, http.StatusBadRequest, "invalid_argument")
	e.fails(e.keyA, http.MethodPost, base+"/"+paused+"/resume", map[string]any{"steps": 3}, http.StatusBadRequest, "invalid_argument")
	e.fails(e.keyA, http.MethodPost, base+"/"+paused+"/resume", `{"maxSteps": "ten"}`, http.StatusBadRequest, "invalid_argument")
	e.fails(e.keyA, http.MethodPost, base+"/00000000-0000-0000-0000-000000000000/resume", map[string]any{}, http.StatusNotFound, "not_found")
	e.fails(e.keyB, http.MethodPost, "/api/orgs/"+e.orgB.Slug+"/agent-executions/"+paused+"/resume", map[string]any{}, http.StatusNotFound, "not_found")
	e.fails("", http.MethodPost, base+"/"+paused+"/resume", map[string]any{}, http.StatusUnauthorized, "unauthenticated")
}

// TestResumeRefusedPast500: a run that has taken its 500 steps cannot be
// resumed; one step short, the resume's budget is cut to what is left.
func TestResumeRefusedPast500(t *testing.T) {
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{stepper(600)}, tools: []*agentsdk.Tool{echoTool()}})
	base := "/api/orgs/" + e.orgA.Slug + "/agent-executions"
	ctx := context.Background()
	// A paused run of many steps, as the store keeps it (500 real steps
	// would make a slow test of a counter).
	paused := func(steps int) string {
		ex := e.ok(e.keyA, http.MethodPost, base, map[string]any{
			"kind": "react-agent", "userPrompt": "Steps.", "models": scriptedModel, "tools": []string{"echo"},
			"config": map[string]any{"maxSteps": 1},
		})
		id := ex["id"].(string)
		e.waitStatus(id, "PAUSED", time.Minute)
		require.NoError(t, e.es.AddSteps(ctx, e.orgA.ID, id, steps-1))
		return id
	}
	full := paused(agentsdk.MaxTotalSteps)
	r := e.fails(e.keyA, http.MethodPost, base+"/"+full+"/resume", map[string]any{}, http.StatusConflict, "conflict")
	require.Contains(t, r.Body["message"], "total step limit: 500 steps taken of 500")

	almost := paused(agentsdk.MaxTotalSteps - 1)
	res := e.ok(e.keyA, http.MethodPost, base+"/"+almost+"/resume", map[string]any{"maxSteps": 50})
	require.EqualValues(t, 1, res["maxSteps"], "the budget is what is left of the run's 500")
	rid := res["id"].(string)
	e.waitStatus(rid, "PAUSED", time.Minute)
	got := e.ok(e.keyA, http.MethodGet, base+"/"+rid, nil)
	require.EqualValues(t, agentsdk.MaxTotalSteps, got["stepCount"])
	r = e.fails(e.keyA, http.MethodPost, base+"/"+rid+"/resume", map[string]any{}, http.StatusConflict, "conflict")
	require.True(t, strings.Contains(r.Body["message"].(string), "total step limit"), "%v", r.Body)
	var cfg map[string]any
	b, _ := json.Marshal(got["config"])
	require.NoError(t, json.Unmarshal(b, &cfg))
	require.EqualValues(t, 1, cfg["maxSteps"])
}
