// Package childworkflow shows an ordinary Temporal workflow that uses an
// agent as one of its steps. triage.Workflow starts a triage agent (the
// react-agent with a customer-lookup tool) as a child workflow with
// adapter.StartChildAgent, reads the verdict from the agent's result, and
// decides in plain, deterministic workflow code what to do: page the
// on-call engineer or queue the ticket.
//
// The agent's conversation lives in Postgres like any execution's; the
// parent holds only the child's short result.
package childworkflow
