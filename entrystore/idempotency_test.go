package entrystore_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/entrystore"
)

// TestIdempotencyKeyLifecycle walks one key through reserve, a concurrent
// attempt, completion, replay, a lease that ran out, and expiry.
func TestIdempotencyKeyLifecycle(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	s, org := f.store, f.org.ID

	first, res, err := s.ReserveIdempotencyKey(ctx, org, "k", "fp", time.Hour, time.Hour)
	require.NoError(t, err)
	require.Equal(t, entrystore.Reserved, res)
	require.NotEmpty(t, first.EffectID)

	busy, res, err := s.ReserveIdempotencyKey(ctx, org, "k", "fp", time.Hour, time.Hour)
	require.NoError(t, err)
	require.Equal(t, entrystore.InFlight, res)
	require.Equal(t, first.EffectID, busy.EffectID)

	require.NoError(t, s.CompleteIdempotencyKey(ctx, org, "k", first.EffectID, 200, []byte(`{"id":"x"}`)))
	done, res, err := s.ReserveIdempotencyKey(ctx, org, "k", "other", time.Hour, time.Hour)
	require.NoError(t, err)
	require.Equal(t, entrystore.Completed, res)
	require.Equal(t, "fp", done.Fingerprint, "the stored fingerprint, for the caller to compare")
	require.Equal(t, 200, done.Status)
	require.JSONEq(t, `{"id":"x"}`, string(done.Body))

	// A request that died: its lease is over, the next one takes over
	// with the same effect ID; a completion by the dead one's effect ID
	// still lands only once.
	dead, _, err := s.ReserveIdempotencyKey(ctx, org, "d", "fp", 0, time.Hour)
	require.NoError(t, err)
	took, res, err := s.ReserveIdempotencyKey(ctx, org, "d", "fp", time.Hour, time.Hour)
	require.NoError(t, err)
	require.Equal(t, entrystore.TakenOver, res)
	require.Equal(t, dead.EffectID, took.EffectID)
	_, res, err = s.ReserveIdempotencyKey(ctx, org, "d", "fp", time.Hour, time.Hour)
	require.NoError(t, err)
	require.Equal(t, entrystore.InFlight, res, "the takeover holds a new lease")

	// Released: the next attempt runs again.
	require.NoError(t, s.ReleaseIdempotencyKey(ctx, org, "d", took.EffectID))
	_, res, err = s.ReserveIdempotencyKey(ctx, org, "d", "fp", time.Hour, time.Hour)
	require.NoError(t, err)
	require.Equal(t, entrystore.TakenOver, res)

	// Past its TTL a key is new, and pruning removes it.
	_, _, err = s.ReserveIdempotencyKey(ctx, org, "old", "fp", time.Hour, -time.Second)
	require.NoError(t, err)
	n, err := s.PruneIdempotencyKeys(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	fresh, res, err := s.ReserveIdempotencyKey(ctx, org, "k2", "fp", time.Hour, -time.Second)
	require.NoError(t, err)
	require.Equal(t, entrystore.Reserved, res)
	again, res, err := s.ReserveIdempotencyKey(ctx, org, "k2", "fp2", time.Hour, time.Hour)
	require.NoError(t, err)
	require.Equal(t, entrystore.Reserved, res, "an expired key counts as new")
	require.NotEqual(t, fresh.EffectID, again.EffectID)
}
