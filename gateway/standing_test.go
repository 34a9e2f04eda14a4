package gateway_test

import (
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/entrystore"
)

// TestAlwaysAllowPerDefinition: an approval with scope definition stands
// for every later execution of that definition (they run the call without
// waiting, recorded as approved by the standing approval), not for another
// definition's; revoked, calls wait again. A run-role key can neither
// decide nor make one (403); an organization-wide one made over REST
// covers the other definition too; bad input is a 4xx.
func TestAlwaysAllowPerDefinition(t *testing.T) {
	var runs atomic.Int32
	model := scripted.New(func(turn int, _ agentsdk.ModelRequest) scripted.Turn {
		if turn == 0 {
			return scripted.Turn{ToolCalls: echoCall("call_s", "hello")}
		}
		return scripted.Turn{Text: "Echoed."}
	})
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{model}, tools: []*agentsdk.Tool{countedEcho(&runs)}})
	org := "/api/orgs/" + e.orgA.Slug
	define := func(slug string) string {
		d := e.ok(e.keyA, http.MethodPost, org+"/agent-definitions", map[string]any{"name": slug, "slug": slug, "models": scriptedModel,
			"tools": []string{"echo"}, "config": map[string]any{"toolPolicy": map[string]string{"echo": "ask"}}})
		return d["id"].(string)
	}
	defA, defB := define("def-a"), define("def-b")
	start := func(def string) (string, string) {
		ex := e.ok(e.keyA, http.MethodPost, org+"/agent-executions", map[string]any{"agentDefinitionId": def, "userPrompt": "Echo."})
		return ex["id"].(string), org + "/agent-executions/" + ex["id"].(string)
	}
	waits := func(id, path string) {
		t.Helper()
		e.waitStatus(id, "WAITING", time.Minute)
		poll(t, time.Minute, func() bool { return e.toolCall(path, "call_s")["status"] == "awaiting_approval" })
	}

	first, firstPath := start(defA)
	waits(first, firstPath)
	runKey := e.keyWith(entrystore.RoleRun)
	approval := firstPath + "/tool-calls/call_s/approval"
	e.fails(runKey, http.MethodPost, approval, map[string]any{"decision": "approve", "scope": "definition"}, http.StatusForbidden, "permission_denied")
	e.fails(runKey, http.MethodPost, org+"/standing-approvals", map[string]any{"toolName": "echo"}, http.StatusForbidden, "permission_denied")
	d := e.ok(e.keyA, http.MethodPost, approval, map[string]any{"decision": "approve", "scope": "definition"})
	standing := d["standingApproval"].(map[string]any)
	rule := standing["id"].(string)
	require.Equal(t, defA, standing["agentDefinitionId"])
	require.Equal(t, "echo", standing["toolName"])
	require.Equal(t, e.keyID(e.keyA), standing["createdBy"])
	e.waitStatus(first, "COMPLETED", time.Minute)
	require.Equal(t, int32(1), runs.Load())

	// The same definition: no wait, approved by the rule.
	second, secondPath := start(defA)
	e.waitStatus(second, "COMPLETED", time.Minute)
	require.Equal(t, int32(2), runs.Load())
	rec := e.toolCall(secondPath, "call_s")
	require.Equal(t, "ask", rec["policy"])
	a := rec["approval"].(map[string]any)
	require.Equal(t, "approve", a["decision"])
	require.Equal(t, rule, a["standingApprovalId"])

	// Another definition still waits.
	other, otherPath := start(defB)
	waits(other, otherPath)

	listed := e.ok(e.keyA, http.MethodGet, org+"/standing-approvals", nil)["standingApprovals"].([]any)
	require.Len(t, listed, 1)
	require.Equal(t, rule, listed[0].(map[string]any)["id"])

	revoked := e.ok(e.keyA, http.MethodDelete, org+"/standing-approvals/"+rule, nil)
	require.NotEmpty(t, revoked["revokedAt"])
	require.Empty(t, e.ok(e.keyA, http.MethodGet, org+"/standing-approvals", nil)["standingApprovals"])
	require.Len(t, e.ok(e.keyA, http.MethodGet, org+"/standing-approvals?includeRevoked=true", nil)["standingApprovals"], 1)
	third, thirdPath := start(defA)
	waits(third, thirdPath)
	require.Equal(t, int32(2), runs.Load(), "revoked: the call waits again")

	// Organization-wide, made directly: covers def-b's next execution.
	orgWide := e.ok(e.keyA, http.MethodPost, org+"/standing-approvals", map[string]any{"toolName": "echo"})
	require.Empty(t, orgWide["agentDefinitionId"])
	fourth, _ := start(defB)
	e.waitStatus(fourth, "COMPLETED", time.Minute)
	require.Equal(t, int32(3), runs.Load())

	// Bad input.
	e.fails(e.keyA, http.MethodPost, org+"/standing-approvals", map[string]any{}, http.StatusBadRequest, "invalid_argument")
	e.fails(e.keyA, http.MethodPost, org+"/standing-approvals", map[string]any{"toolName": "nope"}, http.StatusBadRequest, "invalid_argument")
	e.fails(e.keyA, http.MethodPost, org+"/standing-approvals", map[string]any{"toolName": "echo", "argumentPattern": "ls *"},
		http.StatusBadRequest, "invalid_argument")
	e.fails(e.keyA, http.MethodPost, org+"/standing-approvals", map[string]any{"toolName": "echo",
		"agentDefinitionId": "00000000-0000-0000-0000-000000000001"}, http.StatusBadRequest, "invalid_argument")
	e.fails(e.keyA, http.MethodPost, org+"/standing-approvals", map[string]any{"toolName": "echo", "agentDefinitionId": "x"},
		http.StatusBadRequest, "invalid_argument")
	e.fails(e.keyA, http.MethodDelete, org+"/standing-approvals/"+defA, nil, http.StatusNotFound, "not_found")
	e.fails(e.keyA, http.MethodDelete, org+"/standing-approvals/nope", nil, http.StatusNotFound, "not_found")
	e.fails(e.keyB, http.MethodDelete, "/api/orgs/"+e.orgB.Slug+"/standing-approvals/"+orgWide["id"].(string), nil, http.StatusNotFound, "not_found")
	e.fails(e.keyB, http.MethodGet, org+"/standing-approvals", nil, http.StatusNotFound, "not_found")
}
