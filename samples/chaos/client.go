package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentree/agentree/agentsdk/event"
)

// api is a REST client of the gateway, as one organization. Requests that
// fail for a reason a client should retry (the gateway unreachable, a
// 5xx, a 429) are retried with the same Idempotency-Key until ctx ends.
type api struct {
	base, org, key string
	hc             *http.Client

	mu sync.Mutex
	// statuses counts the non-2xx answers by status code: a store outage
	// should be 503s with Retry-After, never 500s.
	statuses map[int]int
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

// httpError is an answer that is not 2xx.
type httpError struct {
	Status int
	Body   string
}

func (e *httpError) Error() string { return fmt.Sprintf("HTTP %d: %s", e.Status, e.Body) }

// retryable reports whether a client should try again.
func retryable(err error) bool {
	he, ok := err.(*httpError)
	return !ok || he.Status >= 500 || he.Status == http.StatusTooManyRequests || he.Status == http.StatusConflict
}

func (a *api) url(path string) string {
	return a.base + "/api/orgs/" + url.PathEscape(a.org) + path
}

// once sends one request and decodes a 2xx answer into out.
func (a *api) once(ctx context.Context, method, path, idemKey string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, a.url(path), rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+a.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if idemKey != "" {
		req.Header.Set("Idempotency-Key", idemKey)
	}
	resp, err := a.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if resp.StatusCode/100 != 2 {
		a.count(resp.StatusCode)
		return &httpError{Status: resp.StatusCode, Body: strings.TrimSpace(string(b))}
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
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
		if he, ok := err.(*httpError); ok && he.Status == http.StatusConflict {
			return tries, fmt.Errorf("%w: %s", errRefused, he.Body)
		}
		if err == nil || !retryable(err) || ctx.Err() != nil {
			return tries, err
		}
		if serr := sleepCtx(ctx, time.Duration(min(tries, 8))*250*time.Millisecond); serr != nil {
			return tries, fmt.Errorf("%w (last: %v)", serr, err)
		}
	}
}

// sseEvent is one Server-Sent Event.
type sseEvent struct {
	ID    int64
	Event string
	Data  string
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

func (f *follower) connect(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.a.url("/agent-executions/"+url.PathEscape(f.execID)+"/stream/consolidated"), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+f.a.key)
	req.Header.Set("Accept", "text/event-stream")
	f.mu.Lock()
	if f.last > 0 {
		req.Header.Set("Last-Event-ID", strconv.FormatInt(f.last, 10))
	}
	f.mu.Unlock()
	resp, err := f.a.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return &httpError{Status: resp.StatusCode}
	}
	f.mu.Lock()
	f.reconnects++ // the first connection counts too; see snapshot
	f.mu.Unlock()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 8<<20)
	var ev sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if ev.Event != "" {
				f.take(ev)
			}
			ev = sseEvent{}
		case strings.HasPrefix(line, "id:"):
			ev.ID, _ = strconv.ParseInt(strings.TrimSpace(line[3:]), 10, 64)
		case strings.HasPrefix(line, "event:"):
			ev.Event = strings.TrimSpace(line[6:])
		case strings.HasPrefix(line, "data:"):
			ev.Data += strings.TrimPrefix(line[5:], " ")
		}
	}
	return sc.Err()
}

func (f *follower) take(ev sseEvent) {
	if ev.Event == event.NameStreamError {
		// Not stored (no ID): the gateway says the stream broke; run
		// reconnects after Last-Event-ID as for any other end.
		f.mu.Lock()
		f.events[ev.Event]++
		f.mu.Unlock()
		return
	}
	f.mu.Lock()
	if f.received[ev.ID] == 0 {
		f.events[ev.Event]++
	}
	f.received[ev.ID]++
	f.order = append(f.order, ev.ID)
	f.last = max(f.last, ev.ID)
	f.mu.Unlock()
	if ev.Event == event.NameWaiting {
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
