package adapter

import (
	"context"

	"go.temporal.io/sdk/workflow"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/internal/step"
	"github.com/agentree/agentree/internal/wire"
)

// SummariseBranchActivity is the activity that writes a branch's summary.
const SummariseBranchActivity = "agentree.SummariseBranch"

// branchSummary is wire.BranchSummaryWorkflow: the one model call a branch
// with summarize makes, as an activity with the model calls' options (its
// retries, heartbeats and outage limit), apart from the execution's own
// workflow, which waits for input meanwhile and keeps its short history.
func (o *Options) branchSummary(ctx workflow.Context, in wire.BranchSummaryInput) (wire.BranchSummaryResult, error) {
	var out wire.BranchSummaryResult
	actx := workflow.WithActivityOptions(ctx, o.modelActivityOptions())
	err := workflow.ExecuteActivity(actx, SummariseBranchActivity, in).Get(ctx, &out)
	return out, err
}

// SummariseBranch writes a branch's summary (step.SummariseBranch).
func (a *Activities) SummariseBranch(ctx context.Context, in wire.BranchSummaryInput) (wire.BranchSummaryResult, error) {
	stop := startHeartbeat(ctx, a.modelHeartbeat, previousFailures(ctx, 0))
	defer stop()
	mctx, cancel := context.WithTimeout(ctx, a.modelTimeout)
	defer cancel()
	e, err := step.SummariseBranch(mctx, a.deps, step.BranchSummaryInput{
		OrgID: in.OrgID, ExecutionID: in.ExecutionID, EntryID: in.EntryID, AbandonedLeafID: in.AbandonedLeafID, Model: in.Model, Key: in.Key,
	})
	if _, ok := agentsdk.AsModelError(err); err != nil && !ok {
		return wire.BranchSummaryResult{}, storeError(err)
	}
	return wire.BranchSummaryResult{EntryID: e.ID}, err
}

// BranchSummaryWorkflow is wire.BranchSummaryWorkflow.
const BranchSummaryWorkflow = wire.BranchSummaryWorkflow
