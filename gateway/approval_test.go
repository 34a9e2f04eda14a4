package gateway_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
)

// countedEcho is the echo tool counting its runs.
func countedEcho(runs *atomic.Int32) *agentsdk.Tool {
	return countedTool("echo", "Echoes its text.", "echo: ", runs)
}

// countedTool answers prefix + its text, counting its runs.
func countedTool(name, description, prefix string, runs *atomic.Int32) *agentsdk.Tool {
	return agentsdk.NewTool(name, description,
		func(_ context.Context, _ agentsdk.ToolInvocation, a echoArgs) (string, error) {
			runs.Add(1)
			return prefix + a.Text, nil
		})
}

func echoCall(id, text string) []agentsdk.ToolCall {
	return []agentsdk.ToolCall{{ID: id, Name: "echo", Arguments: []byte(`{"text":"` + text + `"}`)}}
}

// requests records what a scripted model was asked, by turn.
type requests struct {
	mu  sync.Mutex
	got []agentsdk.ModelRequest
}

func (r *requests) add(req agentsdk.ModelRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, req)
}

func (r *requests) turn(i int) agentsdk.ModelRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.got[i]
}

// startApproval creates an execution with the tool policy over REST.
func (e *env) startApproval(policy map[string]string, mode string) (id, path string) {
	e.t.Helper()
	base := "/api/orgs/" + e.orgA.Slug + "/agent-executions"
	ex := e.ok(e.keyA, http.MethodPost, base, map[string]any{
		"kind": "react-agent", "userPrompt": "Echo something.", "models": scriptedModel, "tools": []string{"echo"},
		"config": map[string]any{"mode": mode, "toolPolicy": policy},
	})
	id = ex["id"].(string)
	return id, base + "/" + id
}

// toolCall is the execution's record of the model's tool call id.
func (e *env) toolCall(path, id string) map[string]any {
	e.t.Helper()
	for _, c := range e.all(path+"/tool-calls?pageSize=500", "toolCalls") {
		if c["toolCallId"] == id {
			return c
		}
	}
	require.Failf(e.t, "no tool call", "%s has no record of %s", path, id)
	return nil
}

// keyID is the ID of the API key secret.
func (e *env) keyID(secret string) string {
	e.t.Helper()
	_, k, err := e.es.AuthenticateAPIKey(context.Background(), secret)
	require.NoError(e.t, err)
	return k.ID
}

// TestRejectedCallTellsTheModel: a call whose policy is ask waits, listed
// in agent.waiting; rejecting it over REST never runs the tool and the
// model's next request carries the person's reason; the record says who
// decided, when, and why.
func TestRejectedCallTellsTheModel(t *testing.T) {
	var runs atomic.Int32
	var reqs requests
	model := scripted.New(func(turn int, req agentsdk.ModelRequest) scripted.Turn {
		reqs.add(req)
		if turn == 0 {
			return scripted.Turn{Text: "I will echo. ", ToolCalls: echoCall("call_r", "secret")}
		}
		return scripted.Turn{Text: "Understood, I will not echo."}
	})
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{model}, tools: []*agentsdk.Tool{countedEcho(&runs)}})
	id, path := e.startApproval(map[string]string{"echo": "ask"}, "one-shot")

	s := e.openStream(t, e.keyA, path+"/stream/consolidated", "")
	evs := s.until(t, "agent.waiting", time.Minute)
	var waiting struct {
		Reason           string `json:"reason"`
		PendingToolCalls []struct {
			ToolCallID string          `json:"toolCallId"`
			ToolName   string          `json:"toolName"`
			Arguments  json.RawMessage `json:"arguments"`
			Risk       string          `json:"risk"`
		} `json:"pendingToolCalls"`
	}
	require.NoError(t, json.Unmarshal([]byte(evs[len(evs)-1].Data), &waiting))
	require.Equal(t, "approval", waiting.Reason)
	require.Len(t, waiting.PendingToolCalls, 1)
	require.Equal(t, "call_r", waiting.PendingToolCalls[0].ToolCallID)
	require.Equal(t, "echo", waiting.PendingToolCalls[0].ToolName)
	require.JSONEq(t, `{"text":"secret"}`, string(waiting.PendingToolCalls[0].Arguments))
	require.Equal(t, agentsdk.RiskMedium, waiting.PendingToolCalls[0].Risk)
	e.waitStatus(id, "WAITING", 10*time.Second)
	rec := e.toolCall(path, "call_r")
	require.Equal(t, "awaiting_approval", rec["status"])
	require.Equal(t, "ask", rec["policy"])
	require.NotEmpty(t, rec["approval"].(map[string]any)["requestedAt"])

	d := e.ok(e.keyA, http.MethodPost, path+"/tool-calls/call_r/approval", map[string]any{"decision": "reject", "reason": "no secrets, please"})
	require.NotEmpty(t, d["signalId"])
	s.until(t, "agent.completed", time.Minute)
	s.close()
	e.waitStatus(id, "COMPLETED", 10*time.Second)

	require.Zero(t, runs.Load(), "a rejected call never runs")
	last := reqs.turn(1).Messages
	result := last[len(last)-1]
	require.Equal(t, agentsdk.RoleToolResult, result.Role)
	require.Equal(t, "call_r", result.ToolCallID)
	require.True(t, result.IsError)
	require.Contains(t, result.Text(), "no secrets, please", "the model reads the person's reason")

	rec = e.toolCall(path, "call_r")
	require.Equal(t, "rejected", rec["status"])
	require.NotEmpty(t, rec["resultEntryId"])
	a := rec["approval"].(map[string]any)
	require.Equal(t, "reject", a["decision"])
	require.Equal(t, "no secrets, please", a["reason"])
	require.Equal(t, e.keyID(e.keyA), a["decidedBy"])
	requested, err := time.Parse(time.RFC3339Nano, a["requestedAt"].(string))
	require.NoError(t, err)
	decided, err := time.Parse(time.RFC3339Nano, a["decidedAt"].(string))
	require.NoError(t, err)
	require.False(t, decided.Before(requested), "decided %s before requested %s", decided, requested)

	// The decision is in the tree as an approval entry.
	var kinds []string
	for _, en := range e.all(path+"/entries?pageSize=500", "entries") {
		kinds = append(kinds, en["type"].(string))
	}
	require.Contains(t, kinds, "approval")
}

// TestForbiddenToolIsNeverRun: a forbidden tool is not offered to the
// model, and a call to it anyway is answered with an error, unrun.
func TestForbiddenToolIsNeverRun(t *testing.T) {
	var runs atomic.Int32
	var reqs requests
	model := scripted.New(func(turn int, req agentsdk.ModelRequest) scripted.Turn {
		reqs.add(req)
		if turn == 0 {
			return scripted.Turn{ToolCalls: echoCall("call_f", "anyway")}
		}
		return scripted.Turn{Text: "It is forbidden."}
	})
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{model}, tools: []*agentsdk.Tool{countedEcho(&runs)}})
	id, path := e.startApproval(map[string]string{"ec*": "forbid"}, "one-shot")
	e.waitStatus(id, "COMPLETED", time.Minute)

	require.Zero(t, runs.Load())
	require.Empty(t, reqs.turn(0).Tools, "the forbidden tool is not offered")
	rec := e.toolCall(path, "call_f")
	require.Equal(t, "error", rec["status"])
	require.Contains(t, rec["output"].(map[string]any)["text"], "forbidden")
	last := reqs.turn(1).Messages
	require.True(t, last[len(last)-1].IsError)
}

// TestAlwaysApprovesTheRestOfTheExecution: approving with always lets
// later calls to the tool run without asking, across turns.
func TestAlwaysApprovesTheRestOfTheExecution(t *testing.T) {
	var runs atomic.Int32
	model := scripted.New(func(turn int, _ agentsdk.ModelRequest) scripted.Turn {
		switch turn {
		case 0:
			return scripted.Turn{ToolCalls: echoCall("call_1", "one")}
		case 2:
			return scripted.Turn{ToolCalls: append(echoCall("call_2", "two"), echoCall("call_3", "three")...)}
		}
		return scripted.Turn{Text: "Echoed."}
	})
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{model}, tools: []*agentsdk.Tool{countedEcho(&runs)}})
	id, path := e.startApproval(map[string]string{"echo": "ask"}, "multi-turn")
	poll(t, time.Minute, func() bool {
		calls, _ := e.do(e.keyA, http.MethodGet, path+"/tool-calls?status=awaiting_approval", nil).Body["toolCalls"].([]any)
		return len(calls) == 1
	}, "the first call never waited for approval")
	e.ok(e.keyA, http.MethodPost, path+"/tool-calls/call_1/approval", map[string]any{"decision": "approve", "always": true})
	poll(t, time.Minute, func() bool { return e.toolCall(path, "call_1")["status"] == "completed" && runs.Load() == 1 })
	e.waitStatus(id, "WAITING", time.Minute)

	e.ok(e.keyA, http.MethodPost, path+"/signal", map[string]any{"signalName": "userMessage", "signalValue": map[string]any{"text": "Two more."}})
	// The tool counts its run before its record is ended: wait for both.
	poll(t, time.Minute, func() bool {
		return runs.Load() == 3 && e.toolCall(path, "call_2")["status"] == "completed" && e.toolCall(path, "call_3")["status"] == "completed"
	}, "the later calls never ran")
	for _, c := range []string{"call_2", "call_3"} {
		rec := e.toolCall(path, c)
		require.Equal(t, "ask", rec["policy"])
		require.Nil(t, rec["approval"], "%s was never asked about", c)
	}
	require.Equal(t, true, e.toolCall(path, "call_1")["approval"].(map[string]any)["always"])
	e.waitStatus(id, "WAITING", time.Minute)
}

// TestApprovalEndpointBadInput: every wrong decision gets a clear 4xx.
func TestApprovalEndpointBadInput(t *testing.T) {
	var runs atomic.Int32
	model := scripted.New(func(turn int, _ agentsdk.ModelRequest) scripted.Turn {
		if turn == 0 {
			return scripted.Turn{ToolCalls: append(echoCall("call_ok", "auto"), echoCall("call_x", "x")...)}
		}
		return scripted.Turn{Text: "Done."}
	})
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{model}, tools: []*agentsdk.Tool{countedEcho(&runs)}})
	id, path := e.startApproval(map[string]string{"echo": "ask"}, "one-shot")
	e.waitStatus(id, "WAITING", time.Minute)
	approval := func(call string) string { return path + "/tool-calls/" + call + "/approval" }

	e.fails(e.keyA, http.MethodPost, approval("call_ok"), map[string]any{"decision": "maybe"}, http.StatusBadRequest, "invalid_argument")
	e.fails(e.keyA, http.MethodPost, approval("call_ok"), map[string]any{}, http.StatusBadRequest, "invalid_argument")
	e.fails(e.keyA, http.MethodPost, approval("call_ok"), map[string]any{"decision": "reject", "always": true}, http.StatusBadRequest, "invalid_argument")
	e.fails(e.keyA, http.MethodPost, approval("call_ok"), map[string]any{"decision": "reject", "reason": strings.Repeat("é", 2001)}, http.StatusBadRequest, "invalid_argument")
	e.fails(e.keyA, http.MethodPost, approval("call_ok"), `{"decision": "approve"`, http.StatusBadRequest, "invalid_argument")
	e.fails(e.keyA, http.MethodPost, approval("call_ok"), map[string]any{"decision": "approve", "extra": 1}, http.StatusBadRequest, "invalid_argument")
	e.fails(e.keyA, http.MethodPost, approval("call_nope"), map[string]any{"decision": "approve"}, http.StatusNotFound, "not_found")
	e.fails(e.keyB, http.MethodPost, approval("call_ok"), map[string]any{"decision": "approve"}, http.StatusNotFound, "not_found")
	otherOrg := "/api/orgs/" + e.orgB.Slug + "/agent-executions/" + id + "/tool-calls/call_ok/approval"
	e.fails(e.keyB, http.MethodPost, otherOrg, map[string]any{"decision": "approve"}, http.StatusNotFound, "not_found")
	e.fails("", http.MethodPost, approval("call_ok"), map[string]any{"decision": "approve"}, http.StatusUnauthorized, "unauthenticated")
	require.Zero(t, runs.Load())

	// One decision per call: the second is refused, while it waits in the
	// inbox and after it was applied.
	e.ok(e.keyA, http.MethodPost, approval("call_ok"), map[string]any{"decision": "approve"})
	e.fails(e.keyA, http.MethodPost, approval("call_ok"), map[string]any{"decision": "reject"}, http.StatusConflict, "conflict")
	poll(t, time.Minute, func() bool { return e.toolCall(path, "call_ok")["status"] == "completed" })
	e.fails(e.keyA, http.MethodPost, approval("call_ok"), map[string]any{"decision": "approve"}, http.StatusConflict, "conflict")
	// The record's ID names the call too.
	rec := e.toolCall(path, "call_x")
	poll(t, time.Minute, func() bool { return e.toolCall(path, "call_x")["status"] == "awaiting_approval" })
	e.ok(e.keyA, http.MethodPost, approval(rec["id"].(string)), map[string]any{"decision": "reject", "reason": "enough"})
	e.waitStatus(id, "COMPLETED", time.Minute)
	require.Equal(t, int32(1), runs.Load())
	e.fails(e.keyA, http.MethodPost, approval("call_x"), map[string]any{"decision": "approve"}, http.StatusConflict, "conflict")
}

// TestCancelWhileAwaitingApproval: cancelling an execution that waits for
// a decision ends its waiting calls too; a late decision is refused.
func TestCancelWhileAwaitingApproval(t *testing.T) {
	var runs atomic.Int32
	model := scripted.New(func(int, agentsdk.ModelRequest) scripted.Turn {
		return scripted.Turn{ToolCalls: echoCall("call_c", "never")}
	})
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{model}, tools: []*agentsdk.Tool{countedEcho(&runs)}})
	id, path := e.startApproval(map[string]string{"*": "ask"}, "one-shot")
	e.waitStatus(id, "WAITING", time.Minute)
	poll(t, time.Minute, func() bool { return e.toolCall(path, "call_c")["status"] == "awaiting_approval" })
	e.ok(e.keyA, http.MethodDelete, path, nil)
	e.waitStatus(id, "CANCELLED", time.Minute)
	require.Equal(t, "cancelled", e.toolCall(path, "call_c")["status"])
	e.fails(e.keyA, http.MethodPost, path+"/tool-calls/call_c/approval", map[string]any{"decision": "approve"}, http.StatusConflict, "conflict")
	require.Zero(t, runs.Load())
}
