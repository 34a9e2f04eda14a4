package gateway_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/entrystore"
)

// keyedResponse is a raw answer to a request with an Idempotency-Key.
type keyedResponse struct {
	status   int
	header   http.Header
	replayed bool
	raw      string
	body     map[string]any
}

// keyed sends a JSON body (or none) with an Idempotency-Key.
func (e *env) keyed(key, method, path, idemKey, body string) keyedResponse {
	e.t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, e.base+path, r)
	require.NoError(e.t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", idemKey)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(e.t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(e.t, err)
	out := keyedResponse{status: resp.StatusCode, header: resp.Header, replayed: resp.Header.Get("Idempotent-Replayed") == "true", raw: string(raw)}
	require.NoError(e.t, json.Unmarshal(raw, &out.body), "%s", raw)
	return out
}

// fingerprint is the gateway's fingerprint of a request (method, path and
// body), for tests that plant a reservation as a request in flight would.
func fingerprint(method, path, body string) string {
	sum := sha256.Sum256([]byte(method + " " + path + "\n" + body))
	return hex.EncodeToString(sum[:])
}

func (e *env) count(sql string, args ...any) int {
	e.t.Helper()
	var n int
	require.NoError(e.t, e.es.Pool().QueryRow(context.Background(), sql, args...).Scan(&n))
	return n
}

// waitingExecution starts a multi-turn execution in org A and waits for it
// to answer its first prompt.
func (e *env) waitingExecution() string {
	e.t.Helper()
	ex := e.ok(e.keyA, http.MethodPost, "/api/orgs/"+e.orgA.Slug+"/agent-executions", map[string]any{
		"userPrompt": "hello", "models": scriptedModel, "config": map[string]any{"mode": "multi-turn"},
	})
	id := ex["id"].(string)
	e.waitStatus(id, "WAITING", time.Minute)
	return id
}

// TestIdempotencyKeyOnSignal posts the same message twice with one key:
// one inbox row, one user entry, one answer, and the same response twice.
// The key with another message, or on another route, is a 422.
func TestIdempotencyKeyOnSignal(t *testing.T) {
	model := scripted.New(scripted.Turns(scripted.Turn{Text: "first answer"}, scripted.Turn{Text: "second answer"}, scripted.Turn{Text: "a third answer no one asked for"}))
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{model}})
	id := e.waitingExecution()
	path := e.execPath(e.orgA, id)
	body := `{"signalName":"userMessage","signalValue":{"text":"and then?"}}`

	first := e.keyed(e.keyA, http.MethodPost, path+"/signal", "msg-1", body)
	require.Equal(t, http.StatusOK, first.status, first.raw)
	require.False(t, first.replayed)
	again := e.keyed(e.keyA, http.MethodPost, path+"/signal", "msg-1", body)
	require.Equal(t, http.StatusOK, again.status, again.raw)
	require.True(t, again.replayed)
	require.Equal(t, first.raw, again.raw, "the retry gets the first response")
	require.Equal(t, 1, e.count(`SELECT count(*) FROM agent_signal WHERE agent_execution_id = $1`, id), "one inbox row")

	var texts []string
	poll(t, time.Minute, func() bool {
		texts = texts[:0]
		for _, m := range e.all(path+"/messages?pageSize=50", "messages") {
			msg := m
			for _, b := range msg["content"].([]any) {
				texts = append(texts, msg["role"].(string)+": "+b.(map[string]any)["text"].(string))
			}
		}
		return len(texts) >= 4
	}, "the follow-up was never answered")
	e.waitStatus(id, "WAITING", time.Minute)
	require.Equal(t, []string{"user: hello", "assistant: first answer", "user: and then?", "assistant: second answer"}, texts)
	require.Equal(t, 2, e.count(`SELECT count(*) FROM agent_entry WHERE agent_execution_id = $1 AND role = 'user'`, id))

	other := e.keyed(e.keyA, http.MethodPost, path+"/signal", "msg-1", `{"signalName":"userMessage","signalValue":{"text":"something else"}}`)
	require.Equal(t, http.StatusUnprocessableEntity, other.status, other.raw)
	require.Equal(t, "idempotency_key_reused", other.body["code"])
	require.Contains(t, other.body["message"], "different request")
	cancel := e.keyed(e.keyA, http.MethodDelete, path, "msg-1", "")
	require.Equal(t, http.StatusUnprocessableEntity, cancel.status, cancel.raw)
	require.Equal(t, 1, e.count(`SELECT count(*) FROM agent_signal WHERE agent_execution_id = $1`, id))
}

// TestIdempotencyKeyOnCreate creates twice with one key: one execution,
// the same response. Keys are per organization.
func TestIdempotencyKeyOnCreate(t *testing.T) {
	model := scripted.New(scripted.Turns(scripted.Turn{Text: "done"}, scripted.Turn{Text: "done"}))
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{model}})
	body := `{"userPrompt":"hello","models":[{"provider":"scripted","modelId":"scripted-1"}]}`
	pathA, pathB := "/api/orgs/"+e.orgA.Slug+"/agent-executions", "/api/orgs/"+e.orgB.Slug+"/agent-executions"

	first := e.keyed(e.keyA, http.MethodPost, pathA, "create-1", body)
	require.Equal(t, http.StatusOK, first.status, first.raw)
	again := e.keyed(e.keyA, http.MethodPost, pathA, "create-1", body)
	require.Equal(t, http.StatusOK, again.status, again.raw)
	require.True(t, again.replayed)
	require.Equal(t, first.raw, again.raw)
	require.Equal(t, 1, e.count(`SELECT count(*) FROM agent_execution WHERE org_id = $1`, e.orgA.ID))
	e.waitStatus(first.body["id"].(string), "COMPLETED", time.Minute)

	other := e.keyed(e.keyA, http.MethodPost, pathA, "create-1", strings.Replace(body, "hello", "hi", 1))
	require.Equal(t, http.StatusUnprocessableEntity, other.status, other.raw)
	require.Equal(t, 1, e.count(`SELECT count(*) FROM agent_execution WHERE org_id = $1`, e.orgA.ID))

	inB := e.keyed(e.keyB, http.MethodPost, pathB, "create-1", body)
	require.Equal(t, http.StatusOK, inB.status, inB.raw)
	require.False(t, inB.replayed, "another organization's key is its own")
	require.NotEqual(t, first.body["id"], inB.body["id"])
}

// TestIdempotencyKeyOnCancel cancels twice with one key: the same answer.
func TestIdempotencyKeyOnCancel(t *testing.T) {
	model := scripted.New(scripted.Turns(scripted.Turn{Text: "first answer"}))
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{model}})
	id := e.waitingExecution()
	path := e.execPath(e.orgA, id)

	first := e.keyed(e.keyA, http.MethodDelete, path, "cancel-1", "")
	require.Equal(t, http.StatusOK, first.status, first.raw)
	e.waitStatus(id, "CANCELLED", time.Minute)
	again := e.keyed(e.keyA, http.MethodDelete, path, "cancel-1", "")
	require.Equal(t, http.StatusOK, again.status, "a retry after the execution ended still gets the first answer: %s", again.raw)
	require.True(t, again.replayed)
	require.Equal(t, first.raw, again.raw)
	unkeyed := e.do(e.keyA, http.MethodDelete, path, nil)
	require.Equal(t, http.StatusConflict, unkeyed.Status, "without the key it is a new request: %s", unkeyed.Raw)
}

// TestIdempotencyKeyInFlightAndTakeover plants reservations as a request in
// flight, and one whose gateway died, would leave them: the first is a 409;
// the second is taken over — a create runs again under the reserved
// execution ID (so it cannot create a second execution), a definition's
// create (not keyed by the effect ID) is refused rather than risk a second
// definition.
func TestIdempotencyKeyInFlightAndTakeover(t *testing.T) {
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{scripted.New(scripted.Turns(scripted.Turn{Text: "done"}))}})
	ctx := context.Background()
	base := "/api/orgs/" + e.orgA.Slug + "/agent-executions"
	body := `{"userPrompt":"hello","models":[{"provider":"scripted","modelId":"scripted-1"}]}`

	_, res, err := e.es.ReserveIdempotencyKey(ctx, e.orgA.ID, "busy", fingerprint("POST", base, body), time.Hour, time.Hour)
	require.NoError(t, err)
	require.Equal(t, entrystore.Reserved, res)
	busy := e.keyed(e.keyA, http.MethodPost, base, "busy", body)
	require.Equal(t, http.StatusConflict, busy.status, busy.raw)
	require.Contains(t, busy.body["message"], "still in progress")
	require.Zero(t, e.count(`SELECT count(*) FROM agent_execution WHERE org_id = $1`, e.orgA.ID))

	dead, res, err := e.es.ReserveIdempotencyKey(ctx, e.orgA.ID, "dead", fingerprint("POST", base, body), 0, time.Hour)
	require.NoError(t, err)
	require.Equal(t, entrystore.Reserved, res)
	took := e.keyed(e.keyA, http.MethodPost, base, "dead", body)
	require.Equal(t, http.StatusOK, took.status, took.raw)
	require.Equal(t, dead.EffectID, took.body["id"], "the execution has the reserved ID")
	e.waitStatus(dead.EffectID, "COMPLETED", time.Minute)

	// A definition's create is declared IDEMPOTENCY_REPLAY: its row is not
	// keyed by the effect ID, so a retry after a dead attempt is refused.
	defPath := "/api/orgs/" + e.orgA.Slug + "/agent-definitions"
	defBody := `{"name":"Researcher","slug":"researcher"}`
	_, _, err = e.es.ReserveIdempotencyKey(ctx, e.orgA.ID, "dead-definition", fingerprint("POST", defPath, defBody), 0, time.Hour)
	require.NoError(t, err)
	refused := e.keyed(e.keyA, http.MethodPost, defPath, "dead-definition", defBody)
	require.Equal(t, http.StatusConflict, refused.status, refused.raw)
	require.Contains(t, refused.body["message"], "interrupted")
	require.Zero(t, e.count(`SELECT count(*) FROM agent_definition WHERE org_id = $1`, e.orgA.ID))
}
