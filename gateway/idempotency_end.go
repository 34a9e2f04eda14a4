package gateway

import (
	"context"
	"sync"
	"time"

	"github.com/agentree/agentree/entrystore"
)

// keyEnds are the writes that end Idempotency-Key reservations (a
// response stored, or a release) which the store refused for a while, and
// which run again in the background until they are written.
//
// Without them a store that refuses writes for a moment (a full disk, a
// failover) leaves a key reserved for the rest of its lease (a minute by
// default): every retry with the key gets 409 "still in progress" long
// after the first request answered and the store came back. A retry is
// tried until three quarters of the lease are gone; past the lease a retry
// with the key takes over anyway (idempotent's crash safety), and trying
// longer would only race it.
type keyEnds struct {
	// ctx ends the retries when the gateway stops.
	ctx  context.Context
	wg   sync.WaitGroup
	slot chan struct{} // bounds the retries pending at once
}

// maxKeyEnds bounds the reservations retried at once; past it a key is
// left to its lease.
const maxKeyEnds = 1024

// keyEndBackoff is the first wait before a refused write is tried again,
// and keyEndBackoffMax its cap: a key is freed within about that long of
// the store writing again.
const (
	keyEndBackoff    = 100 * time.Millisecond
	keyEndBackoffMax = time.Second
)

func newKeyEnds(ctx context.Context) *keyEnds {
	return &keyEnds{ctx: ctx, slot: make(chan struct{}, maxKeyEnds)}
}

// wait returns once every retry has ended (the gateway is stopping).
func (k *keyEnds) wait() {
	if k != nil {
		k.wg.Wait()
	}
}

// endKey runs write, which ends the reservation made at reserved. Should
// the store refuse it for now, it is tried again in the background (see
// keyEnds); any other failure is logged and the key left to its lease.
func (s *service) endKey(ctx context.Context, op string, reserved time.Time, write func(context.Context) error) {
	err := write(context.WithoutCancel(ctx))
	if err == nil {
		return
	}
	s.log.Warn("gateway: "+op, "err", err)
	k := s.keyEnds
	if k == nil || !entrystore.Unreachable(err) {
		return
	}
	select {
	case k.slot <- struct{}{}:
	default:
		return
	}
	stop := reserved.Add(s.idempotency.lease * 3 / 4)
	k.wg.Add(1)
	go func() {
		defer func() { <-k.slot; k.wg.Done() }()
		s.retryKeyEnd(op, stop, write)
	}()
}

// retryKeyEnd tries write with backoff until it succeeds, fails for
// another reason than an unreachable store, the gateway stops, or stop
// passes.
func (s *service) retryKeyEnd(op string, stop time.Time, write func(context.Context) error) {
	base := s.keyEnds.ctx
	wait := keyEndBackoff
	for attempt := 2; ; attempt++ {
		t := time.NewTimer(wait)
		select {
		case <-base.Done():
			t.Stop()
			return
		case <-t.C:
		}
		if time.Now().After(stop) {
			s.log.Warn("gateway: "+op+": gave up; the key is freed when its lease ends", "attempts", attempt-1)
			return
		}
		err := write(base)
		if err == nil {
			s.log.Info("gateway: "+op+": written once the store was back", "attempts", attempt)
			return
		}
		if !entrystore.Unreachable(err) {
			s.log.Warn("gateway: "+op, "err", err, "attempts", attempt)
			return
		}
		wait = min(2*wait, keyEndBackoffMax)
	}
}
