package gateway

import (
	"context"
	"net/http"
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
