package gateway_test

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk/event"
	"github.com/agentree/agentree/apiclient"
	"github.com/agentree/agentree/entrystore"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// TestAPIClientFollowsThroughCuts: apiclient.Follow, through a gateway
// whose Postgres is cut and restored twice while events keep being
// stored, yields every stored event once and in order, resuming with
// Last-Event-ID on its own, and ends at the terminal event.
func TestAPIClientFollowsThroughCuts(t *testing.T) {
	e := newEnv(t, envOptions{noTemporal: true})
	proxy, base := gatewayBehindProxy(t, e, io.Discard, 20*time.Millisecond)
	c, err := apiclient.New(base, e.orgA.Slug, e.keyA)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	id := e.newRow()

	pub := e.startPublisher(id)

	var mu sync.Mutex
	var got []int64
	var last string
	reconnects := 0
	received := func() int { mu.Lock(); defer mu.Unlock(); return len(got) }
	done := make(chan error, 1)
	go func() {
		opts := apiclient.FollowOptions{Reconnects: 1000, OnReconnect: func(string, error) { mu.Lock(); reconnects++; mu.Unlock() }}
		for ev, err := range c.Follow(ctx, id, opts) {
			if err != nil {
				done <- err
				return
			}
			n, err := strconv.ParseInt(ev.ID, 10, 64)
			if err != nil {
				done <- err
				return
			}
			mu.Lock()
			got, last = append(got, n), ev.Name
			mu.Unlock()
		}
		done <- nil
	}()

	for cycle := 1; cycle <= 2; cycle++ {
		before := received()
		poll(t, time.Minute, func() bool { return received() >= before+30 }, "nothing new before cut %d", cycle)
		proxy.Cut()
		down := pub.published.Load()
		poll(t, time.Minute, func() bool { return pub.published.Load() >= down+20 }, "the publisher stopped")
		proxy.Restore()
	}
	before := received()
	poll(t, time.Minute, func() bool { return received() >= before+30 }, "nothing after the last restore")
	require.NoError(t, pub.halt())
	e.publish(id, event.NameCompleted, 1)
	require.NoError(t, <-done)

	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, event.NameCompleted, last, "it ended at the terminal event")
	require.Positive(t, reconnects, "a cut broke the stream at least once")
	require.Equal(t, e.tableIDs(id, got[len(got)-1]), got, "every stored event, once, in order")
}

// TestAPIClientErrorsAndQuietEnd: the gateway's refusals come back as
// *apiclient.Error with its status and code, a stream that cannot be
// followed is not retried, and a stream whose execution ended without a
// terminal event ends.
func TestAPIClientErrorsAndQuietEnd(t *testing.T) {
	e := newEnv(t, envOptions{noTemporal: true, heartbeat: 20 * time.Millisecond})
	ctx := context.Background()
	bad, err := apiclient.New(e.base, e.orgA.Slug, "agentree_not_a_real_key")
	require.NoError(t, err)
	err = bad.Do(ctx, http.MethodGet, "/agent-executions", nil, &pb.ListAgentExecutionsResponse{})
	require.Equal(t, http.StatusUnauthorized, apiclient.StatusOf(err), "%v", err)
	require.Equal(t, "unauthenticated", apiclient.CodeOf(err))

	c, err := apiclient.New(e.base, e.orgA.Slug, e.keyA)
	require.NoError(t, err)
	err = c.Do(ctx, http.MethodPost, "/agent-executions", &pb.CreateAgentExecutionRequest{}, &pb.AgentExecution{})
	require.Equal(t, "invalid_argument", apiclient.CodeOf(err), "%v", err)
	require.Contains(t, err.Error(), "userPrompt is required")

	var errs []error
	for _, err := range c.Follow(ctx, "00000000-0000-0000-0000-000000000000", apiclient.FollowOptions{}) {
		errs = append(errs, err)
	}
	require.Len(t, errs, 1, "one error, not retried")
	require.Equal(t, http.StatusNotFound, apiclient.StatusOf(errs[0]), "%v", errs[0])

	id := e.newRow()
	e.publish(id, event.NameToken, 3)
	_, err = e.es.Transition(ctx, e.orgA.ID, id, entrystore.Transition{To: entrystore.StatusFailed, Error: "worker lost"})
	require.NoError(t, err)
	var names []string
	for ev, err := range c.Follow(ctx, id, apiclient.FollowOptions{}) {
		require.NoError(t, err)
		names = append(names, ev.Name)
	}
	require.Equal(t, []string{event.NameToken, event.NameToken, event.NameToken}, names)
}
