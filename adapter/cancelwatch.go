package adapter

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/agentree/agentree/entrystore"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"
)

// errCancelRequested is the cause a watched call's context ends with when
// a client has asked to cancel its execution.
var errCancelRequested = errors.New("the execution is being cancelled")

// cancelWatch stops the model and tool calls running on this worker whose
// executions a client has asked to cancel (status CANCELLING in the
// store), without waiting for Temporal to tell them.
//
// Why: a call run as a local activity belongs to a workflow task that is
// still open, so Temporal can deliver the workflow's cancel request only
// when that task next completes — at its heartbeat, up to 4 s later; an
// activity learns it at its next heartbeat. The gateway marks the
// execution CANCELLING before it asks Temporal to cancel, so one poll of
// the store every pollEvery, for every call the worker runs at once, stops
// a streaming call within about a second of the request either way.
// The poll runs only while calls are watched: an idle worker sends nothing.
type cancelWatch struct {
	store *entrystore.Store
	every time.Duration

	mu      sync.Mutex
	calls   map[entrystore.ExecutionKey]map[*watchedCall]struct{}
	polling bool
}

type watchedCall struct{ cancel context.CancelCauseFunc }

// cancelPollEvery is how often a worker looks for cancel requests while it
// runs calls: a quarter of the second a cancellation should take.
const cancelPollEvery = 250 * time.Millisecond

func newCancelWatch(store *entrystore.Store) *cancelWatch {
	return &cancelWatch{store: store, every: cancelPollEvery, calls: map[entrystore.ExecutionKey]map[*watchedCall]struct{}{}}
}

// watch returns ctx, ended with errCancelRequested as its cause once the
// execution is found CANCELLING, and the function that stops watching it.
func (w *cancelWatch) watch(ctx context.Context, orgID, executionID string) (context.Context, func()) {
	if w == nil || w.store == nil {
		return ctx, func() {}
	}
	cctx, cancel := context.WithCancelCause(ctx)
	c := &watchedCall{cancel: cancel}
	k := entrystore.ExecutionKey{OrgID: orgID, ID: executionID}
	w.mu.Lock()
	if w.calls[k] == nil {
		w.calls[k] = map[*watchedCall]struct{}{}
	}
	w.calls[k][c] = struct{}{}
	if !w.polling {
		w.polling = true
		go w.poll()
	}
	w.mu.Unlock()
	return cctx, func() {
		w.mu.Lock()
		delete(w.calls[k], c)
		if len(w.calls[k]) == 0 {
			delete(w.calls, k)
		}
		w.mu.Unlock()
		cancel(nil)
	}
}

// poll looks for cancel requests while any call is watched, and ends when
// none is. A failed poll is tried again at the next tick: the call's own
// cancellation through Temporal still reaches it.
func (w *cancelWatch) poll() {
	t := time.NewTicker(w.every)
	defer t.Stop()
	for range t.C {
		keys := w.keys()
		if keys == nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), w.every*4)
		found, err := w.store.Cancelling(ctx, keys)
		cancel()
		if err != nil {
			continue
		}
		w.mu.Lock()
		for _, k := range found {
			for c := range w.calls[k] {
				c.cancel(errCancelRequested)
			}
		}
		w.mu.Unlock()
	}
}

// keys are the watched executions; nil (and polling over) when none.
func (w *cancelWatch) keys() []entrystore.ExecutionKey {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.calls) == 0 {
		w.polling = false
		return nil
	}
	keys := make([]entrystore.ExecutionKey, 0, len(w.calls))
	for k := range w.calls {
		keys = append(keys, k)
	}
	return keys
}

// cancelRequested reports whether ctx ended because the execution is
// being cancelled.
func cancelRequested(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), errCancelRequested)
}

// interrupted reports whether ctx, an activity's, ended with its attempt
// rather than its call (step.Deps.Interrupted): its worker is stopping
// (the SDK cancels every running call's context with
// worker.ErrWorkerShutdown as the cause), or it is a local first attempt
// that reached its limit (LocalCallLimit), after which an activity takes
// the call over.
func interrupted(ctx context.Context) bool {
	if errors.Is(context.Cause(ctx), worker.ErrWorkerShutdown) {
		return true
	}
	return errors.Is(ctx.Err(), context.DeadlineExceeded) && activity.IsActivity(ctx) && activity.GetInfo(ctx).IsLocalActivity
}
