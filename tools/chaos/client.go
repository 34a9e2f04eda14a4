package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/agentree/agentree/agentsdk/event"
	"github.com/agentree/agentree/apiclient"
)

// api is the REST client of the gateway (apiclient), as one organization,
// with the chaos suite's own retry rule and a count of the answers that
// were not 2xx. Requests that fail for a reason a client should retry
// (the gateway unreachable, a 5xx, a 429) are retried with the same
// Idempotency-Key until ctx ends.
type api struct {
	c *apiclient.Client

	mu sync.Mutex
	// statuses counts the non-2xx answers by status code: a store outage
	// should be 503s with Retry-After, never 500s.
	statuses map[int]int
}

func newAPI(addr, org, key string) (*api, error) {
	c, err := apiclient.New(addr, org, key)
	if err != nil {
		return nil, err
	}
	return &api{c: c}, nil
}

func (a *api) count(status int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.statuses == nil {
		a.statuses = map[int]int{}
	}
	a.statuses[status]++
}

// answered returns how many answers had the status.
func (a *api) answered(status int) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.statuses[status]
}

// retryable reports whether a client should try again: anything but an
// answer below 500 other than 429 and 409.
func retryable(err error) bool {
	s := apiclient.StatusOf(err)
	return s == 0 || s >= 500 || s == http.StatusTooManyRequests || s == http.StatusConflict
}

// once sends one request and decodes a 2xx answer into out.
func (a *api) once(ctx context.Context, method, path, idemKey string, body, out any) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var opts []apiclient.CallOption
	if idemKey != "" {
		opts = append(opts, apiclient.IdempotencyKey(idemKey))
	}
	err := a.c.Do(ctx, method, path, body, out, opts...)
	if s := apiclient.StatusOf(err); s != 0 {
		a.count(s)
	}
	return err
}

// do retries once until it succeeds, fails for good or ctx ends; tries
// counts the attempts.
func (a *api) do(ctx context.Context, method, path, idemKey string, body, out any) (tries int, err error) {
	for {
		tries++
		err = a.once(ctx, method, path, idemKey, body, out)
		if err == nil || !retryable(err) || ctx.Err() != nil {
			return tries, err
		}
		if serr := sleepCtx(ctx, time.Duration(min(tries, 8))*250*time.Millisecond); serr != nil {
			return tries, fmt.Errorf("%w (last: %v)", serr, err)
		}
	}
}

// errRefused is a 409: the request was refused before anything was stored.
var errRefused = errors.New("refused (409)")

// doRefusable is do, except that a 409 ends it with errRefused.
func (a *api) doRefusable(ctx context.Context, method, path, idemKey string, body any) (tries int, err error) {
	for {
		tries++
		err = a.once(ctx, method, path, idemKey, body, nil)
		if apiclient.StatusOf(err) == http.StatusConflict {
			return tries, fmt.Errorf("%w: %w", errRefused, err)
		}
		if err == nil || !retryable(err) || ctx.Err() != nil {
			return tries, err
		}
		if serr := sleepCtx(ctx, time.Duration(min(tries, 8))*250*time.Millisecond); serr != nil {
			return tries, fmt.Errorf("%w (last: %v)", serr, err)
		}
	}
}

// follower is an SSE client of one execution's consolidated stream that
// reconnects with Last-Event-ID whenever the connection ends, and records
// every event it received.
type follower struct {
	a      *api
	execID string

	mu         sync.Mutex
	received   map[int64]int  // event ID → times received
	order      []int64        // event IDs in the order received
	events     map[string]int // event name → events received
	last       int64
	reconnects int
	wake       chan struct{} // a nudge on every agent.waiting
}

func newFollower(a *api, execID string) *follower {
	return &follower{a: a, execID: execID, received: map[int64]int{}, events: map[string]int{}, wake: make(chan struct{}, 1)}
}

// run follows until ctx ends.
func (f *follower) run(ctx context.Context) {
	for ctx.Err() == nil {
		_ = f.connect(ctx)
		_ = sleepCtx(ctx, 300*time.Millisecond)
	}
}

// connect reads one connection with apiclient.Events, which yields what
// the gateway sent as it sent it: the checker, not the client, is what
// must notice an event twice or out of order.
func (f *follower) connect(ctx context.Context) error {
	f.mu.Lock()
	last := ""
	if f.last > 0 {
		last = strconv.FormatInt(f.last, 10)
	}
	f.mu.Unlock()
	first := true
	for ev, err := range f.a.c.Events(ctx, f.execID, apiclient.EventsOptions{LastEventID: last}) {
		if err != nil {
			return err
		}
		if first {
			f.mu.Lock()
			f.reconnects++ // the first connection counts too; see snapshot
			f.mu.Unlock()
			first = false
		}
		f.take(ev)
	}
	return nil
}

func (f *follower) take(ev apiclient.Event) {
	if ev.Name == event.NameStreamError {
		// Not stored (no ID): the gateway says the stream broke; run
		// reconnects after Last-Event-ID as for any other end.
		f.mu.Lock()
		f.events[ev.Name]++
		f.mu.Unlock()
		return
	}
	id, _ := strconv.ParseInt(ev.ID, 10, 64)
	f.mu.Lock()
	if f.received[id] == 0 {
		f.events[ev.Name]++
	}
	f.received[id]++
	f.order = append(f.order, id)
	f.last = max(f.last, id)
	f.mu.Unlock()
	if ev.Name == event.NameWaiting {
		select {
		case f.wake <- struct{}{}:
		default:
		}
	}
}

// seen is how many events named name were received.
func (f *follower) seen(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.events[name]
}

// arrivals returns the IDs received, in the order received, across all
// connections.
func (f *follower) arrivals() []int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.order)
}

// ended reports whether the execution's end event (completed, failed or
// cancelled) was received.
func (f *follower) ended() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.events[event.NameCompleted]+f.events[event.NameFailed]+f.events[event.NameCancelled] > 0
}

// snapshot returns the IDs received (with counts), the last, and the
// number of reconnects.
func (f *follower) snapshot() (map[int64]int, int64, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[int64]int, len(f.received))
	for k, v := range f.received {
		out[k] = v
	}
	return out, f.last, max(0, f.reconnects-1)
}
