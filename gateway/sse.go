package gateway

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/agentree/agentree/entrystore"
)

// sseWriteTimeout bounds one write to an SSE client, so a client that
// stopped reading cannot hold a handler forever.
const sseWriteTimeout = 30 * time.Second

// streamFrom is the execution an events request names (its org and id
// path values) and the event it resumes after (Last-Event-ID, 0 for
// none): what every stream of an execution begins with.
func (s *service) streamFrom(r *http.Request) (entrystore.Execution, int64, error) {
	ex, err := s.execution(r.Context(), r.PathValue("org"), r.PathValue("id"))
	if err != nil {
		return ex, 0, err
	}
	after, err := lastEventID(r)
	return ex, after, err
}

// lastEventID is where a stream resumes: the Last-Event-ID header a
// reconnecting EventSource sends, or ?lastEventId= for clients that cannot
// set headers.
func lastEventID(r *http.Request) (int64, error) {
	v := r.Header.Get("Last-Event-ID")
	if v == "" {
		v = r.URL.Query().Get("lastEventId")
	}
	if v == "" {
		return 0, nil
	}
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil || id < 0 {
		return 0, invalid("Last-Event-ID %q is not an event ID", v)
	}
	return id, nil
}

// serveStream serves an execution's events as Server-Sent Events:
// "id: <row id>", "event: <name>", "data: <JSON>", with ": ping" comments
// while idle. The data is the stored JSON as is: producers store the
// agentsdk/event types, so it is already the typed payload. consolidated adds tokens, data and task events to the
// lifecycle ones (also with ?consolidated=true).
func (s *service) serveStream(consolidated bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		ex, after, err := s.streamFrom(r)
		if err != nil {
			writeStatus(w, err)
			return
		}
		if v := r.URL.Query().Get("consolidated"); v != "" {
			if consolidated, err = strconv.ParseBool(v); err != nil {
				writeStatus(w, invalid("consolidated %q is not a boolean", v))
				return
			}
		}
		release, ok := s.sseSlot(ctx, w, ex.OrgID)
		if !ok {
			return
		}
		defer release()

		sw := newSSEWriter(w)
		err = s.streams.follow(ctx, followRequest{
			Org: ex.OrgID, Execution: ex.ID, After: after, Consolidated: consolidated,
			Emit: func(ev entrystore.StreamEvent) error {
				appendSSE(&sw.buf, ev)
				return sw.write()
			},
			Flush: sw.flush, Ping: sw.ping,
		})
		if err != nil && !errors.Is(err, context.Canceled) && ctx.Err() == nil {
			s.log.Warn("gateway: stream ended", "execution", ex.ID, "err", err)
		}
	}
}

// appendSSE formats one event. Stored data is JSON from Postgres and so
// one line, but a newline would end the event early: every line gets its
// own "data:" field, which clients join back with newlines.
//
// An event that is not stored (stream_error, ID 0) has no "id:" line, so
// an EventSource keeps the last real ID as its resume point.
func appendSSE(buf *bytes.Buffer, ev entrystore.StreamEvent) {
	if ev.ID > 0 {
		buf.WriteString("id: ")
		buf.WriteString(strconv.FormatInt(ev.ID, 10))
		buf.WriteString("\n")
	}
	buf.WriteString("event: ")
	buf.WriteString(ev.Event)
	data := ev.Data
	if len(data) == 0 {
		data = []byte("null")
	}
	for line := range bytes.Lines(data) {
		buf.WriteString("\ndata: ")
		buf.Write(bytes.TrimRight(line, "\r\n"))
	}
	buf.WriteString("\n\n")
}
