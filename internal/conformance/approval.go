package conformance

import (
	"fmt"

	"github.com/agentree/agentree/agentsdk"
)

const signalApprove = "approve"

type approval struct {
	By string `json:"by"`
}

// approvalAgent asks for approval, streams what it does, waits on its own
// signal (ignoring others) and completes once approved.
type approvalAgent struct{}

func (approvalAgent) Kind() string { return "conformance-approval" }

func (approvalAgent) RunSegment(ctx agentsdk.Context) (agentsdk.Outcome, error) {
	var asked bool
	if err := ctx.State().GetCustom(&asked); err != nil {
		return agentsdk.Outcome{}, err
	}
	if !asked {
		msg := agentsdk.TextMessage(agentsdk.RoleAssistant, "Approve the quote of 500?")
		if _, err := ctx.Append(agentsdk.NewEntry{Type: agentsdk.EntryMessage, Message: &msg}); err != nil {
			return agentsdk.Outcome{}, err
		}
		if err := ctx.StreamData(map[string]any{"asked": 500}); err != nil {
			return agentsdk.Outcome{}, err
		}
		if err := ctx.State().SetCustom(true); err != nil {
			return agentsdk.Outcome{}, err
		}
		return agentsdk.Wait("approval", signalApprove), nil
	}
	for _, s := range ctx.Signals() {
		if s.Name != signalApprove {
			continue
		}
		var a approval
		if err := ctx.SignalValue(s, &a); err != nil {
			return agentsdk.Outcome{}, err
		}
		msg := agentsdk.TextMessage(agentsdk.RoleUser, "approved by "+a.By)
		if _, err := ctx.ConsumeSignal(s, agentsdk.NewEntry{Type: agentsdk.EntryMessage, Message: &msg}); err != nil {
			return agentsdk.Outcome{}, err
		}
		if err := ctx.StreamData(map[string]any{"approvedBy": a.By}); err != nil {
			return agentsdk.Outcome{}, err
		}
		return agentsdk.Complete(fmt.Sprintf("approved by %s", a.By)), nil
	}
	return agentsdk.Wait("approval", signalApprove), nil
}
