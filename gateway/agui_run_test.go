package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk/providertest"
	"github.com/agentree/agentree/agentsdk/tools/demo"
)

// aguiRun posts a RunAgentInput and reads the run's events to the end of
// its answer; a refusal's status and body are returned instead.
func (e *env) aguiRun(t *testing.T, key, path string, input map[string]any) ([]sseEvent, int, string) {
	t.Helper()
	body, err := json.Marshal(input)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.base+path, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return nil, resp.StatusCode, string(raw)
	}
	s := &sseStream{resp: resp, cancel: cancel, events: make(chan sseEvent, 4096), ended: make(chan struct{})}
	go s.read()
	t.Cleanup(s.close)
	return s.rest(t, time.Minute), http.StatusOK, ""
}

func userMessage(text string) map[string]any {
	return map[string]any{"id": uuid.NewString(), "role": "user", "content": text}
}

// TestAGUIRunInput drives an agent definition with AG-UI's RunAgentInput:
// a new threadId starts an execution of the definition, the next input on
// the thread continues it, and an interrupt (a call waiting for
// approval) is answered with resume[]. Each answer is its run's events,
// RUN_STARTED with the input's runId to RUN_FINISHED.
func TestAGUIRunInput(t *testing.T) {
	const model = responsesModel
	srv := providertest.NewServer(t, append([]providertest.Reply{answer(10, 2, "One.")}, countingReplies()...)...)
	e := newAskEnv(t, srv)
	def := e.ok(e.keyA, http.MethodPost, "/api/orgs/"+e.orgA.Slug+"/agent-definitions", map[string]any{
		"name": "Counter", "slug": "counter", "tools": []string{demo.WordCountTool},
		"models": []any{map[string]any{"provider": "anthropic", "modelId": model}},
	})
	path := "/api/orgs/" + e.orgA.Slug + "/agent-definitions/" + def["id"].(string) + "/ag-ui"
	thread := uuid.NewString()
	history := []any{userMessage("First?")}

	evs, code, body := e.aguiRun(t, e.keyA, path, map[string]any{"threadId": thread, "runId": "run-1", "messages": history,
		"tools": []any{}, "context": []any{}, "state": map[string]any{}, "forwardedProps": map[string]any{}})
	require.Equal(t, http.StatusOK, code, body)
	tr := checkAGUI(t, evs)
	require.Equal(t, []string{"run-1"}, tr.runs)
	require.Equal(t, thread, tr.events[0].(*aguiRunStarted).ThreadID)
	require.Equal(t, []string{"One."}, tr.text)
	require.Equal(t, "success", tr.finished[0].Outcome.Type)

	// The next input on the thread: the model sees the turn before.
	history = append(history, map[string]any{"id": "a1", "role": "assistant", "content": "One."}, userMessage("Count 'three little words'."))
	evs, code, body = e.aguiRun(t, e.keyA, path, map[string]any{"threadId": thread, "runId": "run-2", "messages": history})
	require.Equal(t, http.StatusOK, code, body)
	tr = checkAGUI(t, evs)
	require.Equal(t, []string{"run-2"}, tr.runs)
	require.Contains(t, string(srv.Last().Body), "First?")
	require.Len(t, tr.finished, 1)
	out := tr.finished[0].Outcome
	require.Equal(t, "interrupt", out.Type)
	require.Len(t, out.Interrupts, 1)

	// A new message while the interrupt is open is refused.
	_, code, body = e.aguiRun(t, e.keyA, path, map[string]any{"threadId": thread, "runId": "run-x",
		"messages": append(history, userMessage("Skip it."))})
	require.Equal(t, http.StatusConflict, code, body)

	evs, code, body = e.aguiRun(t, e.keyA, path, map[string]any{"threadId": thread, "runId": "run-3", "messages": history,
		"resume": []any{map[string]any{"interruptId": out.Interrupts[0].ID, "status": "resolved", "payload": map[string]any{"approved": true}}}})
	require.Equal(t, http.StatusOK, code, body)
	require.Equal(t, "RUN_STARTED", mustType(t, evs[0]))
	tr = checkAGUIResumed(t, evs, out.Interrupts[0].ToolCallID)
	require.Equal(t, []string{"run-3"}, tr.runs)
	require.Equal(t, []string{"Three words."}, tr.text)
	require.Equal(t, "3 words", tr.results[out.Interrupts[0].ToolCallID])
	require.Equal(t, "success", tr.finished[0].Outcome.Type)

	// Bad input is a 4xx, and another organization has no such thread.
	for _, in := range []map[string]any{
		{"threadId": "not-a-uuid", "messages": []any{userMessage("Hi")}},
		{"threadId": uuid.NewString(), "messages": []any{}},
		{"threadId": uuid.NewString(), "messages": []any{userMessage("Hi")}, "tools": []any{map[string]any{"name": "x"}}},
	} {
		_, code, body = e.aguiRun(t, e.keyA, path, in)
		require.Equal(t, http.StatusBadRequest, code, body)
	}
	pathB := strings.Replace(path, e.orgA.Slug, e.orgB.Slug, 1)
	_, code, body = e.aguiRun(t, e.keyB, pathB, map[string]any{"threadId": thread, "messages": append(history, userMessage("Mine?"))})
	require.Contains(t, []int{http.StatusBadRequest, http.StatusNotFound}, code, body)
}

// checkAGUIResumed is checkAGUI for a run that resumes a call started in
// an earlier run (whose TOOL_CALL_START it does not repeat).
func checkAGUIResumed(t *testing.T, evs []sseEvent, callID string) *aguiTranscript {
	t.Helper()
	prefix := []sseEvent{
		{Data: `{"type":"RUN_STARTED","threadId":"t","runId":"earlier"}`},
		{Data: `{"type":"TOOL_CALL_START","toolCallId":"` + callID + `","toolCallName":"earlier"}`},
		{Data: `{"type":"TOOL_CALL_END","toolCallId":"` + callID + `"}`},
		{Data: `{"type":"RUN_FINISHED","threadId":"t","runId":"earlier"}`},
	}
	tr := checkAGUI(t, append(prefix, evs...))
	tr.runs, tr.finished = tr.runs[1:], tr.finished[1:]
	return tr
}

func mustType(t *testing.T, ev sseEvent) string {
	t.Helper()
	typ, _ := decodeAGUI(t, ev.Data)
	return typ
}
