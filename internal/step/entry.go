package step

import (
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/internal/domain"
)

// SDKEntry is a stored entry as agents and steps see it. The one
// conversion from the row: the store port's implementations and the
// gateway's readers of model-call records use it alike.
func SDKEntry(e domain.Entry) agentsdk.Entry {
	return agentsdk.Entry{
		ID: e.ID, ParentID: e.ParentID, ExecutionID: e.ExecutionID,
		Type: agentsdk.EntryType(e.Type), Role: agentsdk.Role(e.Role),
		Content: e.Content, TurnID: e.TurnID, Metadata: e.Metadata, IdempotencyKey: e.IdempotencyKey,
		Depth: e.Depth,
	}
}

// StoredEntry is e as a row of organization orgID to append: the store
// sets its ID, sequence, depth, step and time.
func StoredEntry(orgID string, e agentsdk.Entry) domain.Entry {
	return domain.Entry{
		OrgID: orgID, ExecutionID: e.ExecutionID, ParentID: e.ParentID,
		Type: string(e.Type), Role: string(e.Role), Content: e.Content,
		TurnID: e.TurnID, Metadata: e.Metadata, IdempotencyKey: e.IdempotencyKey,
	}
}
