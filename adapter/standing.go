package adapter

import (
	"context"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
)

// standingApproval is step.Deps.StandingApproval over the store: one
// indexed read per call whose policy is ask (none for the rest), the
// argument pattern matched here, where tools' arguments are known.
func standingApproval(es *entrystore.Store) func(ctx context.Context, orgID, executionID string, call agentsdk.ToolCall) (string, error) {
	return func(ctx context.Context, orgID, executionID string, call agentsdk.ToolCall) (string, error) {
		rules, err := es.StandingApprovalsFor(ctx, orgID, executionID, call.Name)
		if err != nil {
			return "", err
		}
		for _, r := range rules {
			if agentsdk.CoversCall(r.ArgumentPattern, call) {
				return r.ID, nil
			}
		}
		return "", nil
	}
}
