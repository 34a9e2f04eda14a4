package gateway

import (
	"bytes"
	"context"
	"net/http"
	"time"
)

// sseSlot takes a stream slot for the caller in orgID (ssecap.go), or
// answers the refusal itself and returns false.
func (s *service) sseSlot(ctx context.Context, w http.ResponseWriter, orgID string) (release func(), ok bool) {
	release, err := s.streamSlot(ctx, orgID)
	if writeTooManyStreams(w, err) {
		return nil, false
	}
	if err != nil {
		writeStatus(w, err)
		return nil, false
	}
	return release, true
}

// startSSE answers 200 with an event stream's headers: never cached, never
// buffered by a proxy.
func startSSE(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
}

// sseWriter is an event stream being answered (startSSE sent): events are
// put in buf and sent by write, each write under its own deadline, so a
// client that stopped reading cannot hold a handler.
type sseWriter struct {
	w   http.ResponseWriter
	rc  *http.ResponseController
	buf bytes.Buffer
}

// newSSEWriter starts the event stream on w.
func newSSEWriter(w http.ResponseWriter) *sseWriter {
	startSSE(w)
	return &sseWriter{w: w, rc: http.NewResponseController(w)}
}

// write sends what buf holds.
func (s *sseWriter) write() error {
	_ = s.rc.SetWriteDeadline(time.Now().Add(sseWriteTimeout))
	_, err := s.w.Write(s.buf.Bytes())
	s.buf.Reset()
	return err
}

// flush pushes what was written to the client.
func (s *sseWriter) flush() error { return s.rc.Flush() }

// ping keeps an idle stream alive with a comment.
func (s *sseWriter) ping() error {
	s.buf.WriteString(": ping\n\n")
	if err := s.write(); err != nil {
		return err
	}
	return s.flush()
}
