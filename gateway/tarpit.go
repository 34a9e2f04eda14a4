package gateway

import (
	"context"
	"math/rand/v2"
	"time"
)

// tarpit holds the refusal of an address past its bucket (no known key:
// junk) for a while before it is sent. A flooding client that sends its
// next request as soon as it has an answer then sends one per delay on
// each connection instead of thousands a second, and each held request
// costs a sleeping goroutine rather than a parse, a refusal and a write.
// Measured with tools/bench's junk_flood (200 clients sending unknown
// keys on 2 cores, the gateway in the same process): 5,300-7,400 junk
// requests/s answered at once made the valid client's p99 ×20; held a
// second, see the README's figure. The 429 says Retry-After: 1 anyway, so
// a client that honours it waits no longer. Slots bound how many are held
// at once; past them a refusal goes out at once.
type tarpit struct {
	delay time.Duration
	slots chan struct{}
}

func newTarpit(delay time.Duration, slots int) *tarpit {
	if delay <= 0 || slots <= 0 {
		return nil
	}
	return &tarpit{delay: delay, slots: make(chan struct{}, slots)}
}

// hold waits about the tarpit's delay (between half and one and a half
// of it), or less if the client goes; at once without a tarpit or a free
// slot. The spread matters: held exactly alike, a flood's refusals go out
// together and its clients come back together, a burst every delay that
// the valid clients' requests meet (junk_flood's p99 ×5 with it).
func (tp *tarpit) hold(ctx context.Context) {
	if tp == nil {
		return
	}
	select {
	case tp.slots <- struct{}{}:
	default:
		return
	}
	defer func() { <-tp.slots }()
	t := time.NewTimer(tp.delay/2 + rand.N(tp.delay))
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
