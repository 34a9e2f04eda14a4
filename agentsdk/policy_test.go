package agentsdk_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
)

// TestPolicyForIsACeiling: the operator's word (an organization's, the
// worker's, the tool's own default, in that order) is a ceiling the
// execution's policy can only tighten.
func TestPolicyForIsACeiling(t *testing.T) {
	bash := &agentsdk.Tool{Name: "bash", Policy: agentsdk.PolicyAsk}
	op := agentsdk.Operator{
		Policy: agentsdk.Policies{"deploy": agentsdk.PolicyForbid, "edit_*": agentsdk.PolicyAuto},
		Orgs: map[string]agentsdk.OrgTools{
			"org-b": {Tools: []string{"bash", "read"}, ToolPolicy: agentsdk.Policies{"bash": agentsdk.PolicyAuto}},
		},
	}
	for _, c := range []struct {
		org, name string
		tool      *agentsdk.Tool
		tenant    agentsdk.Policies
		want      agentsdk.ToolPolicy
	}{
		{"org-a", "bash", bash, nil, agentsdk.PolicyAsk},
		{"org-a", "bash", bash, agentsdk.Policies{"bash": agentsdk.PolicyAuto}, agentsdk.PolicyAsk},
		{"org-a", "bash", bash, agentsdk.Policies{"*": agentsdk.PolicyAuto}, agentsdk.PolicyAsk},
		{"org-a", "bash", bash, agentsdk.Policies{"b*": agentsdk.PolicyForbid}, agentsdk.PolicyForbid},
		{"org-a", "deploy", nil, agentsdk.Policies{"deploy": agentsdk.PolicyAuto}, agentsdk.PolicyForbid},
		{"org-a", "edit_file", &agentsdk.Tool{Policy: agentsdk.PolicyAsk}, nil, agentsdk.PolicyAuto},
		{"org-a", "read", nil, agentsdk.Policies{"read": agentsdk.PolicyAsk}, agentsdk.PolicyAsk},
		{"org-b", "bash", bash, nil, agentsdk.PolicyAuto},
		{"org-b", "grep", nil, agentsdk.Policies{"*": agentsdk.PolicyAuto}, agentsdk.PolicyForbid},
		{"org-b", "deploy", nil, nil, agentsdk.PolicyForbid},
	} {
		require.Equal(t, c.want, agentsdk.PolicyFor(c.org, c.name, c.tool, c.tenant, op), "%s %s under %v", c.org, c.name, c.tenant)
	}
	require.Equal(t, agentsdk.PolicyAsk, agentsdk.Stricter(agentsdk.PolicyAsk, ""))
	require.Equal(t, agentsdk.PolicyForbid, agentsdk.Stricter(agentsdk.PolicyAuto, agentsdk.PolicyForbid))
}
