package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk/event"
	"github.com/agentree/agentree/entrystore"
)

// TestSSENeverRepeatsAnEventAcrossAPostgresRestart: the gateway's pool and
// its LISTEN connection reach Postgres through a proxy that is cut and
// restored three times — from the gateway's side, a Postgres restart —
// while a worker (not behind the proxy) keeps publishing, one event and
// batches alike. A client that follows the stream, resuming with
// Last-Event-ID whenever it ends, receives every stored event exactly once
// and in ID order: no ID twice on one connection or across a resume, none
// out of order, none missing.
func TestSSENeverRepeatsAnEventAcrossAPostgresRestart(t *testing.T) {
	e := newEnv(t, envOptions{noTemporal: true})
	proxy, base := gatewayBehindProxy(t, e, io.Discard, 20*time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	id := e.newRow()
	path := e.execPath(e.orgA, id) + "/stream/consolidated"

	pub := e.startPublisher(id)

	// The client, in the background: it follows, and resumes after the
	// last ID it received whenever the stream ends (a stream_error, a cut).
	var mu sync.Mutex
	var got []int64
	var connections int
	received := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(got)
	}
	clientDone := make(chan error, 1)
	go func() {
		clientDone <- follow(ctx, base+path, e.keyA, func(ev sseEvent) bool {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, ev.ID)
			return ev.Event == event.NameCompleted
		}, func() { mu.Lock(); connections++; mu.Unlock() })
	}()

	for cycle := 1; cycle <= 3; cycle++ {
		before := received()
		poll(t, time.Minute, func() bool { return received() >= before+50 }, "the client received nothing new before cut %d", cycle)
		proxy.Cut()
		// Events stored while the gateway cannot reach Postgres.
		down := pub.published.Load()
		poll(t, time.Minute, func() bool { return pub.published.Load() >= down+30 }, "the worker stopped publishing")
		proxy.Restore()
	}
	before := received()
	poll(t, time.Minute, func() bool { return received() >= before+50 }, "the client received nothing after the last restore")
	require.NoError(t, pub.halt())
	e.publish(id, event.NameCompleted, 1)
	select {
	case err := <-clientDone:
		require.NoError(t, err)
	case <-time.After(time.Minute):
		require.Fail(t, "the client never received agent.completed")
	}

	mu.Lock()
	defer mu.Unlock()
	require.Greater(t, connections, 1, "a cut ended a stream at least once (else nothing was resumed)")
	seen := map[int64]bool{}
	for i, id := range got {
		require.False(t, seen[id], "event %d received twice", id)
		seen[id] = true
		if i > 0 {
			require.Greater(t, id, got[i-1], "event %d received after %d", id, got[i-1])
		}
	}
	require.Equal(t, e.tableIDs(id, got[len(got)-1]), got, "every stored event, once, in order")
}

// publisher stores tokens of one execution every 2 ms, one by one and in
// batches of three (one notification naming the batch's first ID), as a
// worker does, until halted. Its store is the test's, not the gateway's.
type publisher struct {
	published atomic.Int64
	err       error
	stop      chan struct{}
	wg        sync.WaitGroup
}

func (e *env) startPublisher(id string) *publisher {
	p := &publisher{stop: make(chan struct{})}
	p.wg.Go(func() {
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-p.stop:
				return
			case <-tick.C:
			}
			data, _ := json.Marshal(event.Token{AgentExecutionID: id, TaskExecutionID: "m1", Data: strconv.Itoa(i)})
			var err error
			if i%2 == 0 {
				_, err = e.es.AppendStreamEvent(context.Background(), e.orgA.ID, id, event.NameToken, data)
				p.published.Add(1)
			} else {
				batch := []entrystore.NewStreamEvent{{Event: event.NameToken, Data: data}, {Event: event.NameToken, Data: data}, {Event: event.NameToken, Data: data}}
				_, err = e.es.AppendStreamEvents(context.Background(), e.orgA.ID, id, batch)
				p.published.Add(3)
			}
			if err != nil {
				p.err = fmt.Errorf("publish: %w", err)
				return
			}
		}
	})
	return p
}

// halt stops the publisher and says whether every write went through.
func (p *publisher) halt() error {
	close(p.stop)
	p.wg.Wait()
	return p.err
}

// follow reads an SSE stream at streamURL, reconnecting with Last-Event-ID
// after the last event taken whenever it ends, until take says it has the
// last event or ctx ends. connected is called for each stream opened.
func follow(ctx context.Context, streamURL, key string, take func(sseEvent) bool, connected func()) error {
	var last int64
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		finished, err := followOnce(ctx, streamURL, key, &last, take, connected)
		if finished || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

func followOnce(ctx context.Context, streamURL, key string, last *int64, take func(sseEvent) bool, connected func()) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, streamURL, nil)
	if err != nil {
		return true, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if *last > 0 {
		req.Header.Set("Last-Event-ID", strconv.FormatInt(*last, 10))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false, nil
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false, nil // a 503 while the store is away: try again
	}
	connected()
	r := bufio.NewReader(resp.Body)
	var ev sseEvent
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return false, nil
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if ev.Event != "" && ev.Event != event.NameStreamError {
				*last = ev.ID
				if take(ev) {
					return true, nil
				}
			}
			ev = sseEvent{}
		case strings.HasPrefix(line, "id: "):
			ev.ID, _ = strconv.ParseInt(line[4:], 10, 64)
		case strings.HasPrefix(line, "event: "):
			ev.Event = line[7:]
		case strings.HasPrefix(line, "data: "):
			ev.Data += line[6:]
		}
	}
}
