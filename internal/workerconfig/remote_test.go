package workerconfig_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/internal/workerconfig"
)

func TestRemoteAgentsParseAndBuild(t *testing.T) {
	noKeys(t)
	t.Setenv("RESEARCHER_TOKEN", "s3cret")
	c, err := workerconfig.Parse([]byte(`
toolSets: [subagents]
remoteAgents:
  - name: researcher
    description: finds things
    url: https://agents.example.com/researcher
    tokenEnv: RESEARCHER_TOKEN
    timeout: 10m
  - name: writer
    url: http://127.0.0.1:9000/card.json
    header: X-Api-Key
`))
	require.NoError(t, err)
	require.Equal(t, []workerconfig.RemoteAgent{
		{Name: "researcher", Description: "finds things", URL: "https://agents.example.com/researcher", TokenEnv: "RESEARCHER_TOKEN",
			Header: "Authorization", Timeout: 10 * time.Minute, RequestTimeout: 30 * time.Second, PollInterval: time.Second},
		{Name: "writer", URL: "http://127.0.0.1:9000/card.json", Header: "X-Api-Key",
			Timeout: time.Hour, RequestTimeout: 30 * time.Second, PollInterval: time.Second},
	}, c.RemoteAgents)
	w, err := c.Build()
	require.NoError(t, err)
	t.Cleanup(func() { _ = w.Close() })
	require.Equal(t, []agentsdk.RemoteAgent{
		{Name: "researcher", Description: "finds things", URL: "https://agents.example.com/researcher", Header: "Authorization",
			Token: "s3cret", Timeout: 10 * time.Minute, RequestTimeout: 30 * time.Second, PollInterval: time.Second},
		{Name: "writer", URL: "http://127.0.0.1:9000/card.json", Header: "X-Api-Key",
			Timeout: time.Hour, RequestTimeout: 30 * time.Second, PollInterval: time.Second},
	}, w.RemoteAgents)
}

func TestRemoteAgentsRefused(t *testing.T) {
	noKeys(t)
	for doc, want := range map[string]string{
		"remoteAgents: [{url: https://a.example.com}]":                        `remoteAgents[0]: remote agent name "": use 1 to 64 letters, digits, '-' or '_'`,
		"remoteAgents: [{name: a, url: file:///etc/passwd}]":                  `remoteAgents[0]: remote agent a: url "file:///etc/passwd" is not an http(s) URL`,
		"remoteAgents: [{name: a, url: https://a.example.com, timeout: -1s}]": `remoteAgents[0]: remote agent a: timeouts must not be negative`,
		"remoteAgents: [{name: a, url: http://x}, {name: a, url: http://y}]":  `remoteAgents[1].name: "a" is used by an earlier remote agent`,
		"remoteAgents: [{name: a, url: http://x, token: s3cret}]":             `unknown field "token" in a remote agent`,
	} {
		_, err := workerconfig.Parse([]byte(doc))
		require.ErrorContains(t, err, want, doc)
	}
	c, err := workerconfig.Parse([]byte("remoteAgents: [{name: a, url: http://x, tokenEnv: AGENTREE_TEST_UNSET_TOKEN}]"))
	require.NoError(t, err)
	_, err = c.Build()
	require.EqualError(t, err, "worker config: remoteAgents[0] (a): AGENTREE_TEST_UNSET_TOKEN is not set")
}
