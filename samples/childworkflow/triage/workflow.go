package triage

import (
	"encoding/json"
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/adapter/client"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/samples/childworkflow"
)

// Workflow asks a triage agent for a verdict on the ticket and acts
// on it. The agent judges; the workflow decides, so the decision rule is
// code that tests and replays exactly.
func Workflow(ctx workflow.Context, in childworkflow.TriageInput) (childworkflow.TriageOutput, error) {
	meta, _ := json.Marshal(map[string]string{"ticketId": in.Ticket.ID, "workflowId": workflow.GetInfo(ctx).WorkflowExecution.ID})
	child, executionID, err := adapter.StartChildAgent(ctx, client.StartRequest{
		OrgID:      in.OrgID,
		Kind:       react.Kind,
		Config:     childworkflow.AgentConfig(),
		UserPrompt: childworkflow.TriagePrompt(in.Ticket),
		Metadata:   meta,
	})
	if err != nil {
		return childworkflow.TriageOutput{}, err
	}
	// The child's result arrives after all of its continue-as-new runs.
	var res client.Result
	if err := child.Get(ctx, &res); err != nil {
		return childworkflow.TriageOutput{}, fmt.Errorf("triage agent %s: %w", executionID, err)
	}
	out := childworkflow.TriageOutput{AgentExecutionID: executionID, Verdict: childworkflow.ParseVerdict(res.Text)}

	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 30 * time.Second})
	var a *childworkflow.Activities
	if out.Verdict.Severity == childworkflow.SeverityHigh {
		var page childworkflow.PageOutput
		if err := workflow.ExecuteActivity(ctx, a.PageOnCall, childworkflow.PageInput{TicketID: in.Ticket.ID, Summary: out.Verdict.Summary}).Get(ctx, &page); err != nil {
			return out, err
		}
		out.Action = "paged on-call: " + page.IncidentID
		return out, nil
	}
	var queued childworkflow.QueueOutput
	if err := workflow.ExecuteActivity(ctx, a.QueueTicket, childworkflow.QueueInput{TicketID: in.Ticket.ID, Verdict: out.Verdict}).Get(ctx, &queued); err != nil {
		return out, err
	}
	out.Action = "queued in " + queued.Queue
	return out, nil
}
