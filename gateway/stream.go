package gateway

import (
	"context"
	"time"

	"github.com/agentree/agentree/agentsdk/event"
	"github.com/agentree/agentree/entrystore"
)

// maxEndGrace bounds how long a stream whose execution has ended waits
// for the terminal event.
const maxEndGrace = 2 * time.Second

// streamer follows executions' events for SSE and gRPC streams alike.
type streamer struct {
	es        *entrystore.Store
	hub       *hub
	heartbeat time.Duration
	window    time.Duration
	// closing ends every stream when the gateway shuts down.
	closing <-chan struct{}
}

// terminalEvent reports whether an event ends its execution's stream.
func terminalEvent(name string) bool {
	return event.Terminal(name)
}

// followRequest is one stream: events after After, all of them or only
// the agent lifecycle ones.
type followRequest struct {
	Org, Execution string
	After          int64
	Consolidated   bool
	// Emit sends one event; Flush ends a burst (SSE flushes then).
	Emit  func(entrystore.StreamEvent) error
	Flush func() error
	// Ping keeps an idle connection alive.
	Ping func() error
}

// follow replays the events after req.After still in the replay window,
// then live ones, until a terminal event (or, when the execution ended
// without publishing one, until its row says so), the client leaving or
// the gateway closing. IDs only grow: every event is sent once, in order.
func (s *streamer) follow(ctx context.Context, req followRequest) error {
	sub := s.hub.subscribe(req.Org, req.Execution)
	defer s.hub.unsubscribe(req.Execution, sub)
	f := &follower{s: s, req: req, last: req.After}

	// Replay. Events older than the window are skipped, not sent.
	f.notBefore = time.Now().Add(-s.window)
	if err := f.poll(ctx); err != nil || f.done {
		return err
	}
	f.notBefore = time.Time{}
	if err := req.Flush(); err != nil {
		return err
	}

	// Stream events are best effort for the worker; the execution row is
	// the record. Once the row has ended, its terminal event gets a short
	// grace to arrive (the worker writes the row first), then the stream
	// ends anyway rather than hold the client forever.
	grace := min(s.heartbeat, maxEndGrace)
	var ended <-chan time.Time
	checkEnded := func() error {
		if ended != nil {
			return nil
		}
		ex, err := s.es.GetExecution(ctx, req.Org, req.Execution)
		if err == nil && ex.Status.Terminal() {
			ended = time.After(grace)
		}
		return err
	}
	if err := checkEnded(); err != nil {
		return err
	}
	tick := time.NewTicker(s.heartbeat)
	defer tick.Stop()
	for !f.done {
		var err error
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.closing:
			return nil
		case batch := <-sub.batches:
			err = f.take(ctx, sub, batch)
		case <-sub.wake:
			err = f.take(ctx, sub, nil)
		case <-ended:
			return f.poll(ctx)
		case <-tick.C:
			if err = req.Ping(); err == nil {
				err = checkEnded()
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// follower is one stream's position.
type follower struct {
	s         *streamer
	req       followRequest
	last      int64
	done      bool
	notBefore time.Time
}

// take sends a batch from the hub, first reading the table when the hub
// dropped one for us: nothing is sent out of order.
func (f *follower) take(ctx context.Context, sub *subscriber, batch []entrystore.StreamEvent) error {
	if sub.lagged.Swap(false) {
		if err := f.poll(ctx); err != nil {
			return err
		}
	}
	if err := f.sendAll(batch); err != nil {
		return err
	}
	return f.req.Flush()
}

// poll sends everything in the table after the last event sent.
func (f *follower) poll(ctx context.Context) error {
	for !f.done {
		evs, err := f.s.es.StreamEventsAfter(ctx, f.req.Org, f.req.Execution, f.last, fetchLimit)
		if err != nil {
			return err
		}
		if err := f.sendAll(evs); err != nil {
			return err
		}
		if len(evs) < fetchLimit {
			break
		}
	}
	return f.req.Flush()
}

// sendAll sends events up to the terminal one.
func (f *follower) sendAll(evs []entrystore.StreamEvent) error {
	for _, ev := range evs {
		if f.done {
			return nil
		}
		if err := f.send(ev); err != nil {
			return err
		}
	}
	return nil
}

// send emits one event unless it was sent already or is filtered out.
func (f *follower) send(ev entrystore.StreamEvent) error {
	if ev.ID <= f.last {
		return nil
	}
	f.last = ev.ID
	f.done = terminalEvent(ev.Event)
	// A terminal event is sent whatever its age: it tells a late client
	// that there is nothing more to wait for.
	if !f.done && !f.notBefore.IsZero() && ev.CreatedAt.Before(f.notBefore) {
		return nil
	}
	if !f.req.Consolidated && !event.Lifecycle(ev.Event) {
		return nil
	}
	return f.req.Emit(ev)
}
