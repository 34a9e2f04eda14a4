package gateway

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/pgtest"
)

// TestSlowSubscriberReadsTheTable: a subscriber that stops taking events
// overflows its buffer; the hub drops batches for it rather than block,
// and it catches up from the table: every event, once, in order.
func TestSlowSubscriberReadsTheTable(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	es := entrystore.New(pgtest.New(t))
	org, err := es.CreateOrg(ctx, "slow", "slow")
	require.NoError(t, err)
	ex, err := es.CreateExecution(ctx, entrystore.Execution{OrgID: org.ID, Kind: "react-agent"})
	require.NoError(t, err)

	h := newHub(es, slog.New(slog.NewTextHandler(io.Discard, nil)))
	h.pingEvery = 5 * time.Millisecond // the listener's quiet-time checks run between events too
	hubDone := make(chan struct{})
	go func() { defer close(hubDone); h.run(ctx) }()
	defer func() { cancel(); <-hubDone }()
	select {
	case <-h.listening:
	case <-time.After(30 * time.Second):
		t.Fatal("the hub never listened")
	}
	s := &streamer{es: es, hub: h, heartbeat: time.Hour, window: time.Hour, closing: make(chan struct{})}

	release := make(chan struct{})
	var got []int64
	followed := make(chan error, 1)
	go func() {
		followed <- s.follow(ctx, followRequest{
			Org: org.ID, Execution: ex.ID, Consolidated: true,
			Emit: func(ev entrystore.StreamEvent) error {
				if len(got) == 0 {
					<-release // stall on the first event
				}
				got = append(got, ev.ID)
				return nil
			},
			Flush: func() error { return nil }, Ping: func() error { return nil },
		})
	}()

	lagged := func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		for _, tp := range h.topics {
			for sub := range tp.subs {
				if sub.lagged.Load() {
					return true
				}
			}
		}
		return false
	}
	published := 0
	deadline := time.Now().Add(time.Minute)
	for !lagged() {
		require.True(t, time.Now().Before(deadline), "the subscriber never lagged after %d events", published)
		_, err := es.AppendStreamEvent(ctx, org.ID, ex.ID, "token", []byte(`{"agentExecutionId":"x","data":"x"}`))
		require.NoError(t, err)
		published++
	}
	close(release)
	_, err = es.AppendStreamEvent(ctx, org.ID, ex.ID, "agent.completed", []byte(`{}`))
	require.NoError(t, err)
	select {
	case err := <-followed:
		require.NoError(t, err)
	case <-time.After(time.Minute):
		t.Fatal("follow never ended")
	}

	var want []int64
	for after := int64(0); ; {
		evs, err := es.StreamEventsAfter(ctx, org.ID, ex.ID, after, fetchLimit)
		require.NoError(t, err)
		for _, ev := range evs {
			want = append(want, ev.ID)
		}
		if len(evs) < fetchLimit {
			break
		}
		after = evs[len(evs)-1].ID
	}
	require.Equal(t, want, got)
	t.Logf("lagged after %d events", published)
}
