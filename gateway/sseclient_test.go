package gateway_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// sseEvent is one parsed Server-Sent Event.
type sseEvent struct {
	ID    int64
	Event string
	Data  string
}

// sseStream reads an event stream in the background, so tests can wait for
// the next event with a deadline.
type sseStream struct {
	resp   *http.Response
	cancel context.CancelFunc
	events chan sseEvent
	ended  chan struct{} // closed when the server ended the stream
	pings  atomic.Int64
}

// streamRequest sends an SSE request; lastEventID "" sends no
// Last-Event-ID. cancel ends the request.
func (e *env) streamRequest(t testing.TB, key, path, lastEventID string) (resp *http.Response, cancel context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.base+path, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Accept", "text/event-stream")
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	return resp, cancel
}

// openStream opens an SSE stream that must be accepted.
func (e *env) openStream(t testing.TB, key, path, lastEventID string) *sseStream {
	t.Helper()
	resp, cancel := e.streamRequest(t, key, path, lastEventID)
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		t.Fatalf("stream %s: %d %s", path, resp.StatusCode, body)
	}
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	s := &sseStream{resp: resp, cancel: cancel, events: make(chan sseEvent, 4096), ended: make(chan struct{})}
	go s.read()
	t.Cleanup(s.close)
	return s
}

func (s *sseStream) read() {
	defer close(s.ended)
	r := bufio.NewReader(s.resp.Body)
	var ev sseEvent
	var data []string
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if ev.Event != "" || len(data) > 0 {
				ev.Data = strings.Join(data, "\n")
				s.events <- ev
			}
			ev, data = sseEvent{}, nil
		case strings.HasPrefix(line, ":"):
			s.pings.Add(1)
		default:
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "id":
				ev.ID, _ = strconv.ParseInt(value, 10, 64)
			case "event":
				ev.Event = value
			case "data":
				data = append(data, value)
			}
		}
	}
}

// close disconnects, as a browser tab that goes away.
func (s *sseStream) close() {
	s.cancel()
	s.resp.Body.Close()
}

// next returns the next event; ok is false when the server ended the
// stream. It fails the test after timeout.
func (s *sseStream) next(t testing.TB, timeout time.Duration) (sseEvent, bool) {
	t.Helper()
	select {
	case ev := <-s.events:
		return ev, true
	default:
	}
	select {
	case ev := <-s.events:
		return ev, true
	case <-s.ended:
		select {
		case ev := <-s.events:
			return ev, true
		default:
			return sseEvent{}, false
		}
	case <-time.After(timeout):
		t.Fatalf("no SSE event within %s", timeout)
		return sseEvent{}, false
	}
}

// until collects events up to and including the first named one.
func (s *sseStream) until(t testing.TB, name string, timeout time.Duration) []sseEvent {
	t.Helper()
	var out []sseEvent
	deadline := time.Now().Add(timeout)
	for {
		ev, ok := s.next(t, time.Until(deadline))
		require.True(t, ok, "the stream ended before %s; got %v", name, names(out))
		out = append(out, ev)
		if ev.Event == name {
			return out
		}
	}
}

// rest collects events until the server ends the stream.
func (s *sseStream) rest(t testing.TB, timeout time.Duration) []sseEvent {
	t.Helper()
	var out []sseEvent
	deadline := time.Now().Add(timeout)
	for {
		ev, ok := s.next(t, time.Until(deadline))
		if !ok {
			return out
		}
		out = append(out, ev)
	}
}

func names(evs []sseEvent) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Event
	}
	return out
}
