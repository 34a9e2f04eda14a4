package workerconfig_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/internal/mcptest"
	"github.com/agentree/agentree/internal/workerconfig"
)

func TestParseFillsMCPDefaults(t *testing.T) {
	noKeys(t)
	c, err := workerconfig.Parse([]byte(`
mcp:
  - name: github
    command: npx
    args: [-y, server-github]
    env: {TOKEN: "${GITHUB_TOKEN}", PRICE: "$$5"}
    orgs:
      acme: {env: {TOKEN: "${file:/run/secrets/acme-github}"}}
      globex: {}
  - name: search
    url: https://mcp.example.com/mcp
    headers: {Authorization: "Bearer ${SEARCH_KEY}"}
    timeout: 90s
    orgs: ["*"]
`))
	require.NoError(t, err)
	require.Equal(t, []workerconfig.MCPServer{
		{Name: "github", Command: "npx", Args: []string{"-y", "server-github"},
			Env: map[string]string{"TOKEN": "${GITHUB_TOKEN}", "PRICE": "$$5"}, Timeout: 60 * time.Second,
			Orgs: workerconfig.MCPOrgs{"acme": {Env: map[string]string{"TOKEN": "${file:/run/secrets/acme-github}"}}, "globex": {}}},
		{Name: "search", URL: "https://mcp.example.com/mcp",
			Headers: map[string]string{"Authorization": "Bearer ${SEARCH_KEY}"}, Timeout: 90 * time.Second,
			Orgs: workerconfig.MCPOrgs{"*": {}}},
	}, c.MCP)

	c, err = workerconfig.Parse([]byte("mcp: []\n"))
	require.NoError(t, err)
	require.Equal(t, workerconfig.Default(), c, "an empty list is the default: no servers")
}

func TestBadMCPServersNameTheField(t *testing.T) {
	noKeys(t)
	for name, c := range map[string]struct{ yaml, want string }{
		"unknown field":   {"mcp:\n  - name: a\n    cmd: x\n", `line 3: unknown field "cmd" in an MCP server`},
		"no name":         {"mcp:\n  - command: x\n", "mcp[0].name: required"},
		"dotted name":     {"mcp:\n  - name: a.b\n    command: x\n", `mcp[0].name: "a.b": use letters, digits and '-', at most 32`},
		"duplicate":       {"mcp:\n  - {name: a, command: x}\n  - {name: a, command: y}\n", `mcp[1].name: "a" is used by an earlier server`},
		"neither":         {"mcp:\n  - name: a\n", "mcp[0]: give command (stdio) or url (streamable HTTP), not both or neither"},
		"both":            {"mcp:\n  - {name: a, command: x, url: 'http://h'}\n", "mcp[0]: give command (stdio) or url"},
		"args with url":   {"mcp:\n  - {name: a, url: 'http://h', args: [x]}\n", "mcp[0]: args and env are for a command"},
		"headers for cmd": {"mcp:\n  - {name: a, command: x, headers: {A: b}}\n", "mcp[0]: headers are for an url server"},
		"bad url":         {"mcp:\n  - {name: a, url: 'h:1'}\n", `mcp[0].url: "h:1" is not an http(s) URL`},
		"negative":        {"mcp:\n  - {name: a, command: x, timeout: -1s}\n", "mcp[0].timeout: must not be negative"},
		"bad reference":   {"mcp:\n  - {name: a, command: x, env: {T: '${1X}'}}\n", `mcp[0].env.T: "${1X}" is not a ${NAME} reference`},
		"unterminated":    {"mcp:\n  - {name: a, url: 'http://h', headers: {T: 'Bearer ${KEY'}}\n", `mcp[0].headers.T: "${KEY" is not a ${NAME} reference`},
		"no orgs":         {"mcp:\n  - {name: a, command: x}\n", `mcp[0].orgs: required: the organizations (slugs) whose executions may use the server, or ["*"] for every one`},
		"bad org":         {"mcp:\n  - {name: a, command: x, orgs: [Acme!]}\n", `mcp[0].orgs: "Acme!" is not an organization slug`},
		"org field":       {"mcp:\n  - {name: a, command: x, orgs: {acme: {token: {A: b}}}}\n", `orgs.acme: unknown field "token"`},
		"relative file":   {"mcp:\n  - {name: a, command: x, orgs: {acme: {env: {T: '${file:token}'}}}}\n", `mcp[0].orgs.acme.env.T: "${file:token}": give the file's absolute path`},
	} {
		_, err := workerconfig.Parse([]byte(c.yaml))
		require.ErrorContains(t, err, c.want, name)
		require.NotContains(t, err.Error(), "workerconfig.", name)
	}
}

// A worker built with an MCP server offers its tools beside the tool
// sets', with the values its environment names, and Close ends the
// server's process.
func TestBuildOffersMCPTools(t *testing.T) {
	noKeys(t)
	bin := mcptest.Build(t)
	t.Setenv("AGENTREE_TEST_GREETING", "hi from the worker")
	c, err := workerconfig.Parse([]byte(`
mcp:
  - name: calc
    command: ` + bin + `
    env: {GREETING: "${AGENTREE_TEST_GREETING}, $$1"}
    orgs: ["*"]
`))
	require.NoError(t, err)
	w, err := c.Build()
	require.NoError(t, err)
	t.Cleanup(func() { _ = w.Close() })
	tools, err := agentsdk.NewTools(w.Tools...)
	require.NoError(t, err)
	require.Subset(t, tools.Names(), []string{"search_notes", "calc__add", "calc__env", "calc__crash"})

	run := func(name, args string) (string, error) {
		tool, err := tools.Get(name)
		require.NoError(t, err)
		return tool.Run(context.Background(), agentsdk.ToolInvocation{Arguments: json.RawMessage(args)})
	}
	out, err := run("calc__env", `{"name":"GREETING"}`)
	require.NoError(t, err)
	require.Equal(t, "hi from the worker, $1", out)

	require.NoError(t, w.Close())
	_, err = run("calc__add", `{"a":1,"b":2}`)
	require.EqualError(t, err, "MCP server calc is shut down")
}

// A variable an MCP server's env names that is not set stops the worker,
// naming it; so does a server that cannot start.
func TestBuildNeedsTheMCPServersVariables(t *testing.T) {
	noKeys(t)
	t.Setenv("AGENTREE_TEST_MISSING", "")
	c, err := workerconfig.Parse([]byte("mcp:\n  - {name: calc, command: x, env: {T: '${AGENTREE_TEST_MISSING}'}, orgs: ['*']}\n"))
	require.NoError(t, err)
	_, err = c.Build()
	require.EqualError(t, err, "worker config: mcp[0] (calc): env.T: $AGENTREE_TEST_MISSING is empty or unreadable: set it, or remove the server")

	c, err = workerconfig.Parse([]byte("mcp:\n  - {name: calc, command: x, orgs: {acme: {env: {T: '${file:/nonexistent/token}'}}}}\n"))
	require.NoError(t, err)
	_, err = c.Build()
	require.EqualError(t, err, "worker config: mcp[0] (calc): orgs.acme.env.T: /nonexistent/token is empty or unreadable: set it, or remove the server")

	c, err = workerconfig.Parse([]byte("mcp:\n  - {name: calc, command: /nonexistent/server, orgs: ['*']}\n"))
	require.NoError(t, err)
	_, err = c.Build()
	require.ErrorContains(t, err, "worker config: mcp: server calc: connect: ")
}
