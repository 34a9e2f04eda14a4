// Package triage is the child-workflow sample's workflow: TriageTicket
// (childworkflow.TriageWorkflowName), which starts the triage agent as its
// child with adapter.StartChildAgent. It is workflow code, so it lives
// apart from package childworkflow, whose types the starter uses without
// linking the worker's package (adapter).
//
// It imports adapter, adapter/client and childworkflow.
package triage
