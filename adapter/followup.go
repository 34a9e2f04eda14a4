package adapter

import (
	"context"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/workflow"

	aclient "github.com/agentree/agentree/adapter/client"
)

// followUp is aclient.FollowUpWorkflow: it waits on a Temporal timer until
// the follow-up is due — no workflow task meanwhile, whatever the wait —
// and then delivers it. Cancelled (aclient.CancelFollowUp), it ends
// without delivering.
func followUp(ctx workflow.Context, in aclient.FollowUpInput) error {
	if d := in.At.Sub(workflow.Now(ctx)); d > 0 {
		if err := workflow.Sleep(ctx, d); err != nil {
			return nil // cancelled: the store says so already
		}
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: storeWriteTimeout,
		RetryPolicy:         infraRetry(),
	})
	return workflow.ExecuteActivity(actx, aclient.DeliverFollowUpActivity, in).Get(ctx, nil)
}

// deliverFollowUp is aclient.DeliverFollowUpActivity.
func (o *Options) deliverFollowUp(ctx context.Context, in aclient.FollowUpInput) error {
	_, err := aclient.NewClient(activity.GetClient(ctx), o.Store, "").DeliverFollowUp(ctx, in)
	return storeError(err)
}
