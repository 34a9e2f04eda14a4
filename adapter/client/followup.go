package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
)

// Scheduled follow-ups (issue 40): a user message delivered to the same
// execution at a time, so it continues the same tree. Each is a small
// workflow of its own, FollowUpWorkflow, that waits on a Temporal timer
// and then delivers the message as a client's is (DeliverFollowUp: the
// inbox first, then the signal). Not a timer in the execution's own runs:
// those end at every few checkpoints, and a timer there would have to be
// handed from run to run and fire in the middle of a turn; a workflow of
// its own costs the execution's history nothing, waits with no task while
// it waits, survives worker restarts, and is cancelled alone.

// FollowUpWorkflow is the workflow type of a scheduled follow-up; its
// workflow ID is FollowUpWorkflowID.
const FollowUpWorkflow = "agentree.follow-up"

// DeliverFollowUpActivity delivers a due follow-up (FollowUpInput).
const DeliverFollowUpActivity = "agentree.deliver-follow-up"

// FollowUpInput is FollowUpWorkflow's input and its activity's.
type FollowUpInput struct {
	OrgID, ExecutionID, FollowUpID string
	At                             time.Time
}

// FollowUpWorkflowID is the workflow ID of follow-up id.
func FollowUpWorkflowID(id string) string { return "follow-up-" + id }

// ErrNotScheduled: the follow-up was delivered or cancelled already.
var ErrNotScheduled = errors.New("follow-up is no longer scheduled")

// ScheduleFollowUp stores a follow-up of the execution (id: a keyed
// request's effect ID; "" makes one) and starts its workflow. A repeat
// with the same id returns the stored follow-up and starts nothing new.
func (c *Client) ScheduleFollowUp(ctx context.Context, id, orgID, executionID, text string, at time.Time) (entrystore.FollowUp, error) {
	ex, err := c.es.GetExecution(ctx, orgID, executionID)
	if err != nil {
		return entrystore.FollowUp{}, err
	}
	if ex.Status.Terminal() || ex.Status == entrystore.StatusCancelling {
		return entrystore.FollowUp{}, fmt.Errorf("client: schedule follow-up %s: %w (%s)", executionID, ErrTerminal, ex.Status)
	}
	if id == "" {
		id = uuid.NewString()
	}
	f, err := c.es.PutFollowUp(ctx, entrystore.FollowUp{ID: id, OrgID: orgID, ExecutionID: executionID, Text: text, DeliverAt: at.UTC()})
	if err != nil {
		return f, fmt.Errorf("client: schedule follow-up: %w", err)
	}
	_, err = c.tc.ExecuteWorkflow(inExecutionTrace(ctx, ex), client.StartWorkflowOptions{
		ID: FollowUpWorkflowID(f.ID), TaskQueue: c.taskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
	}, FollowUpWorkflow, FollowUpInput{OrgID: orgID, ExecutionID: executionID, FollowUpID: f.ID, At: f.DeliverAt})
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if err != nil && !errors.As(err, &started) {
		return f, fmt.Errorf("client: schedule follow-up: %w", err)
	}
	return f, nil
}

// CancelFollowUp cancels a scheduled follow-up: it will not be delivered.
// One delivered (or cancelled) already is ErrNotScheduled.
func (c *Client) CancelFollowUp(ctx context.Context, orgID, executionID, id string) (entrystore.FollowUp, error) {
	f, err := c.es.SettleFollowUp(ctx, orgID, executionID, id, entrystore.FollowUpCancelled, "", "")
	if errors.Is(err, entrystore.ErrConflict) {
		return f, fmt.Errorf("client: cancel follow-up %s: %w (%s)", id, ErrNotScheduled, f.Status)
	}
	if err != nil {
		return f, fmt.Errorf("client: cancel follow-up: %w", err)
	}
	// The row decides (a delivery finds it cancelled); ending the workflow
	// only spares it a wake for nothing.
	err = c.tc.CancelWorkflow(ctx, FollowUpWorkflowID(id), "")
	var nf *serviceerror.NotFound
	if err != nil && !errors.As(err, &nf) {
		return f, fmt.Errorf("client: cancel follow-up: %w", err)
	}
	return f, nil
}

// DeliverFollowUp delivers a due follow-up as a user message, through the
// inbox as a client's message goes (SignalOnce, the follow-up's ID as the
// inbox row's, so a retry delivers it once). The row is claimed first: a
// cancel that came before wins, and one that comes after finds it
// delivered. An execution that has ended leaves it undelivered, saying so.
func (c *Client) DeliverFollowUp(ctx context.Context, in FollowUpInput) (entrystore.FollowUp, error) {
	f, err := c.es.SettleFollowUp(ctx, in.OrgID, in.ExecutionID, in.FollowUpID, entrystore.FollowUpDelivered, in.FollowUpID, "")
	if errors.Is(err, entrystore.ErrConflict) {
		return f, nil // cancelled, or found its execution ended
	}
	if err != nil {
		return f, fmt.Errorf("client: deliver follow-up: %w", err)
	}
	value, _ := json.Marshal(agentsdk.UserMessage{Text: f.Text})
	_, err = c.SignalOnce(ctx, f.ID, in.OrgID, in.ExecutionID, agentsdk.SignalUserMessage, value)
	if errors.Is(err, ErrTerminal) {
		return c.es.SettleFollowUp(ctx, in.OrgID, in.ExecutionID, in.FollowUpID, entrystore.FollowUpUndelivered, "",
			"the execution had ended when the follow-up was due")
	}
	if err != nil {
		return f, fmt.Errorf("client: deliver follow-up: %w", err)
	}
	return f, nil
}
