package client

import (
	"context"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/wire"
)

// BranchSummaryInput is wire.BranchSummaryInput.
type BranchSummaryInput = wire.BranchSummaryInput

// SummariseBranch runs the branch-summary workflow of the execution ex on
// its queue (one model call, durable, its usage counted) and waits for the
// branch_summary entry's ID. The workflow's ID is keyed by in.Key, so a
// repeat joins the first run or finds its result.
func (c *Client) SummariseBranch(ctx context.Context, ex entrystore.Execution, in BranchSummaryInput) (string, error) {
	// No search attributes: it is not an execution, and must not be
	// listed as one. A repeat after it ended runs it again, and its
	// activity finds the entry by its key.
	opts := client.StartWorkflowOptions{
		ID: "agentree-branch-summary/" + ex.ID + "/" + in.Key, TaskQueue: ex.Queue, WorkflowTaskTimeout: WorkflowTaskTimeout,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
	}
	run, err := c.tc.ExecuteWorkflow(inExecutionTrace(ctx, ex), opts, wire.BranchSummaryWorkflow, in)
	if err != nil {
		return "", fmt.Errorf("client: branch summary: %w", err)
	}
	var out wire.BranchSummaryResult
	if err := run.Get(ctx, &out); err != nil {
		return "", fmt.Errorf("client: branch summary: %w", err)
	}
	return out.EntryID, nil
}
