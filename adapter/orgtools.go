package adapter

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/agentree/agentree/agentsdk"
)

// operator is the operator's tool policy the steps and the capability
// record resolve calls against.
func (o *Options) operator() agentsdk.Operator {
	return agentsdk.Operator{Policy: o.ToolPolicy, Orgs: o.OrgTools, SafeCommands: o.SafeCommands}
}

// checkOrgTools checks Options.OrgTools: each organization's policy is
// valid and its tools are the worker's.
func checkOrgTools(orgs map[string]agentsdk.OrgTools, tools agentsdk.Tools) error {
	var problems []string
	for _, org := range slices.Sorted(maps.Keys(orgs)) {
		ot := orgs[org]
		field := fmt.Sprintf("OrgTools[%q]", org)
		if strings.TrimSpace(org) == "" {
			problems = append(problems, "OrgTools has an empty organization ID")
		}
		problems = append(problems, ot.ToolPolicy.Problems(field+".ToolPolicy")...)
		for _, name := range ot.Tools {
			if _, err := tools.Get(name); err != nil {
				problems = append(problems, fmt.Sprintf("%s.Tools: the worker has no tool %q", field, name))
			}
		}
	}
	if len(problems) > 0 {
		return errors.New("adapter: Options." + strings.Join(problems, "; "))
	}
	return nil
}
