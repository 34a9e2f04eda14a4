package periodic

import (
	"context"
	"time"
)

// Every calls job every interval until ctx ends, the first call after one
// interval, or at once with now. It returns when ctx ends, never during a
// call (the call sees ctx end and should return soon).
func Every(ctx context.Context, interval time.Duration, now bool, job func(context.Context)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	if now {
		job(ctx)
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		job(ctx)
	}
}
