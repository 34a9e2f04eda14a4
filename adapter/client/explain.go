package client

import (
	"context"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
)

// ExplainWorkflow is the workflow type that makes an explanation
// (entrystore.Explanation): one explain-model call on a worker, so the
// call outlives the gateway that asked for it and is retried there.
const ExplainWorkflow = "agentree.Explain"

// ExplainInput names the explanation to make: its row holds the model
// and the replay to read, so the workflow carries only the reference.
type ExplainInput struct {
	OrgID         string `json:"orgId"`
	ExplanationID string `json:"explanationId"`
}

// ExplainWorkflowID is the workflow ID of an explanation's workflow.
func ExplainWorkflowID(explanationID string) string { return "agentree-explain-" + explanationID }

// Explain starts the workflow that makes a pending explanation on the
// client's task queue. It is safe to repeat: a running workflow of the
// explanation is used as it is, and one that ended without recording the
// explanation (its worker lost it) runs again.
func (c *Client) Explain(ctx context.Context, in ExplainInput) error {
	_, err := c.tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: ExplainWorkflowID(in.ExplanationID), TaskQueue: c.taskQueue, WorkflowTaskTimeout: WorkflowTaskTimeout,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
	}, ExplainWorkflow, in)
	if err != nil {
		return fmt.Errorf("client: start explanation %s: %w", in.ExplanationID, err)
	}
	return nil
}
