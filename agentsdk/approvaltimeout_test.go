package agentsdk_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
)

func TestApprovalTimeoutProblems(t *testing.T) {
	for name, tc := range map[string]struct {
		in   agentsdk.ApprovalTimeout
		want string
	}{
		"zero seconds":            {agentsdk.ApprovalTimeout{Outcome: "reject"}, "approvalTimeout.seconds must be a whole number from 1 to 86400; got 0"},
		"over the ceiling":        {agentsdk.ApprovalTimeout{Seconds: 86401, Outcome: "approve"}, "approvalTimeout.seconds must be a whole number from 1 to 86400; got 86401"},
		"unknown outcome":         {agentsdk.ApprovalTimeout{Seconds: 5, Outcome: "ignore"}, `approvalTimeout.outcome must be "reject", "approve" or "escalate"; got "ignore"`},
		"escalate to nobody":      {agentsdk.ApprovalTimeout{Seconds: 5, Outcome: "escalate"}, `approvalTimeout.escalateTo (a role) is required with outcome "escalate"`},
		"role without escalation": {agentsdk.ApprovalTimeout{Seconds: 5, Outcome: "reject", EscalateTo: "admin"}, `approvalTimeout.escalateTo applies to outcome "escalate" only`},
	} {
		t.Run(name, func(t *testing.T) {
			require.Equal(t, []string{tc.want}, tc.in.Problems("approvalTimeout"))
		})
	}
	ok := &agentsdk.ApprovalTimeout{Seconds: 3, Outcome: "escalate", EscalateTo: "admin"}
	require.Empty(t, ok.Problems("approvalTimeout"))
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	require.Equal(t, at.Add(3*time.Second), ok.Deadline(at))
	err := agentsdk.Config{ApprovalTimeout: &agentsdk.ApprovalTimeout{Seconds: 3, Outcome: "maybe"}}.Validate(nil, nil)
	require.ErrorContains(t, err, `approvalTimeout.outcome must be`)
}

func TestApprovalTimeoutEscalates(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	esc := &agentsdk.ApprovalTimeout{Seconds: 60, Outcome: agentsdk.TimeoutEscalate, EscalateTo: "admin"}
	require.Empty(t, esc.EscalatedTo(at, at.Add(59*time.Second)), "before the deadline any approver decides")
	require.Equal(t, "admin", esc.EscalatedTo(at, at.Add(60*time.Second)))
	require.Equal(t, "admin", esc.EscalatedTo(at, at.Add(time.Hour)), "and it stays escalated")
	rej := &agentsdk.ApprovalTimeout{Seconds: 60, Outcome: agentsdk.TimeoutReject}
	require.Empty(t, rej.EscalatedTo(at, at.Add(time.Hour)), "only escalate restricts who decides")
	var none *agentsdk.ApprovalTimeout
	require.Empty(t, none.EscalatedTo(at, at.Add(time.Hour)))
}
