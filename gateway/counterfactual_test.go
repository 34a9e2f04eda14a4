package gateway_test

import (
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
)

// countedNote is a side-effecting tool (not read-only) counting its runs.
func countedNote(runs *atomic.Int32) *agentsdk.Tool {
	return countedTool("note", "Writes a note.", "noted: ", runs)
}

// whatIf is a gateway and worker with whatIfModel, echo and note (both
// counted), and one execution of them run to its end.
type whatIf struct {
	*env
	base, id, path     string
	echoRuns, noteRuns *atomic.Int32
}

func newWhatIf(t *testing.T) whatIf {
	w := whatIf{echoRuns: new(atomic.Int32), noteRuns: new(atomic.Int32)}
	w.env = newEnv(t, envOptions{providers: []agentsdk.Provider{whatIfModel()}, tools: []*agentsdk.Tool{countedEcho(w.echoRuns), countedNote(w.noteRuns)}})
	w.base = "/api/orgs/" + w.orgA.Slug + "/agent-executions"
	w.id = w.ok(w.keyA, http.MethodPost, w.base, map[string]any{
		"kind": "react-agent", "userPrompt": "go", "models": scriptedModel, "tools": []string{"echo", "note"},
	})["id"].(string)
	w.path = w.base + "/" + w.id
	w.waitStatus(w.id, "COMPLETED", time.Minute)
	return w
}

// whatIfModel echoes "a", then "b", then answers; after a note it echoes
// "b" and answers differently.
func whatIfModel() *scripted.Provider {
	return scripted.New(func(_ int, req agentsdk.ModelRequest) scripted.Turn {
		noted := false
		for _, m := range req.Messages {
			noted = noted || (m.Role == agentsdk.RoleToolResult && m.ToolName == "note")
		}
		last := req.Messages[len(req.Messages)-1]
		switch {
		case last.Role == agentsdk.RoleUser:
			return scripted.Turn{ToolCalls: echoCall("call_a", "a")}
		case last.ToolName == "note" || last.Text() == "echo: a":
			return scripted.Turn{ToolCalls: echoCall("call_b", "b")}
		case noted:
			return scripted.Turn{Text: "done differently"}
		}
		return scripted.Turn{Text: "done"}
	})
}

// entryCalling is the execution's assistant entry that calls toolCallID.
func (e *env) entryCalling(path, toolCallID string) string {
	e.t.Helper()
	for _, en := range e.all(path+"/entries?pageSize=500", "entries") {
		if en["role"] != "assistant" {
			continue
		}
		for _, b := range en["content"].(map[string]any)["content"].([]any) {
			if tc, ok := b.(map[string]any)["toolCall"].(map[string]any); ok && tc["id"] == toolCallID {
				return en["id"].(string)
			}
		}
	}
	require.Failf(e.t, "no entry", "%s has no answer calling %s", path, toolCallID)
	return ""
}

// TestCounterfactualWithAnotherAction: replacing the first tool call with
// a call of another (side-effecting) tool runs a branch in which that new
// call waits for approval whatever the policy (auto) says, and the later
// call the original made with the same arguments is answered from its
// record: the tool's side-effect counter does not move. Both paths come
// back side by side.
func TestCounterfactualWithAnotherAction(t *testing.T) {
	w := newWhatIf(t)
	e, base, id, path, echoRuns, noteRuns := w.env, w.base, w.id, w.path, w.echoRuns, w.noteRuns
	require.EqualValues(t, 2, echoRuns.Load(), "the original echoed a and b")

	first := e.entryCalling(path, "call_a")
	cf := e.ok(e.keyA, http.MethodPost, path+"/counterfactuals", map[string]any{
		"entryId": first, "action": map[string]any{"toolName": "note", "arguments": map[string]any{"text": "x"}},
	})
	cfID := cf["id"].(string)
	require.Equal(t, id, cf["originalId"])
	require.Equal(t, "action", cf["change"])
	got := e.ok(e.keyA, http.MethodGet, base+"/"+cfID, nil)
	require.Equal(t, id, got["counterfactualOf"])
	require.Equal(t, id, got["forkedFrom"])

	// The new side-effecting call waits for a person, though the policy
	// is auto.
	e.waitStatus(cfID, "WAITING", time.Minute)
	require.Equal(t, "awaiting_approval", e.toolCall(base+"/"+cfID, "call_a")["status"])
	require.Zero(t, noteRuns.Load())
	e.ok(e.keyA, http.MethodPost, base+"/"+cfID+"/tool-calls/call_a/approval", map[string]any{"decision": "approve"})
	e.waitStatus(cfID, "COMPLETED", time.Minute)
	require.EqualValues(t, 1, noteRuns.Load(), "the approved call ran")
	require.EqualValues(t, 2, echoRuns.Load(), "echo b was answered from the original's record, not run again")

	side := e.ok(e.keyA, http.MethodGet, path+"/counterfactuals/"+cfID, nil)
	orig, alt := side["original"].(map[string]any), side["counterfactual"].(map[string]any)
	require.Equal(t, []any{"done"}, orig["answers"])
	require.Equal(t, []any{"done differently"}, alt["answers"])
	require.Equal(t, "COMPLETED", orig["status"])
	require.Equal(t, "COMPLETED", alt["status"])
	require.EqualValues(t, 3, orig["steps"])
	require.EqualValues(t, 3, alt["steps"], "the replaced action and two model calls")
	decisions := func(p map[string]any) []string {
		var out []string
		for _, d := range p["decisions"].([]any) {
			d := d.(map[string]any)
			out = append(out, d["toolName"].(string)+"("+d["arguments"].(map[string]any)["text"].(string)+") "+d["status"].(string))
		}
		return out
	}
	require.Equal(t, []string{"echo(a) completed", "echo(b) completed"}, decisions(orig))
	require.Equal(t, []string{"note(x) completed", "echo(b) completed"}, decisions(alt))
	altDecisions := alt["decisions"].([]any)
	require.Equal(t, false, altDecisions[0].(map[string]any)["replayed"], "note(x) is new")
	require.Equal(t, true, altDecisions[1].(map[string]any)["replayed"], "echo(b) came from the record")
	require.Equal(t, "echo: b", altDecisions[1].(map[string]any)["outputPreview"])
}

// TestCounterfactualBadInput: unknown entries and other organizations'
// executions are 404s; no alternative or two at once, and an entry the
// alternative cannot replace, are 400s.
func TestCounterfactualBadInput(t *testing.T) {
	w := newWhatIf(t)
	e, id, path := w.env, w.id, w.path
	answer := e.entryCalling(path, "call_a")
	cfs := path + "/counterfactuals"

	e.fails(e.keyA, http.MethodPost, cfs, map[string]any{"entryId": "00000000-0000-0000-0000-000000000000", "userMessage": "hi"}, http.StatusNotFound, "not_found")
	e.fails(e.keyB, http.MethodPost, "/api/orgs/"+e.orgB.Slug+"/agent-executions/"+id+"/counterfactuals",
		map[string]any{"entryId": answer, "userMessage": "hi"}, http.StatusNotFound, "not_found")
	e.fails(e.keyA, http.MethodPost, cfs, map[string]any{"entryId": answer}, http.StatusBadRequest, "invalid_argument")
	r := e.fails(e.keyA, http.MethodPost, cfs, map[string]any{"entryId": answer, "userMessage": "hi", "model": scriptedModel[0]}, http.StatusBadRequest, "invalid_argument")
	require.Contains(t, r.Body["message"], "exactly one alternative")
	e.fails(e.keyA, http.MethodPost, cfs, map[string]any{"entryId": answer, "userMessage": "hi"}, http.StatusBadRequest, "invalid_argument")
	e.fails(e.keyA, http.MethodPost, cfs, map[string]any{"entryId": answer, "action": map[string]any{"toolName": "rm"}}, http.StatusBadRequest, "invalid_argument")
	e.fails(e.keyA, http.MethodGet, cfs+"/"+id, nil, http.StatusNotFound, "not_found")
	require.EqualValues(t, 0, w.noteRuns.Load())
}

// TestCounterfactualWithAnotherMessageAndModel: a different user message
// and a different model each run as a branch in which the calls the
// original made are answered from its record (the echo counter stays),
// the model named writes the branch's answers, and the change is named.
func TestCounterfactualWithAnotherMessageAndModel(t *testing.T) {
	w := newWhatIf(t)
	e, base, path := w.env, w.base, w.path
	var prompt string
	for _, en := range e.all(path+"/entries?pageSize=500", "entries") {
		if en["role"] == "user" {
			prompt = en["id"].(string)
		}
	}
	answer := e.entryCalling(path, "call_a")

	byMessage := e.ok(e.keyA, http.MethodPost, path+"/counterfactuals", map[string]any{"entryId": prompt, "userMessage": "go, but differently"})
	require.Equal(t, "message", byMessage["change"])
	byModel := e.ok(e.keyA, http.MethodPost, path+"/counterfactuals", map[string]any{
		"entryId": answer, "model": map[string]any{"provider": scripted.Name, "modelId": "scripted-2"}})
	require.Equal(t, "model", byModel["change"])
	// At an answer to a tool result, the branch starts from a copy of
	// that result.
	afterTool := e.ok(e.keyA, http.MethodPost, path+"/counterfactuals", map[string]any{
		"entryId": e.entryCalling(path, "call_b"), "model": map[string]any{"provider": scripted.Name, "modelId": "scripted-2"}})
	require.Equal(t, "model", afterTool["change"])
	for _, cf := range []map[string]any{byMessage, byModel, afterTool} {
		cfID := cf["id"].(string)
		e.waitStatus(cfID, "COMPLETED", time.Minute)
		side := e.ok(e.keyA, http.MethodGet, path+"/counterfactuals/"+cfID, nil)["counterfactual"].(map[string]any)
		require.Equal(t, []any{"done"}, side["answers"])
		for _, d := range side["decisions"].([]any) {
			require.Equal(t, true, d.(map[string]any)["replayed"], "%s: the original's calls come from its record", cf["change"])
		}
	}
	require.EqualValues(t, 2, w.echoRuns.Load(), "no branch ran echo again")
	msgs := items(t, e.ok(e.keyA, http.MethodGet, base+"/"+byMessage["id"].(string)+"/messages?pageSize=50", nil), "messages")
	require.Equal(t, "go, but differently", msgs[0]["content"].([]any)[0].(map[string]any)["text"])
	answers := 0
	for _, en := range e.all(base+"/"+byModel["id"].(string)+"/entries?pageSize=500", "entries") {
		if en["role"] == "assistant" && en["executionId"] == byModel["id"] {
			answers++
			require.Equal(t, "scripted-2", en["content"].(map[string]any)["model"], "the model named writes the branch's answers")
		}
	}
	require.Equal(t, 3, answers, "echo a, echo b, done")
}
