package adapter_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/temporaltest"
)

// fenceSeen is what a probe found on its context.
type fenceSeen struct {
	Local bool
	Fence int64 // UnixNano; 0: none
}

// TestLocalActivitiesCarryTheirTasksFence: on a worker of the plugin's
// client, a local activity's store writes are fenced at the time of the
// workflow task that scheduled it (workflow.Now there), so a task the
// server timed out cannot branch where a newer one went on
// (entrystore.TestStaleWriterCannotBranch); an activity's are not fenced.
func TestLocalActivitiesCarryTheirTasksFence(t *testing.T) {
	h := newHarness(t, adapter.Options{}, true)
	plugin, err := adapter.NewPlugin(adapter.Options{Store: h.es, Agents: []agentsdk.Agent{react.New(react.Options{})}})
	require.NoError(t, err)
	tc, err := client.Dial(client.Options{HostPort: temporaltest.Address(t), Plugins: []client.Plugin{plugin}, Logger: temporaltest.Logger{}})
	require.NoError(t, err)
	t.Cleanup(tc.Close)

	probe := func(ctx context.Context) (fenceSeen, error) {
		at, ok := entrystore.WriteFence(ctx)
		seen := fenceSeen{Local: activity.GetInfo(ctx).IsLocalActivity}
		if ok {
			seen.Fence = at.UnixNano()
		}
		return seen, nil
	}
	queue := "fence-test-" + uuid.NewString()[:8]
	w := worker.New(tc, queue, worker.Options{})
	w.RegisterActivityWithOptions(probe, activity.RegisterOptions{Name: "fence-probe"})
	w.RegisterWorkflowWithOptions(func(ctx workflow.Context) ([]fenceSeen, error) {
		scheduled := workflow.Now(ctx).UnixNano()
		var local, remote fenceSeen
		lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{StartToCloseTimeout: 10 * time.Second})
		if err := workflow.ExecuteLocalActivity(lctx, "fence-probe").Get(ctx, &local); err != nil {
			return nil, err
		}
		actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
		if err := workflow.ExecuteActivity(actx, "fence-probe").Get(ctx, &remote); err != nil {
			return nil, err
		}
		return []fenceSeen{{Fence: scheduled}, local, remote}, nil
	}, workflow.RegisterOptions{Name: "fence-workflow"})
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, err := tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "fence-" + uuid.NewString(), TaskQueue: queue}, "fence-workflow")
	require.NoError(t, err)
	var got []fenceSeen
	require.NoError(t, run.Get(ctx, &got))
	require.Len(t, got, 3)
	require.True(t, got[1].Local)
	require.NotZero(t, got[0].Fence)
	require.Equal(t, got[0].Fence, got[1].Fence, "the local activity is fenced at its workflow task's time")
	require.False(t, got[2].Local)
	require.Zero(t, got[2].Fence, "an activity carries no fence")
}
