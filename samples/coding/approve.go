package coding

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/apiclient"
	agentreev1 "github.com/agentree/agentree/proto/agentree/v1"
)

// Decide is a person's decision on one call waiting for approval: approve
// or reject (agentsdk.DecisionApprove, DecisionReject) and, for a
// rejection, the reason the model reads.
type Decide func(call *agentreev1.ToolCall) (decision, reason string)

// DecidePending decides every call of the execution waiting for approval
// (GET …/tool-calls?status=awaiting_approval) and sends each decision
// (POST …/tool-calls/{id}/approval). It returns how many it sent.
func DecidePending(ctx context.Context, api *apiclient.Client, id string, decide Decide) (int, error) {
	calls := &agentreev1.ListToolCallsResponse{}
	base := "/agent-executions/" + url.PathEscape(id) + "/tool-calls"
	if err := api.Do(ctx, http.MethodGet, base+"?status=awaiting_approval&pageSize=500", nil, calls); err != nil {
		return 0, fmt.Errorf("coding: calls waiting for approval: %w", err)
	}
	for _, c := range calls.GetToolCalls() {
		decision, reason := decide(c)
		req := &agentreev1.DecideToolCallRequest{Decision: decision, Reason: reason}
		if err := api.Do(ctx, http.MethodPost, base+"/"+url.PathEscape(c.GetToolCallId())+"/approval", req, nil); err != nil {
			return 0, fmt.Errorf("coding: decide %s: %w", c.GetToolCallId(), err)
		}
	}
	return len(calls.GetToolCalls()), nil
}

// Approve is a Decide that approves every call.
func Approve(*agentreev1.ToolCall) (string, string) { return agentsdk.DecisionApprove, "" }
