package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/metric"

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
	// subscribers counts the open streams; nil: not counted.
	subscribers metric.Int64UpDownCounter
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

// Why a stream ended early, besides a store error or the client leaving.
var (
	errClosing = errors.New("gateway: shutting down")
	errExpired = errors.New("gateway: resumed past the replay window")
)

// Retry hints of stream_error: how long a client waits to reconnect.
const (
	retryUnavailable = 2 * time.Second
	retryClosing     = time.Second
)

// clientError is a failure to write to the client: it left or stopped
// reading, so no stream_error can reach it.
type clientError struct{ err error }

func (e clientError) Error() string { return e.err.Error() }
func (e clientError) Unwrap() error { return e.err }

func asClientError(err error) error {
	if err == nil {
		return nil
	}
	return clientError{err}
}

// follow replays the events after req.After still in the replay window,
// then live ones, until a terminal event (or, when the execution ended
// without publishing one, until its row says so), the client leaving or
// the gateway closing. IDs only grow: every event is sent once, in order.
// A stream that breaks for any other reason than the execution ending or
// the client leaving ends with a stream_error event (seed 002) saying why
// and where to resume, never silently. It returns the store's error, if
// that was the reason.
func (s *streamer) follow(ctx context.Context, req followRequest) error {
	emit, flush := req.Emit, req.Flush
	req.Emit = func(ev entrystore.StreamEvent) error { return asClientError(emit(ev)) }
	req.Flush = func() error { return asClientError(flush()) }
	ping := req.Ping
	req.Ping = func() error { return asClientError(ping()) }

	sub := s.hub.subscribe(req.Org, req.Execution)
	defer s.hub.unsubscribe(req.Execution, sub)
	if s.subscribers != nil {
		s.subscribers.Add(ctx, 1)
		defer s.subscribers.Add(context.WithoutCancel(ctx), -1)
	}
	f := &follower{s: s, req: req, last: req.After}
	err := s.run(ctx, f, sub)
	if se, ok := f.streamError(ctx, err); ok {
		data, merr := json.Marshal(se)
		if merr == nil && emit(entrystore.StreamEvent{Event: event.NameStreamError, Data: data}) == nil {
			_ = flush()
		}
	}
	if errors.Is(err, errClosing) || errors.Is(err, errExpired) {
		return nil
	}
	return err
}

// streamError says why the stream broke, or false when there is nothing to
// tell: the stream ended with its execution or the client left.
func (f *follower) streamError(ctx context.Context, err error) (event.StreamError, bool) {
	var ce clientError
	if err == nil || ctx.Err() != nil || errors.As(err, &ce) {
		return event.StreamError{}, false
	}
	se := event.StreamError{}
	if f.last > 0 {
		se.LastEventID = strconv.FormatInt(f.last, 10)
	}
	resume := "reconnect with Last-Event-ID set to lastEventId"
	switch {
	case errors.Is(err, errClosing):
		se.Code, se.RetryAfterMs = "shutting_down", int(retryClosing.Milliseconds())
		se.Message = "the gateway is shutting down; " + resume
	case errors.Is(err, errExpired):
		se.Code = "events_expired"
		se.Message = fmt.Sprintf("events after Last-Event-ID %d are older than the replay window (%s) and are not replayed; "+
			"reload the execution with the REST API, then %s", f.req.After, f.s.window, resume)
	default:
		se.Code, se.RetryAfterMs = "unavailable", int(retryUnavailable.Milliseconds())
		se.Message = "the event store is unreachable; " + resume + " shortly"
	}
	return se, true
}

// run is follow's loop.
func (s *streamer) run(ctx context.Context, f *follower, sub *subscriber) error {
	req := f.req
	// Replay. Events older than the window are skipped, not sent.
	f.notBefore = time.Now().Add(-s.window)
	if err := f.poll(ctx); err != nil || f.done {
		return err
	}
	if f.expired {
		return errExpired
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
			return errClosing
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
	// expired: a resuming client asked for events the replay skips as
	// too old (it fell behind the window).
	expired bool
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
	terminal := terminalEvent(ev.Event)
	wanted := f.req.Consolidated || event.Lifecycle(ev.Event)
	// A terminal event is sent whatever its age: it tells a late client
	// that there is nothing more to wait for.
	if !terminal && !f.notBefore.IsZero() && ev.CreatedAt.Before(f.notBefore) {
		f.last = ev.ID
		// A new client (no Last-Event-ID) just starts within the window;
		// a resuming one has missed this event.
		f.expired = f.expired || (f.req.After > 0 && wanted)
		return nil
	}
	if f.expired {
		// Nothing after a gap: the client resumes after f.last, the
		// newest expired event, once it has reloaded the execution.
		return errExpired
	}
	f.last = ev.ID
	f.done = terminal
	if !wanted {
		return nil
	}
	return f.req.Emit(ev)
}
