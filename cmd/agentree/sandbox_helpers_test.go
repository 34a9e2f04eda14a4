package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk/providertest"
	"github.com/agentree/agentree/entrystore"
)

// adversaryModel is the model the sandbox tests play: an Anthropic
// Messages API server whose user prompt is the JSON list of tool calls
// it will ask for, one per turn, whatever the tools answer; then it says
// "done". It knows the host's paths and asks for exactly the call a test
// wants, as a hostile or prompt-injected model would.
const adversaryModel = "claude-sonnet-4-5"

// toolCall is one call the adversary asks for; one with no Tool makes
// its model call fail instead (a 400, which no retry mends).
type toolCall struct {
	Tool string         `json:"tool"`
	Args map[string]any `json:"args"`
}

func startAdversary(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 {
			http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		var blocks []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		var prompt string
		if json.Unmarshal(req.Messages[0].Content, &prompt) != nil {
			_ = json.Unmarshal(req.Messages[0].Content, &blocks)
			for _, b := range blocks {
				prompt += b.Text
			}
		}
		var calls []toolCall
		_ = json.Unmarshal([]byte(prompt), &calls)
		done := 0
		for _, m := range req.Messages {
			done += strings.Count(string(m.Content), `"tool_result"`)
		}
		w.Header().Set("Content-Type", "text/event-stream")
		s := providertest.NewAnthropicStream(adversaryModel, providertest.AnthropicUsage{Input: 10})
		if done >= len(calls) {
			_, _ = w.Write([]byte(s.Text("done").End("end_turn", 1)))
			return
		}
		if calls[done].Tool == "" {
			// A call of no tool: the model fails, for good.
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(providertest.AnthropicErrorBody("invalid_request_error", "the adversary gives up")))
			return
		}
		args, _ := json.Marshal(calls[done].Args)
		_, _ = w.Write([]byte(s.ToolUse(fmt.Sprintf("toolu_%d", done), calls[done].Tool, string(args)).End("tool_use", 5)))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// sandboxWorker is `agentree dev` with the builtin tool set, every tool
// auto by the operator's policy, and the adversary as its only model.
type sandboxWorker struct {
	*devServer
	// root is the workspaces' root; config the configuration file's path.
	root, config string
}

// startSandboxWorker starts it; workspace is YAML added under the
// workspace section (indented two spaces), extra is YAML added at the top
// level.
func startSandboxWorker(t *testing.T, workspace, extra string) *sandboxWorker {
	t.Helper()
	return startSandboxWorkerIn(t, t.TempDir(), workspace, extra)
}

// startSandboxWorkerIn is startSandboxWorker with its configuration file
// in dir.
func startSandboxWorkerIn(t *testing.T, dir, workspace, extra string) *sandboxWorker {
	t.Helper()
	suffix := strings.ToUpper(strings.ReplaceAll(uuid.NewString()[:8], "-", ""))
	keyVar := "SANDBOX_TEST_KEY_" + suffix
	t.Setenv(keyVar, "sk-ant-model-key-"+suffix)
	root := t.TempDir()
	config := fmt.Sprintf(`
taskQueue: sandbox-%s
endpoints:
  - name: adversary
    provider: anthropic
    baseUrl: %s
    apiKeyEnv: %s
    models: [%s]
toolSets: [builtin]
toolPolicy: {"*": auto}
workspace:
  root: %s
%s
%s
`, suffix, startAdversary(t), keyVar, adversaryModel, root, workspace, extra)
	path := filepath.Join(dir, "agentree.yaml")
	require.NoError(t, os.WriteFile(path, []byte(config), 0o600))
	d := startDev(t, "--config", path)
	return &sandboxWorker{devServer: &devServer{t: t, base: d.base + "/api/orgs/dev", key: d.key}, root: root, config: path}
}

// asOrg is the same gateway for another organization, with a key of its
// own.
func (s *sandboxWorker) asOrg(t *testing.T, slug string) *devServer {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), os.Getenv("DATABASE_URL"))
	require.NoError(t, err)
	defer pool.Close()
	es := entrystore.New(pool)
	org, err := es.EnsureOrg(context.Background(), slug)
	require.NoError(t, err)
	key, _, err := es.CreateAPIKey(context.Background(), org.ID, "sandbox-test")
	require.NoError(t, err)
	return &devServer{t: t, base: strings.TrimSuffix(s.base, "/dev") + "/" + slug, key: key}
}

// toolResult is one tool_result message of an execution.
type toolResult struct {
	Name    string
	IsError bool
	Text    string
}

// start creates an execution that makes calls, one per turn; config
// is the request's config object ("" for none).
func start(t *testing.T, d *devServer, calls []toolCall, config string) string {
	t.Helper()
	prompt, err := json.Marshal(calls)
	require.NoError(t, err)
	tools := map[string]bool{}
	for _, c := range calls {
		if c.Tool != "" {
			tools[c.Tool] = true
		}
	}
	names := []string{}
	for n := range tools {
		names = append(names, n)
	}
	body := map[string]any{"userPrompt": string(prompt),
		"models": []map[string]string{{"provider": "anthropic", "modelId": adversaryModel}}, "tools": names}
	if config != "" {
		body["config"] = json.RawMessage(config)
	}
	b, err := json.Marshal(body)
	require.NoError(t, err)
	status, ex := d.do(http.MethodPost, "/agent-executions", string(b))
	require.Equal(t, http.StatusOK, status, ex)
	return ex["id"].(string)
}

// results are an execution's tool results, in order.
func results(t *testing.T, d *devServer, id string) []toolResult {
	t.Helper()
	_, msgs := d.do(http.MethodGet, "/agent-executions/"+id+"/messages", "")
	b, err := json.Marshal(msgs)
	require.NoError(t, err)
	var got struct {
		Messages []struct {
			Role, ToolName string
			IsError        bool
			Content        []struct{ Text string }
		}
	}
	require.NoError(t, json.Unmarshal(b, &got))
	var out []toolResult
	for _, m := range got.Messages {
		if m.Role != "tool_result" {
			continue
		}
		r := toolResult{Name: m.ToolName, IsError: m.IsError}
		for _, c := range m.Content {
			r.Text += c.Text
		}
		out = append(out, r)
	}
	return out
}

// runCalls runs calls in one execution to its end and returns their
// results; the execution must complete.
func runCalls(t *testing.T, d *devServer, calls ...toolCall) []toolResult {
	t.Helper()
	id := start(t, d, calls, "")
	ex := d.ended(id)
	require.Equal(t, "COMPLETED", ex["status"], ex)
	res := results(t, d, id)
	require.Len(t, res, len(calls))
	return res
}

func bashCall(command string) toolCall {
	return toolCall{Tool: "bash", Args: map[string]any{"command": command}}
}

// capabilityTools are the tools the worker advertises, by name, with
// their descriptions.
func capabilityTools(t *testing.T, d *devServer) map[string]string {
	t.Helper()
	status, caps := d.do(http.MethodGet, "/capabilities", "")
	require.Equal(t, http.StatusOK, status, caps)
	out := map[string]string{}
	list, _ := caps["tools"].([]any)
	for _, tool := range list {
		m := tool.(map[string]any)
		desc, _ := m["description"].(string)
		out[m["name"].(string)] = desc
	}
	return out
}

// waitGone polls until path no longer exists.
func waitGone(t *testing.T, path string) {
	t.Helper()
	require.Eventually(t, func() bool {
		_, err := os.Stat(path)
		return os.IsNotExist(err)
	}, 30*time.Second, 20*time.Millisecond, "%s is still there", path)
}

// portOf is the port of a URL's host.
func portOf(t *testing.T, rawURL string) string {
	t.Helper()
	host := strings.TrimPrefix(strings.TrimPrefix(rawURL, "http://"), "https://")
	host, _, _ = strings.Cut(host, "/")
	_, port, err := net.SplitHostPort(host)
	require.NoError(t, err)
	return port
}

// pyList is a Python list of strings.
func pyList(items []string) string {
	b, _ := json.Marshal(items)
	return string(b)
}
