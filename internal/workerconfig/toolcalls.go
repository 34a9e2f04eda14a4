package workerconfig

import (
	"context"
	"sync"

	"github.com/agentree/agentree/agentsdk"
)

// DefaultToolCallsPerOrg is Config.ToolCallsPerOrg's default: a few
// tenants' worth of calls fit a worker's default activity slots, and one
// tenant's parallel calls still run side by side.
const DefaultToolCallsPerOrg = 16

// orgSlots caps the tool calls each organization runs at once.
type orgSlots struct {
	n  int
	mu sync.Mutex
	// slots holds each org's semaphore while it has calls running or
	// waiting; held counts them, so an idle org's entry goes.
	slots map[string]*orgSlot
}

type orgSlot struct {
	sem  chan struct{}
	held int
}

// limitPerOrg wraps every tool's Run so that no more than n calls of one
// organization run at once; n < 1: no cap. A call past the cap waits for
// a slot (the activity heartbeats meanwhile) or for its context to end.
func limitPerOrg(tools []*agentsdk.Tool, n int) {
	if n < 1 {
		return
	}
	s := &orgSlots{n: n, slots: map[string]*orgSlot{}}
	for _, t := range tools {
		run := t.Run
		t.Run = func(ctx context.Context, call agentsdk.ToolInvocation) (string, error) {
			release, err := s.acquire(ctx, call.OrgID)
			if err != nil {
				return "", err
			}
			defer release()
			return run(ctx, call)
		}
	}
}

func (s *orgSlots) acquire(ctx context.Context, org string) (release func(), err error) {
	s.mu.Lock()
	sl := s.slots[org]
	if sl == nil {
		sl = &orgSlot{sem: make(chan struct{}, s.n)}
		s.slots[org] = sl
	}
	sl.held++
	s.mu.Unlock()
	done := func() {
		s.mu.Lock()
		if sl.held--; sl.held == 0 {
			delete(s.slots, org)
		}
		s.mu.Unlock()
	}
	select {
	case sl.sem <- struct{}{}:
		return func() { <-sl.sem; done() }, nil
	case <-ctx.Done():
		done()
		return nil, ctx.Err()
	}
}
