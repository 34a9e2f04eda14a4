package adapter_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/entrystore"
)

// TestPruneScheduleRunsThePrune: a worker with PruneEvery ensures its
// prune schedule (a Temporal Schedule, as the Temporal UI lists it); a run
// of it removes an ended execution past retention — its rows and its
// Temporal history, every run of its continue-as-new chain — and leaves a
// recent one.
func TestPruneScheduleRunsThePrune(t *testing.T) {
	turns := make([]scripted.Turn, 12)
	for i := range turns {
		turns[i] = scripted.Turn{Text: "answer"}
	}
	h := newHarness(t, adapter.Options{Providers: []agentsdk.Provider{scripted.New(scripted.Turns(turns...))},
		PruneEvery: 24 * time.Hour, RunEvents: 12}, false)
	ctx := context.Background()
	old := h.start(agentsdk.Config{Mode: agentsdk.ModeMultiTurn}, "one")
	h.waitStatus(old.ID, entrystore.StatusWaiting, time.Minute)
	for i := range 3 { // a few turns: more than one run
		_, err := h.ac.Signal(ctx, h.org.ID, old.ID, agentsdk.SignalUserMessage, []byte(`{"text":"more"}`))
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			ex, err := h.es.GetExecution(ctx, h.org.ID, old.ID)
			return err == nil && ex.Status == entrystore.StatusWaiting && ex.CheckpointSeq >= i+2
		}, time.Minute, 10*time.Millisecond)
	}
	_, err := h.ac.Cancel(ctx, h.org.ID, old.ID)
	require.NoError(t, err)
	h.waitStatus(old.ID, entrystore.StatusCancelled, time.Minute)
	require.Greater(t, len(h.runs(old.ID)), 1, "the execution continued as new")
	_, err = h.es.Pool().Exec(ctx, `UPDATE agent_execution SET completed_at = now() - interval '40 days' WHERE id = $1`, old.ID)
	require.NoError(t, err)
	recent := h.start(agentsdk.Config{}, "recent")
	h.waitStatus(recent.ID, entrystore.StatusCompleted, time.Minute)

	sched := h.tc.ScheduleClient().GetHandle(ctx, adapter.PruneScheduleID(h.taskQueue))
	t.Cleanup(func() { _ = sched.Delete(context.Background()) })
	var desc *client.ScheduleDescription
	require.Eventually(t, func() bool {
		desc, err = sched.Describe(ctx)
		return err == nil
	}, time.Minute, 20*time.Millisecond, "the worker never created its prune schedule")
	require.Equal(t, 24*time.Hour, desc.Schedule.Spec.Intervals[0].Every)

	require.NoError(t, sched.Trigger(ctx, client.ScheduleTriggerOptions{}))
	require.Eventually(t, func() bool {
		_, err := h.es.GetExecution(ctx, h.org.ID, old.ID)
		return errors.Is(err, entrystore.ErrNotFound)
	}, time.Minute, 20*time.Millisecond, "the scheduled prune never removed the old execution")
	require.Eventually(t, func() bool {
		_, err := h.tc.DescribeWorkflowExecution(ctx, old.ID, "")
		var nf *serviceerror.NotFound
		return errors.As(err, &nf)
	}, time.Minute, 20*time.Millisecond, "its Temporal history is still there")
	ex, err := h.es.GetExecution(ctx, h.org.ID, recent.ID)
	require.NoError(t, err)
	require.Equal(t, entrystore.StatusCompleted, ex.Status)
	_, err = h.tc.DescribeWorkflowExecution(ctx, recent.ID, "")
	require.NoError(t, err, "a recent execution keeps its history")
}
