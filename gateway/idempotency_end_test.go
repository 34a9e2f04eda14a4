package gateway_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
)

// TestKeyIsFreedOnceTheStoreWritesAgain: Postgres refuses writes for a
// while (disk full, SQLSTATE 53100, raised by triggers here as a full
// disk raises it). A message refused with 503 could not release its
// Idempotency-Key either, and a message whose effect was stored could not
// store its response: both keys stay reserved. Once Postgres writes again
// the gateway frees them within about a second, so a retry with the key
// runs (or replays) at once, not after the lease (a minute). Until then a
// retry gets 409 with Retry-After.
func TestKeyIsFreedOnceTheStoreWritesAgain(t *testing.T) {
	model := scripted.New(scripted.Turns(scripted.Turn{Text: "first"}, scripted.Turn{Text: "second"}, scripted.Turn{Text: "third"}))
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{model}})
	id := e.waitingExecution()
	path := e.execPath(e.orgA, id) + "/signal"
	exec := func(sql string) {
		t.Helper()
		_, err := e.es.Pool().Exec(context.Background(), sql)
		require.NoError(t, err)
	}
	exec(`CREATE FUNCTION disk_full() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = 'disk_full'; END $$`)
	exec(`CREATE TRIGGER full_keys BEFORE UPDATE ON idempotency_key FOR EACH ROW EXECUTE FUNCTION disk_full()`)
	exec(`CREATE TRIGGER full_inbox BEFORE INSERT ON agent_signal FOR EACH ROW EXECUTE FUNCTION disk_full()`)

	refusedBody := `{"signalName":"userMessage","signalValue":{"text":"refused at first"}}`
	refused := e.keyed(e.keyA, http.MethodPost, path, "refused", refusedBody)
	require.Equal(t, http.StatusServiceUnavailable, refused.status, refused.raw)
	require.NotEmpty(t, refused.header.Get("Retry-After"))
	busy := e.keyed(e.keyA, http.MethodPost, path, "refused", refusedBody)
	require.Equal(t, http.StatusConflict, busy.status, "the release was refused too: %s", busy.raw)
	require.Equal(t, "1", busy.header.Get("Retry-After"), "a 409 in flight says when to retry")

	exec(`DROP TRIGGER full_inbox ON agent_signal`)
	storedBody := `{"signalName":"userMessage","signalValue":{"text":"stored, answer not"}}`
	stored := e.keyed(e.keyA, http.MethodPost, path, "stored", storedBody)
	require.Equal(t, http.StatusOK, stored.status, stored.raw)
	require.Equal(t, http.StatusConflict, e.keyed(e.keyA, http.MethodPost, path, "stored", storedBody).status,
		"the response could not be stored: the key is still reserved")

	exec(`DROP TRIGGER full_keys ON idempotency_key`)
	var ran, replayed keyedResponse
	poll(t, 10*time.Second, func() bool {
		ran = e.keyed(e.keyA, http.MethodPost, path, "refused", refusedBody)
		return ran.status != http.StatusConflict
	}, "the refused message's key was not freed once the store wrote again")
	require.Equal(t, http.StatusOK, ran.status, ran.raw)
	require.False(t, ran.replayed, "the refused message runs now")
	poll(t, 10*time.Second, func() bool {
		replayed = e.keyed(e.keyA, http.MethodPost, path, "stored", storedBody)
		return replayed.status != http.StatusConflict
	}, "the stored message's response was not stored once the store wrote again")
	require.Equal(t, http.StatusOK, replayed.status, replayed.raw)
	require.True(t, replayed.replayed, "the first response is replayed")
	require.Equal(t, stored.raw, replayed.raw)
	require.Equal(t, 2, e.count(`SELECT count(*) FROM agent_signal WHERE agent_execution_id = $1`, id),
		"one inbox row per message")
}
