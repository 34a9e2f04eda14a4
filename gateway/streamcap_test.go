package gateway_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/gateway"
)

// tryStream opens an SSE stream and returns its status; a 200 stays open
// until the returned close is called (or the test ends), anything else
// comes back with its Retry-After and body.
func (e *env) tryStream(t *testing.T, key, path string) (status int, retryAfter string, body []byte, closeStream func()) {
	t.Helper()
	resp, cancel := e.streamRequest(t, key, path, "")
	closeStream = func() { cancel(); resp.Body.Close() }
	t.Cleanup(closeStream)
	if resp.StatusCode != http.StatusOK {
		body, _ = io.ReadAll(resp.Body)
		closeStream()
	}
	return resp.StatusCode, resp.Header.Get("Retry-After"), body, closeStream
}

// TestSSEConnectionsAreCappedPerOrg: past its key's cap, and past its
// organization's across keys, a stream is refused 429 {code, message} with
// Retry-After, while another organization still streams; a stream that
// closes gives its slot back.
func TestSSEConnectionsAreCappedPerOrg(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, envOptions{noTemporal: true, gateway: func(o *gateway.Options) {
		o.MaxStreamsPerKey, o.MaxStreamsPerOrg = 2, 3
	}})
	keyA2, _, err := e.es.CreateAPIKey(ctx, e.orgA.ID, "a2")
	require.NoError(t, err)
	exA, err := e.es.CreateExecution(ctx, entrystore.Execution{OrgID: e.orgA.ID, Kind: "react-agent"})
	require.NoError(t, err)
	exB, err := e.es.CreateExecution(ctx, entrystore.Execution{OrgID: e.orgB.ID, Kind: "react-agent"})
	require.NoError(t, err)
	pathA, pathB := e.execPath(e.orgA, exA.ID)+"/stream", e.execPath(e.orgB, exB.ID)+"/stream"
	refused := func(status int, retryAfter string, body []byte, _ func()) {
		t.Helper()
		require.Equal(t, http.StatusTooManyRequests, status, "%s", body)
		secs, err := strconv.Atoi(retryAfter)
		require.NoError(t, err, "Retry-After %q", retryAfter)
		require.Positive(t, secs)
		var eb struct{ Code, Message string }
		require.NoError(t, json.Unmarshal(body, &eb), "%s", body)
		require.Equal(t, "too_many_streams", eb.Code)
		require.NotEmpty(t, eb.Message)
	}
	opened := func(status int, _ string, body []byte, closeStream func()) func() {
		t.Helper()
		require.Equal(t, http.StatusOK, status, "%s", body)
		return closeStream
	}

	first := opened(e.tryStream(t, e.keyA, pathA))
	opened(e.tryStream(t, e.keyA, pathA+"/consolidated"))
	refused(e.tryStream(t, e.keyA, pathA)) // the key's cap
	opened(e.tryStream(t, keyA2, pathA))
	refused(e.tryStream(t, keyA2, pathA)) // the organization's cap, with the key under its own
	opened(e.tryStream(t, e.keyB, pathB)) // another organization is not affected

	// The slot comes back when the stream's handler sees the client go.
	first()
	var status int
	poll(t, 10*time.Second, func() bool {
		var closeStream func()
		status, _, _, closeStream = e.tryStream(t, keyA2, pathA)
		if status == http.StatusOK {
			t.Cleanup(closeStream)
		}
		return status == http.StatusOK
	}, "a closed stream never freed its slot")
	refused(e.tryStream(t, e.keyA, pathA)) // the organization is full again
}
