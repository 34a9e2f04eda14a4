package gateway_test

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
)

// ranEcho is the echo tool keeping the texts it ran with.
type ranEcho struct {
	mu  sync.Mutex
	ran []string
}

func (r *ranEcho) tool() *agentsdk.Tool {
	return agentsdk.NewTool("echo", "Echoes its text.",
		func(_ context.Context, _ agentsdk.ToolInvocation, a echoArgs) (string, error) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.ran = append(r.ran, a.Text)
			return "echo: " + a.Text, nil
		})
}

func (r *ranEcho) texts() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.ran...)
}

// TestEditArgumentsBeforeApproving: a person approves a waiting call with
// other arguments: bad ones are refused (400) and change nothing; the
// tool runs with the edited ones; the model's next request keeps its own
// call as it was and reads, in the result, that the arguments were edited
// and to what; the record and the approval entry keep both and who edited.
func TestEditArgumentsBeforeApproving(t *testing.T) {
	var echo ranEcho
	var reqs requests
	model := scripted.New(func(turn int, req agentsdk.ModelRequest) scripted.Turn {
		reqs.add(req)
		if turn == 0 {
			return scripted.Turn{Text: "I will echo. ", ToolCalls: echoCall("call_e", "secret")}
		}
		return scripted.Turn{Text: "Echoed."}
	})
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{model}, tools: []*agentsdk.Tool{echo.tool()}})
	id, path := e.startApproval(map[string]string{"echo": "ask"}, "one-shot")
	e.waitStatus(id, "WAITING", time.Minute)
	poll(t, time.Minute, func() bool { return e.toolCall(path, "call_e")["status"] == "awaiting_approval" })
	approval := path + "/tool-calls/call_e/approval"

	e.fails(e.keyA, http.MethodPost, approval, map[string]any{"decision": "approve", "arguments": map[string]any{"text": 5}},
		http.StatusBadRequest, "invalid_argument")
	e.fails(e.keyA, http.MethodPost, approval, map[string]any{"decision": "approve", "arguments": map[string]any{}},
		http.StatusBadRequest, "invalid_argument")
	e.fails(e.keyA, http.MethodPost, approval, map[string]any{"decision": "approve", "arguments": "text"},
		http.StatusBadRequest, "invalid_argument")
	e.fails(e.keyA, http.MethodPost, approval, map[string]any{"decision": "reject", "arguments": map[string]any{"text": "x"}},
		http.StatusBadRequest, "invalid_argument")
	e.fails(e.keyA, http.MethodPost, approval, map[string]any{"decision": "approve", "scope": "forever"},
		http.StatusBadRequest, "invalid_argument")
	e.fails(e.keyA, http.MethodPost, approval, map[string]any{"decision": "reject", "scope": "org"},
		http.StatusBadRequest, "invalid_argument")
	e.fails(e.keyA, http.MethodPost, approval, map[string]any{"decision": "approve", "scope": "definition"},
		http.StatusBadRequest, "invalid_argument")
	require.Equal(t, "awaiting_approval", e.toolCall(path, "call_e")["status"], "a refused decision changes nothing")

	e.ok(e.keyA, http.MethodPost, approval, map[string]any{"decision": "approve", "arguments": map[string]any{"text": "public"}})
	e.waitStatus(id, "COMPLETED", time.Minute)

	require.Equal(t, []string{"public"}, echo.texts(), "the tool ran once, with the edited arguments")
	msgs := reqs.turn(1).Messages
	asked := msgs[len(msgs)-2]
	require.Equal(t, agentsdk.RoleAssistant, asked.Role)
	require.JSONEq(t, `{"text":"secret"}`, string(asked.ToolCalls()[0].Arguments), "the model's own call is not rewritten")
	result := msgs[len(msgs)-1]
	require.Equal(t, "call_e", result.ToolCallID)
	require.False(t, result.IsError)
	require.Contains(t, result.Text(), "edited this call's arguments")
	require.Contains(t, result.Text(), `{"text":"public"}`)
	require.Contains(t, result.Text(), "echo: public")

	rec := e.toolCall(path, "call_e")
	require.Equal(t, "completed", rec["status"])
	require.Equal(t, map[string]any{"text": "secret"}, rec["input"], "the record's input is the model's")
	a := rec["approval"].(map[string]any)
	require.Equal(t, "approve", a["decision"])
	require.Equal(t, map[string]any{"text": "public"}, a["editedArguments"])
	require.Equal(t, e.keyID(e.keyA), a["decidedBy"])

	var audit map[string]any
	for _, en := range e.all(path+"/entries?pageSize=500", "entries") {
		if en["type"] == string(agentsdk.EntryApproval) {
			audit = en["content"].(map[string]any)
		}
	}
	require.NotNil(t, audit, "the decision is in the tree")
	b, err := json.Marshal(audit)
	require.NoError(t, err)
	require.JSONEq(t, `{"text":"secret"}`, mustField(t, b, "arguments"))
	require.JSONEq(t, `{"text":"public"}`, mustField(t, b, "editedArguments"))
	require.Equal(t, e.keyID(e.keyA), audit["decidedBy"])
}

func mustField(t *testing.T, doc []byte, key string) string {
	t.Helper()
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(doc, &m))
	require.Contains(t, m, key, "%s", doc)
	return string(m[key])
}
