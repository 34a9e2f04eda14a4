package gateway_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
)

// startTimedApproval starts a one-shot execution whose echo calls wait
// for approval with config.approvalTimeout timeout.
func (e *env) startTimedApproval(timeout map[string]any) (id, path string) {
	e.t.Helper()
	base := "/api/orgs/" + e.orgA.Slug + "/agent-executions"
	ex := e.ok(e.keyA, http.MethodPost, base, map[string]any{
		"kind": "react-agent", "userPrompt": "Echo something.", "models": scriptedModel, "tools": []string{"echo"},
		"config": map[string]any{"mode": "one-shot", "toolPolicy": map[string]string{"echo": "ask"}, "approvalTimeout": timeout},
	})
	id = ex["id"].(string)
	return id, base + "/" + id
}

// TestApprovalTimeoutOutcome: a call waiting for approval with a 2 s
// timeout that nobody decides is decided by the deadline — rejected (the
// model reads that it timed out) or approved (the tool runs) — recorded
// decidedBy timeout; a person's decision before the deadline wins and the
// timer does nothing; bad timeouts are refused with 400.
func TestApprovalTimeoutOutcome(t *testing.T) {
	var echo ranEcho
	var reqs requests
	model := scripted.New(func(turn int, req agentsdk.ModelRequest) scripted.Turn {
		if len(req.Messages) > 0 && req.Messages[len(req.Messages)-1].Role == agentsdk.RoleToolResult {
			reqs.add(req)
			return scripted.Turn{Text: "Done."}
		}
		return scripted.Turn{Text: "I will echo. ", ToolCalls: echoCall("call_t", "hello")}
	})
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{model}, tools: []*agentsdk.Tool{echo.tool()}})

	t.Run("bad input", func(t *testing.T) {
		base := "/api/orgs/" + e.orgA.Slug + "/agent-executions"
		for _, bad := range []map[string]any{
			{"seconds": 0, "outcome": "reject"},
			{"seconds": 90000, "outcome": "reject"},
			{"seconds": 3, "outcome": "ignore"},
			{"seconds": 3, "outcome": "escalate"},
			{"seconds": 3, "outcome": "approve", "escalateTo": "admin"},
		} {
			e.fails(e.keyA, http.MethodPost, base, map[string]any{
				"kind": "react-agent", "userPrompt": "x", "models": scriptedModel, "tools": []string{"echo"},
				"config": map[string]any{"toolPolicy": map[string]string{"echo": "ask"}, "approvalTimeout": bad},
			}, http.StatusBadRequest, "invalid_argument")
		}
	})

	t.Run("reject", func(t *testing.T) {
		before := len(echo.texts())
		id, path := e.startTimedApproval(map[string]any{"seconds": 2, "outcome": "reject"})
		e.waitStatus(id, "COMPLETED", time.Minute)
		require.Len(t, echo.texts(), before, "a rejected call does not run")
		rec := e.toolCall(path, "call_t")
		require.Equal(t, "rejected", rec["status"])
		a := rec["approval"].(map[string]any)
		require.Equal(t, "reject", a["decision"])
		require.Equal(t, agentsdk.DecidedByTimeout, a["decidedBy"])
		msgs := reqs.last().Messages
		require.Contains(t, msgs[len(msgs)-1].Text(), "timed out", "the model reads why")
	})

	t.Run("approve", func(t *testing.T) {
		before := len(echo.texts())
		id, path := e.startTimedApproval(map[string]any{"seconds": 2, "outcome": "approve"})
		e.waitStatus(id, "COMPLETED", time.Minute)
		require.Len(t, echo.texts(), before+1, "the approved call ran")
		rec := e.toolCall(path, "call_t")
		require.Equal(t, "completed", rec["status"])
		require.Equal(t, agentsdk.DecidedByTimeout, rec["approval"].(map[string]any)["decidedBy"])
	})

	t.Run("a person first", func(t *testing.T) {
		id, path := e.startTimedApproval(map[string]any{"seconds": 3, "outcome": "approve"})
		e.waitStatus(id, "WAITING", time.Minute)
		poll(t, time.Minute, func() bool { return e.toolCall(path, "call_t")["status"] == "awaiting_approval" })
		ex := e.ok(e.keyA, http.MethodGet, path, nil)
		require.Equal(t, agentsdk.WaitApproval, ex["waitingFor"])
		require.NotEmpty(t, ex["wakeAt"], "the wait shows its deadline")
		e.ok(e.keyA, http.MethodPost, path+"/tool-calls/call_t/approval", map[string]any{"decision": "reject", "reason": "no"})
		e.waitStatus(id, "COMPLETED", time.Minute)
		rec := e.toolCall(path, "call_t")
		require.Equal(t, "rejected", rec["status"])
		require.Equal(t, e.keyID(e.keyA), rec["approval"].(map[string]any)["decidedBy"], "the person's decision stands")
		msgs := reqs.last().Messages
		require.Contains(t, msgs[len(msgs)-1].Text(), "Their reason: no")
	})
}

// TestApprovalTimeoutEscalates: once an escalating timeout passes, the
// call keeps waiting and only a key with the role it escalated to may
// decide it (403 for others); the execution then goes on.
func TestApprovalTimeoutEscalates(t *testing.T) {
	var echo ranEcho
	model := scripted.New(func(turn int, req agentsdk.ModelRequest) scripted.Turn {
		if turn == 0 {
			return scripted.Turn{Text: "I will echo. ", ToolCalls: echoCall("call_x", "hi")}
		}
		return scripted.Turn{Text: "Done."}
	})
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{model}, tools: []*agentsdk.Tool{echo.tool()}})
	id, path := e.startTimedApproval(map[string]any{"seconds": 1, "outcome": "escalate", "escalateTo": "admin"})
	e.waitStatus(id, "WAITING", time.Minute)
	poll(t, time.Minute, func() bool { return e.toolCall(path, "call_x")["status"] == "awaiting_approval" })
	requested, err := time.Parse(time.RFC3339Nano, e.toolCall(path, "call_x")["approval"].(map[string]any)["requestedAt"].(string))
	require.NoError(t, err)
	poll(t, time.Minute, func() bool { return time.Now().After(requested.Add(time.Second)) })

	approver := e.keyWith("approve", "read")
	approval := path + "/tool-calls/call_x/approval"
	e.fails(approver, http.MethodPost, approval, map[string]any{"decision": "approve"}, http.StatusForbidden, "permission_denied")
	require.Equal(t, "awaiting_approval", e.toolCall(path, "call_x")["status"], "escalation decides nothing by itself")
	e.ok(e.keyA, http.MethodPost, approval, map[string]any{"decision": "approve"})
	e.waitStatus(id, "COMPLETED", time.Minute)
	require.Equal(t, []string{"hi"}, echo.texts())
}

// last is the latest request kept.
func (r *requests) last() agentsdk.ModelRequest {
	all := r.all()
	return all[len(all)-1]
}
