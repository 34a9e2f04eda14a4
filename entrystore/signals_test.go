package entrystore_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/pgtest"
)

func TestConsumedSignalUnderAnotherParentIsARedelivery(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	root := f.append(t, "", "root")
	sg, err := f.store.PutSignal(ctx, entrystore.Signal{OrgID: f.org.ID, ExecutionID: f.exec.ID, Name: "user_message"})
	require.NoError(t, err)
	first, err := f.store.ConsumeSignal(ctx, f.org.ID, sg.ID, entrystore.Entry{ParentID: root.ID, Type: "message", Role: "user"})
	require.NoError(t, err)
	later := f.append(t, first.ID, "answer")

	_, err = f.store.ConsumeSignal(ctx, f.org.ID, sg.ID, entrystore.Entry{ParentID: later.ID, Type: "message", Role: "user"})
	require.ErrorIs(t, err, entrystore.ErrSignalConsumed)
	require.ErrorIs(t, err, entrystore.ErrConflict)
	children, _, err := f.store.ListEntries(ctx, f.org.ID, f.exec.ID, entrystore.Page{Limit: 100})
	require.NoError(t, err)
	require.Len(t, children, 3, "the redelivery appended nothing")

	other, err := f.store.PutSignal(ctx, entrystore.Signal{OrgID: f.org.ID, ExecutionID: f.exec.ID, Name: "cancel"})
	require.NoError(t, err)
	require.NoError(t, f.store.MarkSignalsConsumed(ctx, f.org.ID, other.ID))
	_, err = f.store.ConsumeSignal(ctx, f.org.ID, other.ID, entrystore.Entry{ParentID: later.ID, Type: "message", Role: "user"})
	require.ErrorIs(t, err, entrystore.ErrSignalConsumed, "consumed without an entry is consumed too")
}

func TestPutSignalRefusesAnEndedExecution(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	_, err := f.store.Transition(ctx, f.org.ID, f.exec.ID, entrystore.Transition{To: entrystore.StatusCompleted})
	require.NoError(t, err)
	_, err = f.store.PutSignal(ctx, entrystore.Signal{OrgID: f.org.ID, ExecutionID: f.exec.ID, Name: "user_message"})
	require.ErrorIs(t, err, entrystore.ErrExecutionEnded)
	_, err = f.store.PutSignal(ctx, entrystore.Signal{OrgID: f.org.ID, ExecutionID: "5b0d7d8e-7c43-4c49-9d0f-2b6d1b8f0a11", Name: "user_message"})
	require.ErrorIs(t, err, entrystore.ErrNotFound)
}

// TestCompleteUnlessSignalledOrdersWithPutSignal races signals against
// completion: every signal the store accepted is returned by the complete
// that did not happen, and none is accepted after the execution completed.
func TestCompleteUnlessSignalledOrdersWithPutSignal(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	var known []string
	done := entrystore.Transition{To: entrystore.StatusCompleted, StopReason: "end_turn"}

	var wg sync.WaitGroup
	accepted := make(chan string, 20)
	for range 20 {
		wg.Go(func() {
			sg, err := f.store.PutSignal(ctx, entrystore.Signal{OrgID: f.org.ID, ExecutionID: f.exec.ID, Name: "user_message"})
			if err == nil {
				accepted <- sg.ID
				return
			}
			require.ErrorIs(t, err, entrystore.ErrExecutionEnded)
		})
	}
	var completed entrystore.Execution
	require.Eventually(t, func() bool {
		ex, pending, err := f.store.CompleteUnlessSignalled(ctx, f.org.ID, f.exec.ID, "", known, done)
		require.NoError(t, err)
		for _, p := range pending {
			known = append(known, p.ID)
		}
		completed = ex
		return len(pending) == 0
	}, 30*time.Second, time.Millisecond)
	wg.Wait()
	close(accepted)
	require.Equal(t, entrystore.StatusCompleted, completed.Status)
	var ids []string
	for id := range accepted {
		ids = append(ids, id)
	}
	require.ElementsMatch(t, ids, known, "every accepted signal was seen before completing")
}

// TestPutNewSignalStoresOnlyAFirstDelivery: a new signal for a live
// execution is stored, with the execution's traceparent; a repeat of its
// ID, an ended execution and an unknown one store nothing, and leave the
// caller to read why.
func TestPutNewSignalStoresOnlyAFirstDelivery(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	traced, err := f.store.CreateExecution(ctx, entrystore.Execution{OrgID: f.org.ID, Kind: entrystore.DefaultKind,
		Traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"})
	require.NoError(t, err)
	id := "00000000-0000-4000-8000-0000000000a1"
	sg := entrystore.Signal{ID: id, OrgID: f.org.ID, ExecutionID: traced.ID, Name: "user_message", Value: []byte(`{"text":"hi"}`)}
	got, tp, stored, err := f.store.PutNewSignal(ctx, sg)
	require.NoError(t, err)
	require.True(t, stored)
	require.Equal(t, id, got.ID)
	require.Equal(t, traced.ID, got.ExecutionID)
	require.JSONEq(t, `{"text":"hi"}`, string(got.Value))
	require.Equal(t, traced.Traceparent, tp)

	_, _, stored, err = f.store.PutNewSignal(ctx, sg)
	require.NoError(t, err)
	require.False(t, stored, "a repeat of the ID")
	pending, err := f.store.PendingSignals(ctx, f.org.ID, traced.ID)
	require.NoError(t, err)
	require.Len(t, pending, 1, "stored once")

	_, err = f.store.Transition(ctx, f.org.ID, f.exec.ID, entrystore.Transition{To: entrystore.StatusCancelled})
	require.NoError(t, err)
	_, _, stored, err = f.store.PutNewSignal(ctx, entrystore.Signal{OrgID: f.org.ID, ExecutionID: f.exec.ID, Name: "user_message"})
	require.NoError(t, err)
	require.False(t, stored, "an ended execution")
	_, _, stored, err = f.store.PutNewSignal(ctx, entrystore.Signal{OrgID: f.org.ID, ExecutionID: "00000000-0000-4000-8000-0000000000b2", Name: "user_message"})
	require.NoError(t, err)
	require.False(t, stored, "no such execution")
}

// TestCompletionGoesTheWayOfALostTask: a signal a lost workflow task took
// from the inbox and answered hangs under the leaf its re-run would end
// at; completing there is refused and the signal returned, so the re-run
// consumes it again (the same entry) and ends at the answer. Completing
// at that answer, or with the signal known, goes ahead.
func TestCompletionGoesTheWayOfALostTask(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	final := f.append(t, "", "the final answer")
	sg, err := f.store.PutSignal(ctx, entrystore.Signal{OrgID: f.org.ID, ExecutionID: f.exec.ID, Name: "user_message"})
	require.NoError(t, err)
	// The lost task: the message consumed under the final answer, answered.
	msg, err := f.store.ConsumeSignal(ctx, f.org.ID, sg.ID, entrystore.Entry{ParentID: final.ID, Type: "message", Role: "user"})
	require.NoError(t, err)
	answer := f.append(t, msg.ID, "its answer")

	done := entrystore.Transition{To: entrystore.StatusCompleted, StopReason: "end_turn"}
	_, pending, err := f.store.CompleteUnlessSignalled(ctx, f.org.ID, f.exec.ID, final.ID, nil, done)
	require.NoError(t, err)
	require.Len(t, pending, 1, "the re-run must take the message the lost task answered")
	require.Equal(t, sg.ID, pending[0].ID)
	ex, err := f.store.GetExecution(ctx, f.org.ID, f.exec.ID)
	require.NoError(t, err)
	require.NotEqual(t, entrystore.StatusCompleted, ex.Status)

	// The re-run consumes it again under the same leaf: the same entry.
	again, err := f.store.ConsumeSignal(ctx, f.org.ID, sg.ID, entrystore.Entry{ParentID: final.ID, Type: "message", Role: "user"})
	require.NoError(t, err)
	require.Equal(t, msg.ID, again.ID)

	// Known (the agent holds it and ends anyway), it does not hold the end.
	_, pending, err = f.store.CompleteUnlessSignalled(ctx, f.org.ID, f.exec.ID, final.ID, []string{sg.ID}, done)
	require.NoError(t, err)
	require.Empty(t, pending)
	_, err = f.store.Transition(ctx, f.org.ID, f.exec.ID, entrystore.Transition{To: entrystore.StatusRunning})
	require.Error(t, err, "completed")

	// On a fresh execution: completing at the answer, past the signal's
	// entry, goes ahead.
	g := newFixture(t)
	final = g.append(t, "", "the final answer")
	sg, err = g.store.PutSignal(ctx, entrystore.Signal{OrgID: g.org.ID, ExecutionID: g.exec.ID, Name: "user_message"})
	require.NoError(t, err)
	msg, err = g.store.ConsumeSignal(ctx, g.org.ID, sg.ID, entrystore.Entry{ParentID: final.ID, Type: "message", Role: "user"})
	require.NoError(t, err)
	answer = g.append(t, msg.ID, "its answer")
	ex, pending, err = g.store.CompleteUnlessSignalled(ctx, g.org.ID, g.exec.ID, answer.ID, nil, done)
	require.NoError(t, err)
	require.Empty(t, pending)
	require.Equal(t, entrystore.StatusCompleted, ex.Status)
}

// TestConsumeSignalCommonCaseIsOneTransaction: a fresh signal consumed
// with an entry of its execution, continuing its parent, marks the signal
// and inserts the entry in one transaction (one round trip). Every other
// case goes the general way with the signal untouched by the attempt: a
// repeat finds its entry, a parent whose continuation is taken gets a
// fork, a branch's seam moves the entry under the branch, and an entry
// for another execution is refused with the signal left to consume.
func TestConsumeSignalCommonCaseIsOneTransaction(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	root := f.append(t, "", "root")
	put := func() entrystore.Signal {
		sg, err := f.store.PutSignal(ctx, entrystore.Signal{OrgID: f.org.ID, ExecutionID: f.exec.ID, Name: "user_message"})
		require.NoError(t, err)
		return sg
	}
	msg := func(parent string) entrystore.Entry {
		return entrystore.Entry{ExecutionID: f.exec.ID, ParentID: parent, Type: "message", Role: "user"}
	}
	xmins := func(sg entrystore.Signal, e entrystore.Entry) (string, string) {
		var s, en string
		require.NoError(t, f.store.Pool().QueryRow(ctx, `SELECT (SELECT xmin::text FROM agent_signal WHERE id = $1),
			(SELECT xmin::text FROM agent_entry WHERE id = $2)`, sg.ID, e.ID).Scan(&s, &en))
		return s, en
	}

	cfg := f.store.Pool().Config().Copy()
	trips := &pgtest.RoundTrips{}
	cfg.ConnConfig.Tracer = trips
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	require.NoError(t, pool.Ping(ctx))
	counted := entrystore.New(pool)

	sg := put()
	trips.Trips.Store(0)
	first, err := counted.ConsumeSignal(ctx, f.org.ID, sg.ID, msg(root.ID))
	require.NoError(t, err)
	require.Equal(t, int64(1), trips.Trips.Load(), "one round trip")
	require.Equal(t, root.ID, first.ParentID)
	require.Equal(t, "signal/"+sg.ID, first.IdempotencyKey)
	s, e := xmins(sg, first)
	require.Equal(t, s, e, "the mark and the entry: one transaction")
	require.Equal(t, first.ID, f.leaf(t))

	again, err := f.store.ConsumeSignal(ctx, f.org.ID, sg.ID, msg(root.ID))
	require.NoError(t, err)
	require.Equal(t, first.ID, again.ID, "a repeat finds its entry")

	forked, err := f.store.ConsumeSignal(ctx, f.org.ID, put().ID, msg(root.ID))
	require.NoError(t, err)
	require.Equal(t, root.ID, forked.ParentID)
	require.NotEqual(t, first.ID, forked.ID, "root's continuation was taken: a fork beside it")

	_, err = f.store.Pool().Exec(ctx, `UPDATE agent_execution SET branch_from = $2, branch_to = $3 WHERE id = $1`,
		f.exec.ID, forked.ID, first.ID)
	require.NoError(t, err)
	moved, err := f.store.ConsumeSignal(ctx, f.org.ID, put().ID, msg(forked.ID))
	require.NoError(t, err)
	require.Equal(t, first.ID, moved.ParentID, "the seam moves the entry under the branch")

	other, err := f.store.CreateExecution(ctx, entrystore.Execution{OrgID: f.org.ID, Kind: entrystore.DefaultKind})
	require.NoError(t, err)
	stray := put()
	_, err = f.store.ConsumeSignal(ctx, f.org.ID, stray.ID, entrystore.Entry{ExecutionID: other.ID, Type: "message", Role: "user"})
	require.ErrorIs(t, err, entrystore.ErrInvalid)
	got, err := f.store.GetSignal(ctx, f.org.ID, stray.ID)
	require.NoError(t, err)
	require.False(t, got.Consumed, "a refused consumption leaves the signal")
	taken, err := f.store.ConsumeSignal(ctx, f.org.ID, stray.ID, msg(moved.ID))
	require.NoError(t, err)
	require.Equal(t, moved.ID, taken.ParentID)
}
