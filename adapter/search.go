package adapter

import (
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agentree/agentree/adapter/client"
	"github.com/agentree/agentree/agentsdk/event"
	"github.com/agentree/agentree/internal/engine"
)

// searchAttributesChange is the workflow change that keeps the
// AgentreeStatus search attribute current: each upsert is a history event,
// so runs recorded before it replay without them.
const searchAttributesChange = "agentree-search-attributes"

// statusAfter is the status a successful store operation leaves the
// execution in, when it changes it — RUNNING (or whatever Begin found),
// WAITING, or the terminal status a Finish recorded — and the execution's
// organization.
func statusAfter(in, out any) (orgID string, status engine.Status, ok bool) {
	switch in := in.(type) {
	case engine.BeginInput:
		if b, ok := out.(*engine.BeginOutput); ok && b.Status != "" {
			return in.OrgID, b.Status, true
		}
	case engine.CheckpointInput:
		if in.Wait {
			return in.OrgID, engine.StatusWaiting, true
		}
	case engine.FinishInput:
		if o, ok := out.(*engine.FinishOutput); ok && len(o.Pending) == 0 {
			return in.OrgID, in.Status, true
		}
	}
	return "", "", false
}

// upsertStatus sets AgentreeStatus to status when it differs from the
// run's, with AgentreeOrg and AgentreeKind on a run that lacks them (a
// workflow started before they were set). The workflow task fails, and is
// retried, when the cluster does not have the attributes registered.
func (p *temporalPort) upsertStatus(orgID string, status engine.Status) error {
	if !p.searchVersionKnown {
		p.searchVersion = version(p.ctx, p.budget.Changes, searchAttributesChange, 1)
		p.searchVersionKnown = true
	}
	if p.searchVersion == workflow.DefaultVersion {
		return nil
	}
	current := workflow.GetTypedSearchAttributes(p.ctx)
	if !current.ContainsKey(client.SearchOrg) {
		// Started without them (a cluster where they are not registered:
		// client.ExecuteWorkflow): an upsert would fail the workflow task.
		return nil
	}
	if v, ok := current.GetKeyword(client.SearchStatus); ok && v == string(status) {
		return nil
	}
	updates := []temporal.SearchAttributeUpdate{client.SearchStatus.ValueSet(string(status))}
	if !current.ContainsKey(client.SearchOrg) && orgID != "" {
		updates = append(updates, client.SearchOrg.ValueSet(orgID))
	}
	if !current.ContainsKey(client.SearchKind) {
		updates = append(updates, client.SearchKind.ValueSet(workflow.GetInfo(p.ctx).WorkflowType.Name))
	}
	return workflow.UpsertTypedSearchAttributes(p.ctx, updates...)
}

// countStatus counts an execution that started (its first Begin) or
// ended, by kind and status, through the workflow's metrics handler,
// which records nothing while a run replays.
func (p *temporalPort) countStatus(in any, status engine.Status) {
	name := ""
	switch in := in.(type) {
	case engine.BeginInput:
		if in.Announce == event.NameStarted {
			name = "agentree.executions.started"
		}
	case engine.FinishInput:
		name = "agentree.executions.finished"
	}
	if name == "" {
		return
	}
	tags := map[string]string{"kind": workflow.GetInfo(p.ctx).WorkflowType.Name, "status": string(status)}
	workflow.GetMetricsHandler(p.ctx).WithTags(tags).Counter(name).Inc(1)
}
