package childworkflow

import (
	"encoding/json"
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/agentsdk/react"
)

// TaskQueue is the child-workflow sample's task queue: the parent and the
// child agent run on it.
const TaskQueue = "agentree-childworkflow"

// TriageWorkflowName is TriageWorkflow's workflow type.
const TriageWorkflowName = "TriageTicket"

// TriageInput is TriageWorkflow's input.
type TriageInput struct {
	// OrgID owns the child agent's execution.
	OrgID  string
	Ticket Ticket
}

// Ticket is a support ticket.
type Ticket struct {
	ID, Customer, Subject, Body string
}

// TriageOutput is TriageWorkflow's result.
type TriageOutput struct {
	// AgentExecutionID is the child agent's execution, for its conversation.
	AgentExecutionID string
	Verdict          Verdict
	// Action is what the workflow did about the ticket.
	Action string
}

// TriageWorkflow asks a triage agent for a verdict on the ticket and acts
// on it. The agent judges; the workflow decides, so the decision rule is
// code that tests and replays exactly.
func TriageWorkflow(ctx workflow.Context, in TriageInput) (TriageOutput, error) {
	meta, _ := json.Marshal(map[string]string{"ticketId": in.Ticket.ID, "workflowId": workflow.GetInfo(ctx).WorkflowExecution.ID})
	child, executionID, err := adapter.StartChildAgent(ctx, adapter.StartRequest{
		OrgID:      in.OrgID,
		Kind:       react.Kind,
		Config:     AgentConfig(),
		UserPrompt: TriagePrompt(in.Ticket),
		Metadata:   meta,
	})
	if err != nil {
		return TriageOutput{}, err
	}
	// The child's result arrives after all of its continue-as-new runs.
	var res adapter.Result
	if err := child.Get(ctx, &res); err != nil {
		return TriageOutput{}, fmt.Errorf("triage agent %s: %w", executionID, err)
	}
	out := TriageOutput{AgentExecutionID: executionID, Verdict: ParseVerdict(res.Text)}

	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 30 * time.Second})
	var a *Activities
	if out.Verdict.Severity == SeverityHigh {
		var page PageOutput
		if err := workflow.ExecuteActivity(ctx, a.PageOnCall, PageInput{TicketID: in.Ticket.ID, Summary: out.Verdict.Summary}).Get(ctx, &page); err != nil {
			return out, err
		}
		out.Action = "paged on-call: " + page.IncidentID
		return out, nil
	}
	var queued QueueOutput
	if err := workflow.ExecuteActivity(ctx, a.QueueTicket, QueueInput{TicketID: in.Ticket.ID, Verdict: out.Verdict}).Get(ctx, &queued); err != nil {
		return out, err
	}
	out.Action = "queued in " + queued.Queue
	return out, nil
}

// ExampleTickets are the tickets the starter triages: an outage at a
// customer with a support contract, and a question from a free one.
var ExampleTickets = []Ticket{
	{ID: "T-1042", Customer: "acme", Subject: "Checkout API is down for all our stores",
		Body: "Since 09:12 UTC every checkout call returns 500. Our stores cannot take orders."},
	{ID: "T-1043", Customer: "globex", Subject: "Typo on the invoice page",
		Body: `The invoice page says "recieved". Not urgent.`},
}
