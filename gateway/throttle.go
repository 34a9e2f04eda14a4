package gateway

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// unreachableLogInterval is how often a store outage is logged: every
// request fails alike during one, and a line per request would bury the
// log.
const unreachableLogInterval = 30 * time.Second

// throttleHandler passes every record but those with message msg, of which
// it passes one per interval, counting the ones it dropped in between.
type throttleHandler struct {
	slog.Handler
	msg      string
	interval time.Duration
	state    *throttleState
}

type throttleState struct {
	mu         sync.Mutex
	last       time.Time
	suppressed int
}

func throttled(h slog.Handler, msg string, interval time.Duration) slog.Handler {
	return &throttleHandler{Handler: h, msg: msg, interval: interval, state: &throttleState{}}
}

func (h *throttleHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Message != h.msg {
		return h.Handler.Handle(ctx, r)
	}
	st := h.state
	st.mu.Lock()
	if !st.last.IsZero() && r.Time.Sub(st.last) < h.interval {
		st.suppressed++
		st.mu.Unlock()
		return nil
	}
	n := st.suppressed
	st.last, st.suppressed = r.Time, 0
	st.mu.Unlock()
	if n > 0 {
		r = r.Clone()
		r.AddAttrs(slog.Int("suppressed", n))
	}
	return h.Handler.Handle(ctx, r)
}

func (h *throttleHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &throttleHandler{Handler: h.Handler.WithAttrs(attrs), msg: h.msg, interval: h.interval, state: h.state}
}

func (h *throttleHandler) WithGroup(name string) slog.Handler {
	return &throttleHandler{Handler: h.Handler.WithGroup(name), msg: h.msg, interval: h.interval, state: h.state}
}
