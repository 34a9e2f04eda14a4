package workerconfig

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
)

// Org is the operator's configuration of one organization on the worker:
// which of the worker's tools it may use, under what policy. Both are
// ceilings its executions' config.toolPolicy can only tighten. An
// organization the file does not list gets every tool the worker serves
// under the worker-wide toolPolicy.
type Org struct {
	// ToolSets, when given, are tool sets (among the worker's toolSets)
	// whose tools the organization may use.
	ToolSets []string `yaml:"toolSets"`
	// Tools, when given, are tools (by name, MCP ones as <server>__<tool>)
	// the organization may use, besides those of ToolSets. With neither
	// given, it may use every tool of the worker; with either, no other:
	// the rest are forbidden to it — not in its capabilities, refused at
	// create, never run.
	Tools []string `yaml:"tools"`
	// ToolPolicy is the organization's policy per tool name or glob, over
	// the worker-wide toolPolicy (which decides what it does not cover).
	ToolPolicy agentsdk.Policies `yaml:"toolPolicy"`
}

// checkOrgs validates orgs (by organization slug) against the worker's
// tool sets.
func checkOrgs(orgs map[string]Org, toolSets []string, bad func(string, ...any)) {
	for _, slug := range slices.Sorted(maps.Keys(orgs)) {
		o := orgs[slug]
		field := "orgs." + slug
		if !entrystore.ValidSlug(slug) {
			bad("orgs: %q is not an organization slug (1 to 63 lowercase letters, digits and '-')", slug)
		}
		for i, s := range o.ToolSets {
			if !slices.Contains(toolSets, s) {
				bad("%s.toolSets[%d]: %q is not one of the worker's toolSets (%s)", field, i, s, strings.Join(toolSets, ", "))
			}
		}
		for i, t := range o.Tools {
			if strings.TrimSpace(t) == "" {
				bad("%s.tools[%d]: empty tool name", field, i)
			}
		}
		for _, p := range o.ToolPolicy.Problems(field + ".toolPolicy") {
			bad("%s", p)
		}
	}
}

// orgTools is what the worker's plugin takes of orgs, still by slug: each
// organization's allowed tools (nil: all) resolved from its tool sets,
// given the names of each set's tools, and its tools, each of which must
// be one of the worker's.
func orgTools(orgs map[string]Org, setTools map[string][]string, tools []*agentsdk.Tool) (map[string]agentsdk.OrgTools, error) {
	if len(orgs) == 0 {
		return nil, nil
	}
	out := make(map[string]agentsdk.OrgTools, len(orgs))
	for _, slug := range slices.Sorted(maps.Keys(orgs)) {
		o := orgs[slug]
		ot := agentsdk.OrgTools{ToolPolicy: o.ToolPolicy}
		if o.ToolSets != nil || o.Tools != nil {
			ot.Tools = []string{}
		}
		for _, s := range o.ToolSets {
			ot.Tools = append(ot.Tools, setTools[s]...)
		}
		for i, n := range o.Tools {
			if !slices.ContainsFunc(tools, func(t *agentsdk.Tool) bool { return t.Name == n }) {
				return nil, fmt.Errorf("worker config: orgs.%s.tools[%d]: the worker has no tool %q", slug, i, n)
			}
			if !slices.Contains(ot.Tools, n) {
				ot.Tools = append(ot.Tools, n)
			}
		}
		out[slug] = ot
	}
	return out, nil
}
