package entrystore_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/entrystore"
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
		ex, pending, err := f.store.CompleteUnlessSignalled(ctx, f.org.ID, f.exec.ID, known, done)
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
