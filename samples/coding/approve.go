package coding

import (
	"context"
	"encoding/json"
	"fmt"

	aclient "github.com/agentree/agentree/adapter/client"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
)

// Decide is a person's decision on one call waiting for approval.
type Decide func(call entrystore.ToolCall) agentsdk.Decision

// DecidePending decides every call of the execution waiting for approval
// and sends each decision, as the REST approval endpoint does (a
// toolApproval signal through the inbox). It returns how many it sent.
func DecidePending(ctx context.Context, store *entrystore.Store, ac *aclient.Client, orgID, id string, decide Decide) (int, error) {
	calls, _, err := store.ListToolCalls(ctx, orgID, id,
		entrystore.ToolCallFilter{Status: entrystore.ToolCallAwaitingApproval}, entrystore.Page{Limit: entrystore.MaxPageLimit})
	if err != nil {
		return 0, fmt.Errorf("coding: calls waiting for approval: %w", err)
	}
	for _, c := range calls {
		d := decide(c)
		d.ToolCallID = c.ToolCallID
		b, err := json.Marshal(d)
		if err != nil {
			return 0, err
		}
		if _, err := ac.Signal(ctx, orgID, id, agentsdk.SignalToolApproval, b); err != nil {
			return 0, fmt.Errorf("coding: decide %s: %w", c.ToolCallID, err)
		}
	}
	return len(calls), nil
}
