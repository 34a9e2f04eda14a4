package step

import (
	"context"
	"errors"
	"time"
)

// errStreamIdle ends a model call whose stream sent nothing for
// Deps.ModelIdleTimeout.
var errStreamIdle = errors.New("the model's stream went idle")

// idleWatch cancels a model call's context when its stream sends nothing
// for limit: a server that stops mid-stream without closing the
// connection holds a call that heartbeats on a timer until its whole
// timeout (ModelTimeout, 10 minutes by default) otherwise.
type idleWatch struct {
	ctx   context.Context
	limit time.Duration
	timer *time.Timer
}

// watchIdle returns the context the stream runs in; limit ≤ 0 watches
// nothing.
func watchIdle(ctx context.Context, limit time.Duration) (*idleWatch, context.CancelFunc) {
	if limit <= 0 {
		return &idleWatch{ctx: ctx}, func() {}
	}
	sctx, cancel := context.WithCancelCause(ctx)
	w := &idleWatch{ctx: sctx, limit: limit, timer: time.AfterFunc(limit, func() { cancel(errStreamIdle) })}
	return w, func() { w.timer.Stop(); cancel(nil) }
}

// touch restarts the wait: the stream sent something.
func (w *idleWatch) touch() {
	if w.timer != nil {
		w.timer.Reset(w.limit)
	}
}

// fired reports whether the watch gave up on the stream.
func (w *idleWatch) fired() bool { return errors.Is(context.Cause(w.ctx), errStreamIdle) }
