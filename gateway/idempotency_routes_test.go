package gateway_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/gateway"
)

// TestIdempotencyKeyOnEveryMutatingRoute, table-driven from the
// declarations the gateway enforces (gateway.Routes): on every mutating
// route a retry with the same key gets the first answer again, marked
// replayed, and the key on another request is a 422 — whatever the first
// answer was (here mostly 400 or 404: the IDs are made up). A read ignores
// the header. Then the effects: one definition for two keyed creates, and a
// key's secret never replayed.
func TestIdempotencyKeyOnEveryMutatingRoute(t *testing.T) {
	e := newEnv(t, envOptions{})
	routes, err := gateway.Routes()
	require.NoError(t, err)
	n := 0
	for _, rt := range routes {
		path := pathOf(rt, e.orgA.Slug)
		body := "{}"
		if rt.Method == http.MethodDelete || rt.Method == http.MethodGet {
			body = ""
		}
		idem := "k-" + rt.RPCName()
		first := e.keyed(e.keyA, rt.Method, path, idem, body)
		again := e.keyed(e.keyA, rt.Method, path, idem, body)
		if !rt.Mutating() {
			require.False(t, again.replayed, "%s %s is a read: the header is ignored", rt.Method, rt.Template)
			continue
		}
		n++
		require.NotEqual(t, http.StatusServiceUnavailable, first.status, "%s %s: %s", rt.Method, rt.Template, first.raw)
		require.False(t, first.replayed)
		require.True(t, again.replayed, "%s %s: %s", rt.Method, rt.Template, again.raw)
		require.Equal(t, first.status, again.status)
		if !rt.SecretResponse {
			require.Equal(t, first.raw, again.raw, "%s %s", rt.Method, rt.Template)
		}
		// Another request: other IDs in the path, another body.
		otherBody := body
		if body != "" {
			otherBody = `{"other":true}`
		}
		other := e.keyed(e.keyA, rt.Method, pathOf(rt, e.orgA.Slug), idem, otherBody)
		require.Equal(t, http.StatusUnprocessableEntity, other.status, "%s %s: %s", rt.Method, rt.Template, other.raw)
		require.Equal(t, "idempotency_key_reused", other.body["code"])
	}
	require.GreaterOrEqual(t, n, 14)

	defs := "/api/orgs/" + e.orgA.Slug + "/agent-definitions"
	def := `{"name":"Researcher","slug":"researcher"}`
	first := e.keyed(e.keyA, http.MethodPost, defs, "def-1", def)
	require.Equal(t, http.StatusOK, first.status, first.raw)
	again := e.keyed(e.keyA, http.MethodPost, defs, "def-1", def)
	require.Equal(t, first.raw, again.raw)
	require.Equal(t, 1, e.count(`SELECT count(*) FROM agent_definition WHERE org_id = $1`, e.orgA.ID))

	keys := e.keyPath("")
	minted := e.keyed(e.keyA, http.MethodPost, keys, "key-1", `{"name":"ci","roles":["read"]}`)
	require.Equal(t, http.StatusOK, minted.status, minted.raw)
	secret := minted.body["secret"].(string)
	require.True(t, entrystore.WellFormedAPIKey(secret))
	replay := e.keyed(e.keyA, http.MethodPost, keys, "key-1", `{"name":"ci","roles":["read"]}`)
	require.True(t, replay.replayed)
	require.Equal(t, minted.body["key"], replay.body["key"], "the replay names the same key")
	require.NotContains(t, replay.raw, secret, "the secret is shown once and never stored")
	require.Zero(t, e.count(`SELECT count(*) FROM idempotency_key WHERE position(convert_to($1, 'UTF8') IN body) > 0`, secret))
	require.Equal(t, 1, e.count(`SELECT count(*) FROM api_key WHERE org_id = $1 AND name = 'ci'`, e.orgA.ID))
}

// TestRetryAfterCrashReturnsTheFirstResponse plays a gateway that dies
// between a signal's effect and storing its response, twice: once after the
// whole effect (inbox row and Temporal signal), once after the inbox row
// only. The key stays reserved; while its lease lasts a retry is told the
// request is in progress; once it has run out the retry re-runs the signal
// with the reserved effect ID — the inbox row's ID — finds its own row, and
// answers exactly as the first would have. One row, one user message, one
// answer each time.
func TestRetryAfterCrashReturnsTheFirstResponse(t *testing.T) {
	const lease = 500 * time.Millisecond
	model := scripted.New(scripted.Turns(scripted.Turn{Text: "first answer"}, scripted.Turn{Text: "second answer"},
		scripted.Turn{Text: "third answer"}, scripted.Turn{Text: "an answer no one asked for"}))
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{model},
		gateway: func(o *gateway.Options) { o.IdempotencyLease = lease }})
	ctx := context.Background()
	id := e.waitingExecution()
	path := e.execPath(e.orgA, id) + "/signal"
	userEntries := func() int {
		return e.count(`SELECT count(*) FROM agent_entry WHERE agent_execution_id = $1 AND role = 'user'`, id)
	}

	// 1. Died after the whole effect: the first attempt ran, its response
	// never reached the client nor the store.
	body := `{"signalName":"userMessage","signalValue":{"text":"and then?"}}`
	lost := e.keyed(e.keyA, http.MethodPost, path, "crash-1", body)
	require.Equal(t, http.StatusOK, lost.status, lost.raw)
	_, err := e.es.Pool().Exec(ctx, `UPDATE idempotency_key SET status = NULL, body = NULL, locked_until = now() + $3::interval
		WHERE org_id = $1 AND key = $2`, e.orgA.ID, "crash-1", lease)
	require.NoError(t, err)
	retryAfterLease := func(key, body string) keyedResponse {
		t.Helper()
		var r keyedResponse
		sawInFlight := false
		poll(t, 30*time.Second, func() bool {
			r = e.keyed(e.keyA, http.MethodPost, path, key, body)
			if r.status == http.StatusConflict && strings.Contains(r.body["message"].(string), "in progress") {
				sawInFlight = true
				return false
			}
			return true
		}, "the lease never ran out")
		require.True(t, sawInFlight, "a retry within the lease is told the first is in progress")
		return r
	}
	retried := retryAfterLease("crash-1", body)
	require.Equal(t, http.StatusOK, retried.status, retried.raw)
	require.False(t, retried.replayed, "re-run, not replayed: nothing was stored")
	require.Equal(t, lost.body, retried.body, "the re-run answers as the first did")
	e.waitStatus(id, "WAITING", time.Minute)
	poll(t, time.Minute, func() bool { return userEntries() == 2 }, "the message was never taken")
	require.Equal(t, 1, e.count(`SELECT count(*) FROM agent_signal WHERE agent_execution_id = $1`, id), "one inbox row")
	replayed := e.keyed(e.keyA, http.MethodPost, path, "crash-1", body)
	require.True(t, replayed.replayed)
	require.Equal(t, lost.raw, replayed.raw)

	// 2. Died after storing the inbox row, before the Temporal signal: the
	// row waits, the workflow does not know of it.
	body = `{"signalName":"userMessage","signalValue":{"text":"and after that?"}}`
	rec, res, err := e.es.ReserveIdempotencyKey(ctx, e.orgA.ID, "crash-2", fingerprint(http.MethodPost, path, body), lease, time.Hour)
	require.NoError(t, err)
	require.Equal(t, entrystore.Reserved, res)
	_, err = e.es.PutSignal(ctx, entrystore.Signal{ID: rec.EffectID, OrgID: e.orgA.ID, ExecutionID: id,
		Name: agentsdk.SignalUserMessage, Value: []byte(`{"text":"and after that?"}`)})
	require.NoError(t, err)
	retried = retryAfterLease("crash-2", body)
	require.Equal(t, http.StatusOK, retried.status, retried.raw)
	require.Equal(t, map[string]any{"signalId": rec.EffectID, "executionId": id, "signalName": agentsdk.SignalUserMessage}, retried.body)
	poll(t, time.Minute, func() bool { return userEntries() == 3 }, "the stored message was never delivered")
	e.waitStatus(id, "WAITING", time.Minute)
	require.Equal(t, 3, userEntries(), "one user message per signal")
	require.Equal(t, 2, e.count(`SELECT count(*) FROM agent_signal WHERE agent_execution_id = $1`, id))
	texts := []string{}
	for _, m := range e.all(e.execPath(e.orgA, id)+"/messages?pageSize=50", "messages") {
		if m["role"] == "assistant" {
			texts = append(texts, m["content"].([]any)[0].(map[string]any)["text"].(string))
		}
	}
	require.Equal(t, []string{"first answer", "second answer", "third answer"}, texts)
}
