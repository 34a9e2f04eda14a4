package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/apiclient"
)

// TestFollowResumesAfterStreamError: a gateway that ends a stream with
// stream_error (here: shutting down) is reconnected to (after the pause it
// asks for) with Last-Event-ID after the last event shown, and the live
// view says so and goes on. The
// server speaks the gateway's SSE wire format; the gateway's own tests
// prove it sends exactly this.
func TestFollowResumesAfterStreamError(t *testing.T) {
	var mu sync.Mutex
	var resumes []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n := len(resumes)
		resumes = append(resumes, r.Header.Get("Last-Event-ID"))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		if n == 0 {
			fmt.Fprint(w, "id: 7\nevent: token\ndata: {\"agentExecutionId\":\"x\",\"taskExecutionId\":\"m\",\"data\":\"Hel\"}\n\n")
			fmt.Fprint(w, "event: stream_error\ndata: {\"code\":\"shutting_down\",\"message\":\"the gateway is shutting down\",\"lastEventId\":\"7\",\"retryAfterMs\":200}\n\n")
			return
		}
		fmt.Fprint(w, "id: 9\nevent: token\ndata: {\"agentExecutionId\":\"x\",\"taskExecutionId\":\"m\",\"data\":\"lo\"}\n\n")
		fmt.Fprint(w, "id: 10\nevent: agent.completed\ndata: {\"agentExecutionId\":\"x\",\"status\":\"COMPLETED\",\"stopReason\":\"end_turn\"}\n\n")
	}))
	defer srv.Close()

	var out bytes.Buffer
	c, err := apiclient.New(srv.URL, "o", "k", apiclient.WithHTTPClient(srv.Client()))
	require.NoError(t, err)
	require.NoError(t, follow(context.Background(), c, clientFlags{}, &out, style{}, "x", false))
	require.Equal(t, []string{"", "7"}, resumes, "the reconnect resumes after the last event shown")
	require.Contains(t, out.String(), "Hel\nstream interrupted: the gateway is shutting down; reconnecting\nlo\ncompleted (end_turn)")
}
