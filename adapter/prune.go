package adapter

import (
	"context"
	"errors"
	"fmt"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agentree/agentree/entrystore"
)

// Pruning (issue 16): the plugin's worker runs PruneWorkflow daily from a
// Temporal Schedule (visible in the Temporal UI as agentree-prune-<queue>),
// and `agentree prune` runs the same Prune by hand.

// The prune workflow and activity names.
const (
	PruneWorkflowName = "agentree.Prune"
	PruneActivityName = "agentree.PruneStore"
)

// PruneScheduleID is the ID of the prune schedule of the workers on queue.
func PruneScheduleID(queue string) string { return "agentree-prune-" + queue }

// PruneInput is what one prune removes; see entrystore.PruneOptions.
type PruneInput struct {
	OrgID     string        `json:"orgId,omitempty"`
	OlderThan time.Duration `json:"olderThan,omitempty"`
	DryRun    bool          `json:"dryRun,omitempty"`
}

// PruneResult is what one prune removed.
type PruneResult struct {
	entrystore.PruneStats
	// Histories is how many Temporal runs were deleted.
	Histories int `json:"histories"`
}

// PruneWorkflow runs one prune as an activity.
func PruneWorkflow(ctx workflow.Context, in PruneInput) (PruneResult, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Hour, HeartbeatTimeout: time.Minute,
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 3},
	})
	var out PruneResult
	err := workflow.ExecuteActivity(actx, PruneActivityName, in).Get(ctx, &out)
	return out, err
}

// Prune runs entrystore.Prune with the plugin's defaults, then deletes the
// Temporal histories of the executions it removed.
func (a *Activities) Prune(ctx context.Context, in PruneInput) (PruneResult, error) {
	stats, err := a.store.Prune(ctx, entrystore.PruneOptions{OrgID: in.OrgID, OlderThan: in.OlderThan, DryRun: in.DryRun, Defaults: a.retention})
	if err != nil {
		return PruneResult{}, err
	}
	out := PruneResult{PruneStats: stats}
	if in.DryRun || len(stats.ExecutionIDs) == 0 {
		return out, nil
	}
	out.Histories, err = DeleteHistories(ctx, activity.GetClient(ctx), activity.GetInfo(ctx).WorkflowNamespace, stats.ExecutionIDs, func() {
		activity.RecordHeartbeat(ctx)
	})
	return out, err
}

// DeleteHistories deletes every run (the continue-as-new chain) of each
// execution's workflow and returns how many runs it deleted; a run gone
// already (namespace retention, an earlier prune) counts as done.
func DeleteHistories(ctx context.Context, tc client.Client, namespace string, executionIDs []string, progress func()) (int, error) {
	deleted := 0
	for _, id := range executionIDs {
		runID := ""
		for {
			d, err := tc.DescribeWorkflowExecution(ctx, id, runID)
			var nf *serviceerror.NotFound
			if errors.As(err, &nf) {
				break
			}
			if err != nil {
				return deleted, fmt.Errorf("adapter: prune history %s: %w", id, err)
			}
			run := d.GetWorkflowExecutionInfo().GetExecution()
			prev := previousRun(ctx, tc, id, run.GetRunId())
			_, err = tc.WorkflowService().DeleteWorkflowExecution(ctx, &workflowservice.DeleteWorkflowExecutionRequest{
				Namespace: namespace, WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: id, RunId: run.GetRunId()},
			})
			if err != nil && !errors.As(err, &nf) {
				return deleted, fmt.Errorf("adapter: prune history %s: %w", id, err)
			}
			deleted++
			if progress != nil {
				progress()
			}
			if prev == "" {
				break
			}
			runID = prev
		}
	}
	return deleted, nil
}

// previousRun is the run a run continued from ("" for the first).
func previousRun(ctx context.Context, tc client.Client, id, runID string) string {
	it := tc.GetWorkflowHistory(ctx, id, runID, false, 0)
	if !it.HasNext() {
		return ""
	}
	first, err := it.Next()
	if err != nil {
		return ""
	}
	return first.GetWorkflowExecutionStartedEventAttributes().GetContinuedExecutionRunId()
}

// ensurePruneSchedule creates the daily prune schedule of the workers on
// queue unless it exists.
func ensurePruneSchedule(ctx context.Context, tc client.Client, queue string, every time.Duration) error {
	_, err := tc.ScheduleClient().Create(ctx, client.ScheduleOptions{
		ID:   PruneScheduleID(queue),
		Spec: client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: every}}},
		Action: &client.ScheduleWorkflowAction{
			ID: PruneScheduleID(queue), Workflow: PruneWorkflowName, TaskQueue: queue, Args: []any{PruneInput{}},
		},
		Overlap: 0, // skip a run while one is under way (the default policy)
		Note:    "Agentree: removes ended executions past their organization's retention (agentree prune).",
	})
	if errors.Is(err, temporal.ErrScheduleAlreadyRunning) {
		return nil
	}
	return err
}
