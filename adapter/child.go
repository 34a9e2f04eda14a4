package adapter

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/workflow"

	"github.com/agentree/agentree/adapter/client"
	"github.com/agentree/agentree/entrystore"
)

// PrepareExecutionActivity writes an execution's row and first entry for a
// workflow that starts an agent as its child.
const PrepareExecutionActivity = "agentree.PrepareExecution"

// PrepareInput is PrepareExecutionActivity's input: the request and the
// task queue the child runs on, recorded on its row.
type PrepareInput struct {
	Request   client.StartRequest
	TaskQueue string
}

// PrepareExecution implements PrepareExecutionActivity. The request's
// ExecutionID, chosen by the calling workflow, makes retries repeat-safe.
func (a *Activities) PrepareExecution(ctx context.Context, in PrepareInput) (SegmentInput, error) {
	_, first, err := client.Prepare(ctx, a.store, in.Request, in.TaskQueue)
	return first, storeError(err)
}

// StartChildAgent starts an agent execution as a child workflow of the
// calling workflow and returns the child's future (its result is a Result,
// after every continue-as-new) and the execution ID. The worker running the
// caller must have the plugin (or Register). req.OrgID and req.Kind are
// required.
func StartChildAgent(ctx workflow.Context, req client.StartRequest) (workflow.ChildWorkflowFuture, string, error) {
	if req.ExecutionID == "" {
		var id string
		if err := workflow.SideEffect(ctx, func(workflow.Context) any { return uuid.NewString() }).Get(&id); err != nil {
			return nil, "", err
		}
		req.ExecutionID = id
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: storeWriteTimeout, RetryPolicy: infraRetry()})
	var first SegmentInput
	in := PrepareInput{Request: req, TaskQueue: workflow.GetInfo(ctx).TaskQueueName}
	if err := workflow.ExecuteActivity(actx, PrepareExecutionActivity, in).Get(ctx, &first); err != nil {
		return nil, req.ExecutionID, fmt.Errorf("adapter: start child agent: %w", err)
	}
	copts := workflow.ChildWorkflowOptions{
		WorkflowID:            req.ExecutionID,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_REQUEST_CANCEL,
	}
	// The child carries the search attributes when its parent does: a
	// cluster that refused them for the parent refuses them for it too.
	if workflow.GetTypedSearchAttributes(ctx).ContainsKey(client.SearchOrg) {
		copts.TypedSearchAttributes = client.SearchAttributes(entrystore.Execution{
			OrgID: req.OrgID, Kind: req.Kind, DefinitionID: req.DefinitionID, Status: entrystore.StatusPending,
		})
	}
	cctx := workflow.WithChildOptions(ctx, copts)
	return workflow.ExecuteChildWorkflow(cctx, req.Kind, first), req.ExecutionID, nil
}
