package entrystore_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/entrystore"
)

func TestCreateExecution(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	require.Equal(t, entrystore.StatusPending, f.exec.Status)
	require.Equal(t, 1, f.exec.Version)
	require.Equal(t, entrystore.DefaultQueue, f.exec.Queue)
	require.Equal(t, time.UTC, f.exec.CreatedAt.Location())

	id := "0b8e3a52-8a6e-4d3c-9d1e-7a3f2c1b0e99"
	e, err := f.store.CreateExecution(ctx, entrystore.Execution{ID: id, OrgID: f.org.ID, Kind: "k",
		ParentID: f.exec.ID, Config: []byte(`{"model":"m","max_steps":5}`), Input: []byte(`"hi"`)})
	require.NoError(t, err)
	require.Equal(t, id, e.ID)
	require.Equal(t, f.exec.ID, e.ParentID)
	require.JSONEq(t, `{"model":"m","max_steps":5}`, string(e.Config))
	require.Nil(t, e.Output)

	_, err = f.store.CreateExecution(ctx, entrystore.Execution{ID: id, OrgID: f.org.ID, Kind: "k"})
	require.ErrorIs(t, err, entrystore.ErrConflict)
	_, err = f.store.CreateExecution(ctx, entrystore.Execution{OrgID: f.org.ID})
	require.ErrorIs(t, err, entrystore.ErrInvalid)
	_, err = f.store.CreateExecution(ctx, entrystore.Execution{OrgID: f.org.ID, Kind: "k", DefinitionID: id})
	require.ErrorIs(t, err, entrystore.ErrInvalid)
	_, err = f.store.GetExecution(ctx, f.org.ID, "not-a-uuid")
	require.ErrorIs(t, err, entrystore.ErrNotFound)

	require.NoError(t, f.store.AddSteps(ctx, f.org.ID, id, 3))
	require.NoError(t, f.store.AddSteps(ctx, f.org.ID, id, 4))
	got, err := f.store.GetExecution(ctx, f.org.ID, id)
	require.NoError(t, err)
	require.Equal(t, 7, got.StepCount)
	require.Equal(t, 1, got.Version, "counting steps does not race status changes")
}

func TestStatusTransitions(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	org, id := f.org.ID, f.exec.ID

	running, err := f.store.UpdateStatus(ctx, org, id, 1, entrystore.Transition{To: entrystore.StatusRunning})
	require.NoError(t, err)
	require.Equal(t, 2, running.Version)
	require.NotNil(t, running.StartedAt)
	require.Nil(t, running.CompletedAt)

	_, err = f.store.UpdateStatus(ctx, org, id, 1, entrystore.Transition{To: entrystore.StatusWaiting})
	require.ErrorIs(t, err, entrystore.ErrConflict, "stale version")

	waiting, err := f.store.Transition(ctx, org, id, entrystore.Transition{To: entrystore.StatusWaiting})
	require.NoError(t, err)
	again, err := f.store.Transition(ctx, org, id, entrystore.Transition{To: entrystore.StatusRunning})
	require.NoError(t, err)
	require.Equal(t, running.StartedAt, again.StartedAt, "started_at is set once")
	same, err := f.store.Transition(ctx, org, id, entrystore.Transition{To: entrystore.StatusRunning})
	require.NoError(t, err)
	require.Equal(t, again.Version, same.Version, "same status is a no-op")
	require.Greater(t, again.Version, waiting.Version)

	_, err = f.store.Transition(ctx, org, id, entrystore.Transition{To: entrystore.StatusCancelling})
	require.NoError(t, err)
	_, err = f.store.Transition(ctx, org, id, entrystore.Transition{To: entrystore.StatusRunning})
	require.ErrorIs(t, err, entrystore.ErrConflict, "cancelling may only end")

	done, err := f.store.Transition(ctx, org, id, entrystore.Transition{
		To: entrystore.StatusCompleted, StopReason: "end_turn", Output: []byte(`{"answer":42}`)})
	require.NoError(t, err)
	require.NotNil(t, done.CompletedAt)
	require.Equal(t, "end_turn", done.StopReason)
	require.JSONEq(t, `{"answer":42}`, string(done.Output))

	for _, to := range []entrystore.Status{entrystore.StatusRunning, entrystore.StatusFailed, entrystore.StatusCancelling} {
		_, err = f.store.Transition(ctx, org, id, entrystore.Transition{To: to})
		require.ErrorIs(t, err, entrystore.ErrConflict, "terminal is final: %s", to)
		_, err = f.store.UpdateStatus(ctx, org, id, done.Version, entrystore.Transition{To: to})
		require.ErrorIs(t, err, entrystore.ErrConflict, "terminal is final: %s", to)
	}
	final, err := f.store.Transition(ctx, org, id, entrystore.Transition{To: entrystore.StatusCompleted})
	require.NoError(t, err)
	require.Equal(t, done, final)
	_, err = f.store.Transition(ctx, org, id, entrystore.Transition{To: "BOGUS"})
	require.ErrorIs(t, err, entrystore.ErrInvalid)
}

func TestConcurrentTransitionsAllLand(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	_, err := f.store.Transition(ctx, f.org.ID, f.exec.ID, entrystore.Transition{To: entrystore.StatusRunning})
	require.NoError(t, err)
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Go(func() {
			to := entrystore.StatusWaiting
			if i%2 == 0 {
				to = entrystore.StatusRunning
			}
			_, errs[i] = f.store.Transition(ctx, f.org.ID, f.exec.ID, entrystore.Transition{To: to})
		})
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
}

func TestListExecutionsFiltersAndPages(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	def, err := f.store.CreateDefinition(ctx, entrystore.Definition{OrgID: f.org.ID, Name: "D", Slug: "d"})
	require.NoError(t, err)
	var mine []string
	for range 7 {
		e, err := f.store.CreateExecution(ctx, entrystore.Execution{OrgID: f.org.ID, Kind: "special", DefinitionID: def.ID})
		require.NoError(t, err)
		mine = append(mine, e.ID)
	}
	_, err = f.store.Transition(ctx, f.org.ID, mine[0], entrystore.Transition{To: entrystore.StatusRunning})
	require.NoError(t, err)

	for _, flt := range []entrystore.ExecutionFilter{{Kind: "special"}, {DefinitionID: def.ID}} {
		var seen []string
		page := entrystore.Page{Limit: 3}
		for {
			es, next, err := f.store.ListExecutions(ctx, f.org.ID, flt, page)
			require.NoError(t, err)
			for _, e := range es {
				seen = append(seen, e.ID)
			}
			if next == "" {
				break
			}
			page.Cursor = next
		}
		require.Len(t, seen, 7)
		for i := range seen {
			require.Equal(t, mine[len(mine)-1-i], seen[i], "newest first")
		}
	}
	es, _, err := f.store.ListExecutions(ctx, f.org.ID, entrystore.ExecutionFilter{Status: entrystore.StatusRunning}, entrystore.Page{})
	require.NoError(t, err)
	require.Len(t, es, 1)
	require.Equal(t, mine[0], es[0].ID)
	es, _, err = f.store.ListExecutions(ctx, f.org.ID, entrystore.ExecutionFilter{ParentID: f.exec.ID}, entrystore.Page{})
	require.NoError(t, err)
	require.Empty(t, es)
	_, _, err = f.store.ListExecutions(ctx, f.org.ID, entrystore.ExecutionFilter{Status: "NOPE"}, entrystore.Page{})
	require.ErrorIs(t, err, entrystore.ErrInvalid)
}

func TestPaginationIsStableUnderConcurrentInserts(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	var before []string
	parent := ""
	for i := range 60 {
		e := f.append(t, parent, fmt.Sprintf("pre/%d", i))
		parent = e.ID
		before = append(before, e.ID)
	}

	stop := make(chan struct{})
	done := make(chan error)
	go func() {
		i := 0
		for {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			_, _, err := f.store.AppendEntry(ctx, entrystore.Entry{OrgID: f.org.ID, ExecutionID: f.exec.ID,
				Type: "message", IdempotencyKey: fmt.Sprintf("during/%d", i)})
			if err != nil {
				done <- err
				return
			}
			i++
		}
	}()

	seen := map[string]int{}
	var order []int64
	page := entrystore.Page{Limit: 7}
	for {
		es, next, err := f.store.ListEntries(ctx, f.org.ID, f.exec.ID, page)
		require.NoError(t, err)
		for _, e := range es {
			seen[e.ID]++
			order = append(order, e.Seq)
		}
		if next == "" || len(order) > 400 {
			break
		}
		page.Cursor = next
	}
	close(stop)
	require.NoError(t, <-done)

	for _, id := range before {
		require.Equal(t, 1, seen[id], "every row that existed is seen exactly once")
	}
	for id, n := range seen {
		require.Equal(t, 1, n, "no row twice: %s", id)
	}
	for i := 1; i < len(order); i++ {
		require.Less(t, order[i-1], order[i], "arrival order")
	}

	for _, bad := range []string{"%%%", "eyJ4IjoxfQ", "bm90IGpzb24"} {
		_, _, err := f.store.ListEntries(ctx, f.org.ID, f.exec.ID, entrystore.Page{Cursor: bad})
		require.ErrorIs(t, err, entrystore.ErrInvalid, bad)
		_, _, err = f.store.ListExecutions(ctx, f.org.ID, entrystore.ExecutionFilter{}, entrystore.Page{Cursor: bad})
		require.ErrorIs(t, err, entrystore.ErrInvalid, bad)
	}
}

func TestGetExecutionSettingsReadsStatusAndConfigOnly(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	ex, err := f.store.CreateExecution(ctx, entrystore.Execution{OrgID: f.org.ID, Kind: "react-agent",
		Config: []byte(`{"maxTurns": 3}`), Input: []byte(`{"userPrompt": "long"}`)})
	require.NoError(t, err)
	got, err := f.store.GetExecutionSettings(ctx, f.org.ID, ex.ID)
	require.NoError(t, err)
	require.Equal(t, entrystore.StatusPending, got.Status)
	require.JSONEq(t, `{"maxTurns": 3}`, string(got.Config))
	other, err := f.store.CreateOrg(ctx, "other", "")
	require.NoError(t, err)
	_, err = f.store.GetExecutionSettings(ctx, other.ID, ex.ID)
	require.ErrorIs(t, err, entrystore.ErrNotFound, "another org's execution")
}
