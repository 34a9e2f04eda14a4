package apiclient

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The stream's event names a client acts on. The others (agent.started,
// token, tool_result, ...) are listed in the API's StreamEvent.
const (
	EventCompleted = "agent.completed"
	EventFailed    = "agent.failed"
	EventCancelled = "agent.cancelled"
	EventPaused    = "agent.paused"
	// EventStreamError says why the gateway broke a stream off and when to
	// come back; Follow acts on it and does not yield it.
	EventStreamError = "stream_error"
)

// Terminal reports whether an event named name ends its stream.
func Terminal(name string) bool {
	switch name {
	case EventCompleted, EventFailed, EventCancelled, EventPaused:
		return true
	}
	return false
}

// Event is one Server-Sent Event of an execution's stream.
type Event struct {
	// ID is the event's position in the execution's stream: resume after
	// it with FollowOptions.LastEventID.
	ID   string
	Name string
	// Data is the event's JSON.
	Data json.RawMessage
}

// FollowOptions say where a stream starts and how it is followed.
type FollowOptions struct {
	// LastEventID resumes after that event ("" = from the start of the
	// replay window).
	LastEventID string
	// Lifecycle follows only the lifecycle events (agent.*); the default
	// is the consolidated stream (tokens, data and task events too).
	Lifecycle bool
	// Reconnects is how many reconnections in a row without an event may
	// fail before Follow gives up with the last error; 0 means 10.
	Reconnects int
	// OnReconnect, if set, is told each time the stream is resumed and
	// why.
	OnReconnect func(lastEventID string, why error)
}

// Follow yields an execution's stream events, in order and each once,
// until a terminal event (yielded) or the execution's end, an error that
// reconnecting cannot cure (yielded, as an *Error where the gateway said
// it), or ctx's end. A dropped connection, a gateway restarting or a store
// outage is resumed with Last-Event-ID after a backoff (the gateway's hint
// where it gives one).
func (c *Client) Follow(ctx context.Context, executionID string, o FollowOptions) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		f := &follower{c: c, ctx: ctx, id: executionID, o: o, last: o.LastEventID}
		if f.o.Reconnects <= 0 {
			f.o.Reconnects = 10
		}
		f.run(yield)
	}
}

type follower struct {
	c    *Client
	ctx  context.Context
	id   string
	o    FollowOptions
	last string // the last event ID yielded
}

// errEnded is a stream the gateway closed without a terminal event.
var errEnded = errors.New("the stream ended without a terminal event")

func (f *follower) run(yield func(Event, error) bool) {
	failures := 0
	for {
		progressed, wait, err := f.once(yield)
		if err == nil {
			return // a terminal event, or the consumer stopped
		}
		if f.ctx.Err() != nil {
			yield(Event{}, f.ctx.Err())
			return
		}
		if errors.Is(err, errEnded) {
			done, gerr := f.ended()
			if gerr != nil {
				err = gerr
			} else if done {
				return
			}
		}
		if !retryable(err) {
			yield(Event{}, err)
			return
		}
		if progressed {
			failures = 0
		}
		failures++
		if failures > f.o.Reconnects {
			yield(Event{}, err)
			return
		}
		if f.o.OnReconnect != nil {
			f.o.OnReconnect(f.last, err)
		}
		if wait == 0 {
			wait = backoff(failures)
		}
		t := time.NewTimer(wait)
		select {
		case <-f.ctx.Done():
			t.Stop()
			yield(Event{}, f.ctx.Err())
			return
		case <-t.C:
		}
	}
}

// once follows one connection. It returns a nil error when the stream is
// done (a terminal event, or the consumer stopped), else why it broke, how
// long the gateway asked to wait, and whether any event came first.
func (f *follower) once(yield func(Event, error) bool) (progressed bool, wait time.Duration, err error) {
	for ev, err := range f.c.Events(f.ctx, f.id, EventsOptions{LastEventID: f.last, Lifecycle: f.o.Lifecycle}) {
		if err != nil {
			var e *Error
			if errors.As(err, &e) {
				return progressed, e.RetryAfter, err
			}
			return progressed, 0, err
		}
		if ev.Name == EventStreamError {
			return progressed, streamErrorWait(ev.Data), streamError(ev.Data)
		}
		if ev.ID != "" && !after(ev.ID, f.last) {
			continue // already yielded: never twice, never backwards
		}
		if ev.ID != "" {
			f.last = ev.ID
		}
		progressed = true
		if !yield(ev, nil) || Terminal(ev.Name) {
			return true, 0, nil
		}
	}
	return progressed, 0, errEnded
}

// EventsOptions say which stream Events reads and from where.
type EventsOptions struct {
	// LastEventID starts after that event ("" = the start of the replay
	// window).
	LastEventID string
	// Lifecycle reads the lifecycle stream; the default is the
	// consolidated one.
	Lifecycle bool
}

// Events reads one connection of an execution's stream and yields its
// events as the gateway sent them, stream_error included: no reconnection
// and no deduplication (Follow adds both). It ends when the gateway closes
// the stream; an answer other than 200 is yielded as an *Error, and a
// broken connection as its error.
func (c *Client) Events(ctx context.Context, executionID string, o EventsOptions) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		path := "/agent-executions/" + url.PathEscape(executionID) + "/stream"
		if !o.Lifecycle {
			path += "/consolidated"
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.URL(path), nil)
		if err != nil {
			yield(Event{}, err)
			return
		}
		req.Header.Set("Authorization", "Bearer "+c.key)
		req.Header.Set("Accept", "text/event-stream")
		if o.LastEventID != "" {
			req.Header.Set("Last-Event-ID", o.LastEventID)
		}
		resp, err := c.hc.Do(req)
		if err != nil {
			yield(Event{}, err)
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			yield(Event{}, errorOf(resp))
			return
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		var ev Event
		var data []string
		for sc.Scan() {
			line := sc.Text()
			if line != "" {
				parseLine(line, &ev, &data)
				continue
			}
			if ev.Name == "" && len(data) == 0 {
				continue // a comment (": ping") block
			}
			ev.Data = json.RawMessage(strings.Join(data, "\n"))
			if !yield(ev, nil) {
				return
			}
			ev, data = Event{}, nil
		}
		if err := sc.Err(); err != nil {
			yield(Event{}, err)
		}
	}
}

// parseLine applies one SSE field line to the event being read.
func parseLine(line string, ev *Event, data *[]string) {
	if strings.HasPrefix(line, ":") {
		return
	}
	field, value, _ := strings.Cut(line, ":")
	value = strings.TrimPrefix(value, " ")
	switch field {
	case "id":
		ev.ID = value
	case "event":
		ev.Name = value
	case "data":
		*data = append(*data, value)
	}
}

// after reports whether event ID id comes after last (IDs are increasing
// integers; anything else is taken as new).
func after(id, last string) bool {
	if last == "" {
		return true
	}
	a, err1 := strconv.ParseInt(id, 10, 64)
	b, err2 := strconv.ParseInt(last, 10, 64)
	if err1 != nil || err2 != nil {
		return id != last
	}
	return a > b
}

// streamError is a stream_error event as an *Error.
func streamError(data json.RawMessage) *Error {
	var se struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	_ = json.Unmarshal(data, &se)
	status := http.StatusServiceUnavailable
	if se.Code == "events_expired" {
		status = http.StatusGone
	}
	return &Error{Status: status, Code: se.Code, Message: se.Message, RetryAfter: streamErrorWait(data)}
}

func streamErrorWait(data json.RawMessage) time.Duration {
	var se struct {
		RetryAfterMs int64 `json:"retryAfterMs"`
	}
	_ = json.Unmarshal(data, &se)
	return time.Duration(se.RetryAfterMs) * time.Millisecond
}

// ended asks the gateway whether an execution whose stream closed without
// a terminal event has ended (its stream then has nothing more to say).
func (f *follower) ended() (bool, error) {
	var ex struct {
		Status string `json:"status"`
	}
	if err := f.c.Do(f.ctx, http.MethodGet, "/agent-executions/"+url.PathEscape(f.id), nil, &ex); err != nil {
		return false, err
	}
	switch ex.Status {
	case "COMPLETED", "FAILED", "CANCELLED", "PAUSED":
		return true, nil
	}
	return false, nil
}

// retryable reports whether reconnecting may cure err: a transport error
// or a stream the gateway broke off or asked to be retried later.
func retryable(err error) bool {
	if errors.Is(err, errEnded) {
		return true
	}
	var e *Error
	if errors.As(err, &e) {
		switch e.Status {
		case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			return true
		}
		return false
	}
	return true // the connection: refused, reset, cut mid-stream
}

// backoff is the wait before the nth reconnection in a row: 100 ms
// doubling, at most 5 s.
func backoff(n int) time.Duration {
	d := 100 * time.Millisecond << min(n-1, 6)
	return min(d, 5*time.Second)
}
