package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// a2aStream posts a streaming JSON-RPC request to A2A agent slug of
// organization A and reads its SSE answer; lastEventID "" sends none.
func (e *env) a2aStream(t *testing.T, slug, method string, params any, lastEventID string) *sseStream {
	t.Helper()
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "s1", "method": method, "params": params})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.base+"/a2a/"+e.orgA.Slug+"/"+slug, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+e.keyA)
	req.Header.Set("Accept", "text/event-stream")
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		t.Fatalf("%s: %d %s", method, resp.StatusCode, raw)
	}
	s := &sseStream{resp: resp, cancel: cancel, events: make(chan sseEvent, 4096), ended: make(chan struct{})}
	go s.read()
	t.Cleanup(s.close)
	return s
}

// a2aResult is one streamed JSON-RPC response's result.
type a2aResult struct {
	Kind     string `json:"kind"`
	ID       string `json:"id"`
	Append   bool   `json:"append"`
	Artifact struct {
		Parts []struct{ Text string } `json:"parts"`
	} `json:"artifact"`
	Status struct {
		State string `json:"state"`
	} `json:"status"`
	Final bool `json:"final"`
}

func decodeA2AEvent(t *testing.T, ev sseEvent) a2aResult {
	t.Helper()
	var resp struct {
		Result *a2aResult      `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	require.NoError(t, json.Unmarshal([]byte(ev.Data), &resp), "%s", ev.Data)
	require.NotNil(t, resp.Result, "a streamed error: %s", ev.Data)
	return *resp.Result
}

// TestA2ATaskSurvivesWorkerKill: a task's worker process is SIGKILLed
// mid-answer while a client follows it with tasks/resubscribe; the client
// goes away too. A worker started afterwards takes the task over, and a
// tasks/resubscribe from the last event the client had gets the rest of
// the answer, once, and the task completed; tasks/get agrees.
func TestA2ATaskSurvivesWorkerKill(t *testing.T) {
	e, fake, kill := newKillEnv(t)
	e.a2aDefinition("survivor", "one-shot", true)

	// Sent without waiting: the answer is the task as it starts.
	r := e.rpc(e.keyA, "survivor", "message/send", map[string]any{
		"message": map[string]any{"kind": "message", "messageId": "m-1", "role": "user",
			"parts": []any{map[string]any{"kind": "text", "text": "Will you survive?"}}},
		"configuration": map[string]any{"blocking": false}})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
	id := r.Body["result"].(map[string]any)["id"].(string)

	s := e.a2aStream(t, "survivor", "tasks/resubscribe", map[string]any{"id": id}, "")
	first, ok := s.next(t, time.Minute)
	require.True(t, ok)
	require.Equal(t, "task", decodeA2AEvent(t, first).Kind, "a resubscribe starts with the task")
	var chunk sseEvent
	for chunk.ID == 0 {
		ev, ok := s.next(t, time.Minute)
		require.True(t, ok, "the stream ended before the first chunk")
		if decodeA2AEvent(t, ev).Kind == "artifact-update" {
			chunk = ev
		}
	}
	require.Equal(t, "Survives ", decodeA2AEvent(t, chunk).Artifact.Parts[0].Text)

	// The worker dies mid-answer, and the client loses its stream.
	kill()
	s.close()

	var text string
	var last a2aResult
	for _, ev := range e.a2aStream(t, "survivor", "tasks/resubscribe", map[string]any{"id": id}, strconv.FormatInt(chunk.ID, 10)).rest(t, 2*time.Minute) {
		last = decodeA2AEvent(t, ev)
		if last.Kind == "artifact-update" && last.Append {
			text += last.Artifact.Parts[0].Text
		}
	}
	require.Equal(t, "the kill.", text, "the retried call's text, without what the client had")
	require.Equal(t, "status-update", last.Kind)
	require.True(t, last.Final)
	require.Equal(t, "completed", last.Status.State)
	require.Equal(t, 2, fake.callCount(), "the cut call was made again, once")

	got := e.rpc(e.keyA, "survivor", "tasks/get", map[string]any{"id": id}).Body["result"].(map[string]any)
	require.Equal(t, "completed", got["status"].(map[string]any)["state"])
	art := got["artifacts"].([]any)[0].(map[string]any)["parts"].([]any)[0].(map[string]any)
	require.Equal(t, "Survives the kill.", art["text"])
}
