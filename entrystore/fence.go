package entrystore

import (
	"context"
	"time"
)

// writeFenceKey is the context key of a write fence.
type writeFenceKey struct{}

// WithWriteFence returns ctx whose entry appends carry the fence at: the
// Temporal time of the workflow task whose local activity makes them.
//
// A workflow task that the Temporal server timed out — its heartbeat was
// lost while Temporal or its database hiccuped — is retried as a new task
// on some worker, while the first worker may still be running the local
// activities the lost task started: a model call that answers a minute
// later, say. Should the new task have moved the conversation on in the
// meantime (consumed a message under the same entry), that late answer
// would start a branch beside it, and the new task, finding the answer by
// its key, would take it up as its own: the message is then off the path,
// never answered. With fences, every append records its task's time on
// the execution, and an append fenced earlier than one recorded is
// refused (ErrConflict) when it would branch, so the late answer is not
// written and the new task makes the call itself. An append without a
// fence (activities, the gateway) is never refused for one.
func WithWriteFence(ctx context.Context, at time.Time) context.Context {
	return context.WithValue(ctx, writeFenceKey{}, at.UTC())
}

// WriteFence is ctx's fence, if it has one.
func WriteFence(ctx context.Context) (time.Time, bool) {
	at, ok := ctx.Value(writeFenceKey{}).(time.Time)
	return at, ok
}

// writeFence is ctx's fence, or nil.
func writeFence(ctx context.Context) *time.Time {
	if at, ok := WriteFence(ctx); ok {
		return &at
	}
	return nil
}
