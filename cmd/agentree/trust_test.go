package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk/providertest"
)

// devServer is an `agentree dev` started from a worker configuration file,
// with its base URL and API key.
type devServer struct {
	t         *testing.T
	base, key string
}

// startConfiguredDev writes config to a file and runs `agentree dev
// --config` on it until the test ends.
func startConfiguredDev(t *testing.T, config string) *devServer {
	t.Helper()
	path := filepath.Join(t.TempDir(), "agentree.yaml")
	require.NoError(t, os.WriteFile(path, []byte(config), 0o600))
	d := startDev(t, "--config", path)
	return &devServer{t: t, base: d.base + "/api/orgs/dev", key: d.key}
}

// anthropicEndpoint is a configuration's endpoints section: one endpoint,
// "team", the fake Anthropic server at url serving models (YAML, e.g.
// `[m1]` or `["*"]`), its key in a variable of the test's own.
func anthropicEndpoint(t *testing.T, url, models string) string {
	keyVar := "TEST_ANTHROPIC_KEY_" + strings.ToUpper(uuid.NewString()[:8])
	t.Setenv(keyVar, "sk-ant-test")
	return fmt.Sprintf("endpoints:\n  - name: team\n    provider: anthropic\n    baseUrl: %s\n    apiKeyEnv: %s\n    models: %s\n", url, keyVar, models)
}

// do sends a JSON request and decodes the JSON answer.
func (d *devServer) do(method, path, body string) (int, map[string]any) {
	d.t.Helper()
	req, err := http.NewRequest(method, d.base+path, strings.NewReader(body))
	require.NoError(d.t, err)
	req.Header.Set("Authorization", "Bearer "+d.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(d.t, err)
	defer resp.Body.Close()
	var out map[string]any
	require.NoError(d.t, json.NewDecoder(resp.Body).Decode(&out))
	return resp.StatusCode, out
}

// ended polls an execution until it is COMPLETED or FAILED.
func (d *devServer) ended(id string) map[string]any {
	d.t.Helper()
	var ex map[string]any
	require.Eventually(d.t, func() bool {
		_, ex = d.do(http.MethodGet, "/agent-executions/"+id, "")
		return ex["status"] == "COMPLETED" || ex["status"] == "FAILED"
	}, time.Minute, 20*time.Millisecond)
	return ex
}

// TestModelKeyNeverLeavesItsEndpoint: the worker's configured endpoint
// receives the key from the variable its configuration names; a request
// that names another URL or variable is refused at the gateway and the
// other server receives nothing; an unknown endpoint name fails clearly.
// Real Postgres and Temporal, `agentree dev` from a configuration file,
// the official Anthropic SDK against fake servers that speak its protocol.
func TestModelKeyNeverLeavesItsEndpoint(t *testing.T) {
	const model = "claude-sonnet-4-5"
	answer := providertest.Reply{Body: providertest.NewAnthropicStream(model, providertest.AnthropicUsage{Input: 5}).Text("kept ", "home").End("end_turn", 2)}
	ours := providertest.NewServer(t, answer)
	theirs := providertest.NewServer(t, answer, answer, answer)
	suffix := strings.ToUpper(strings.ReplaceAll(uuid.NewString()[:8], "-", ""))
	keyVar, secretVar := "TRUST_TEST_KEY_"+suffix, "TRUST_TEST_SECRET_"+suffix
	t.Setenv(keyVar, "sk-ant-ours")
	t.Setenv(secretVar, "sk-operator-secret")

	d := startConfiguredDev(t, fmt.Sprintf(`
taskQueue: trust-%s
endpoints:
  - name: team
    provider: anthropic
    baseUrl: %s
    apiKeyEnv: %s
    models: [%s]
toolSets: []
`, suffix, ours.URL, keyVar, model))

	// The configured endpoint answers, with the key from its variable.
	status, ex := d.do(http.MethodPost, "/agent-executions",
		fmt.Sprintf(`{"userPrompt":"hi","models":[{"provider":"anthropic","modelId":%q}]}`, model))
	require.Equal(t, http.StatusOK, status, ex)
	ex = d.ended(ex["id"].(string))
	require.Equal(t, "COMPLETED", ex["status"], ex)
	require.Len(t, ours.Requests(), 1)
	require.Equal(t, "sk-ant-ours", ours.Last().Header.Get("X-Api-Key"))
	require.Equal(t, "/v1/messages", ours.Last().Path)

	// Naming another URL or variable, at the top level or in config, is a
	// 400 naming the field; nothing is created.
	for name, body := range map[string]string{
		"baseUrl and apiKeyEnv": fmt.Sprintf(`{"userPrompt":"hi","models":[{"provider":"anthropic","modelId":%q,"baseUrl":%q,"apiKeyEnv":%q}]}`, model, theirs.URL, secretVar),
		"baseUrl":               fmt.Sprintf(`{"userPrompt":"hi","models":[{"provider":"anthropic","modelId":%q,"baseUrl":%q}]}`, model, theirs.URL),
		"apiKeyEnv":             fmt.Sprintf(`{"userPrompt":"hi","models":[{"provider":"anthropic","modelId":%q,"apiKeyEnv":%q}]}`, model, secretVar),
		"in config":             fmt.Sprintf(`{"userPrompt":"hi","config":{"models":[{"provider":"anthropic","modelId":%q,"baseUrl":%q,"apiKeyEnv":%q}]}}`, model, theirs.URL, secretVar),
		"a price in config":     fmt.Sprintf(`{"userPrompt":"hi","config":{"models":[{"provider":"anthropic","modelId":%q,"price":{"input":0}}]}}`, model),
	} {
		status, body := d.do(http.MethodPost, "/agent-executions", body)
		require.Equal(t, http.StatusBadRequest, status, "%s: %v", name, body)
		require.NotEmpty(t, body["code"], name)
		msg, _ := body["message"].(string)
		t.Logf("%s: %d %s", name, status, msg)
		require.Regexp(t, `baseUrl|apiKeyEnv|price`, msg, name)
		require.NotContains(t, msg, "sk-", name)
	}
	_, list := d.do(http.MethodGet, "/agent-executions", "")
	require.Len(t, list["agentExecutions"], 1, "a refused request creates nothing")

	// An endpoint the worker does not have fails clearly, naming it and
	// the ones there are — at the gateway once it knows the workers'
	// endpoints, else when the worker resolves the model — and reaches
	// no server.
	status, ex = d.do(http.MethodPost, "/agent-executions",
		fmt.Sprintf(`{"userPrompt":"hi","models":[{"provider":"anthropic","modelId":%q,"endpoint":"elsewhere"}]}`, model))
	var reason string
	if status == http.StatusBadRequest {
		reason, _ = ex["message"].(string)
	} else {
		require.Equal(t, http.StatusOK, status, ex)
		ex = d.ended(ex["id"].(string))
		require.Equal(t, "FAILED", ex["status"], ex)
		reason, _ = ex["error"].(string)
	}
	require.Contains(t, reason, `"elsewhere"`)
	require.Contains(t, reason, "team")

	require.Empty(t, theirs.Requests(), "the other server received nothing")
	require.Len(t, ours.Requests(), 1)
}
