package childworkflow

// TaskQueue is the child-workflow sample's task queue: the parent and the
// child agent run on it.
const TaskQueue = "agentree-childworkflow"

// TriageWorkflowName is triage.Workflow's workflow type.
const TriageWorkflowName = "TriageTicket"

// TriageInput is triage.Workflow's input.
type TriageInput struct {
	// OrgID owns the child agent's execution.
	OrgID  string
	Ticket Ticket
}

// Ticket is a support ticket.
type Ticket struct {
	ID, Customer, Subject, Body string
}

// TriageOutput is triage.Workflow's result.
type TriageOutput struct {
	// AgentExecutionID is the child agent's execution, for its conversation.
	AgentExecutionID string
	Verdict          Verdict
	// Action is what the workflow did about the ticket.
	Action string
}

// ExampleTickets are the tickets the starter triages: an outage at a
// customer with a support contract, and a question from a free one.
var ExampleTickets = []Ticket{
	{ID: "T-1042", Customer: "acme", Subject: "Checkout API is down for all our stores",
		Body: "Since 09:12 UTC every checkout call returns 500. Our stores cannot take orders."},
	{ID: "T-1043", Customer: "globex", Subject: "Typo on the invoice page",
		Body: `The invoice page says "recieved". Not urgent.`},
}
