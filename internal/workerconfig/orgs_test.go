package workerconfig_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/tools/builtin"
	"github.com/agentree/agentree/agentsdk/tools/demo"
	"github.com/agentree/agentree/internal/workerconfig"
)

// TestOrgsAllowListsAndPolicies: an organization configured apart gets
// the tools of the tool sets and the tools it lists, under its policy; one
// with only a policy gets every tool.
func TestOrgsAllowListsAndPolicies(t *testing.T) {
	noKeys(t)
	c, err := workerconfig.Parse([]byte(`
toolSets: [demo, builtin]
workspace: {root: ` + t.TempDir() + `}
toolPolicy: {bash: ask}
orgs:
  acme:
    toolSets: [demo]
    tools: [read_file]
  strict:
    toolPolicy: {"*": ask, bash: forbid}
`))
	require.NoError(t, err)
	w, err := c.Build()
	require.NoError(t, err)
	t.Cleanup(func() { _ = w.Close() })

	var demoNames []string
	for _, tl := range demo.Tools() {
		demoNames = append(demoNames, tl.Name)
	}
	require.ElementsMatch(t, append(demoNames, builtin.ReadFileTool), w.Orgs["acme"].Tools)
	require.Nil(t, w.Orgs["strict"].Tools, "a policy alone keeps every tool")
	op := agentsdk.Operator{Policy: w.ToolPolicy, Orgs: w.Orgs}
	require.Equal(t, agentsdk.PolicyForbid, op.Ceiling("acme", builtin.BashTool, nil), "off acme's list")
	require.Equal(t, agentsdk.PolicyAuto, op.Ceiling("acme", builtin.ReadFileTool, nil), "on acme's list")
	require.Equal(t, agentsdk.PolicyAsk, op.Ceiling("strict", builtin.ReadFileTool, nil), "strict's glob")
	require.Equal(t, agentsdk.PolicyForbid, op.Ceiling("strict", builtin.BashTool, nil))
	require.Equal(t, agentsdk.PolicyAsk, op.Ceiling("other", builtin.BashTool, nil), "an organization not listed gets the worker's")
}

// TestBadOrgsNameTheField: a wrong orgs section stops the worker at load,
// saying where.
func TestBadOrgsNameTheField(t *testing.T) {
	noKeys(t)
	for name, c := range map[string]struct{ yaml, want string }{
		"bad slug":      {"orgs: {Acme!: {}}\n", `orgs: "Acme!" is not an organization slug`},
		"unserved set":  {"orgs: {acme: {toolSets: [builtin]}}\n", `orgs.acme.toolSets[0]: "builtin" is not one of the worker's toolSets (demo)`},
		"bad policy":    {"orgs: {acme: {toolPolicy: {bash: maybe}}}\n", `orgs.acme.toolPolicy["bash"] must be auto, ask or forbid; got "maybe"`},
		"empty tool":    {"orgs: {acme: {tools: [\"\"]}}\n", `orgs.acme.tools[0]: empty tool name`},
		"unknown field": {"orgs: {acme: {tool: [x]}}\n", `unknown field "tool" in an org`},
		"not a mapping": {"orgs: [acme]\n", "is not a mapping"},
	} {
		_, err := workerconfig.Parse([]byte(c.yaml))
		require.ErrorContains(t, err, c.want, name)
		require.NotContains(t, err.Error(), "workerconfig.", name)
	}
	c, err := workerconfig.Parse([]byte("orgs: {acme: {tools: [nope]}}\n"))
	require.NoError(t, err)
	_, err = c.Build()
	require.ErrorContains(t, err, `orgs.acme.tools[0]: the worker has no tool "nope"`)
}
