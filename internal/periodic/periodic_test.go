package periodic_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/internal/periodic"
)

// TestEveryCallsUntilTheContextEnds: a job runs at once when asked, then
// every interval, and Every returns once its context ends; after that
// the job is not called again.
func TestEveryCallsUntilTheContextEnds(t *testing.T) {
	for _, now := range []bool{true, false} {
		ctx, cancel := context.WithCancel(context.Background())
		var calls atomic.Int32
		first := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			periodic.Every(ctx, time.Hour, now, func(context.Context) {
				if calls.Add(1) == 1 {
					close(first)
				}
			})
		}()
		if now {
			select {
			case <-first:
			case <-time.After(10 * time.Second):
				t.Fatal("the job did not run at once")
			}
		}
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("Every did not return when its context ended")
		}
		want := int32(0)
		if now {
			want = 1
		}
		require.Equal(t, want, calls.Load(), "now=%v: an hour's interval, so only the call at once", now)
	}

	// A short interval: calls keep coming.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var calls atomic.Int32
	go periodic.Every(ctx, time.Millisecond, false, func(context.Context) { calls.Add(1) })
	require.Eventually(t, func() bool { return calls.Load() >= 3 }, 10*time.Second, time.Millisecond)
}
