package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/anthropic"
	"github.com/agentree/agentree/agentsdk/providertest"
	"github.com/agentree/agentree/agentsdk/tools/demo"
)

// nodeHarnessDir is the Node suite that drives the gateway with the
// official `openai` and `@ag-ui/client` npm packages.
const nodeHarnessDir = "../interop/node"

// nodeHarnessTests is how many tests the Node suite has: a suite that
// ran fewer (a file not found, a test dropped) fails here.
const nodeHarnessTests = 7

// promptModel is a fake Anthropic server that answers from the request
// itself, so the Node suite's tests may run in any order: a prompt P is
// answered "You said: P (turn N)", N the number of user messages sent
// (the history the model saw), with 10·N input and 5 output tokens; a
// prompt about the notes thinks, says so, searches them and, given the
// result, answers "Found it."; one asking to count calls word_count and,
// given its result, answers "Three words.".
type promptModel struct{ t *testing.T }

func (m promptModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 {
		m.t.Errorf("promptModel: undecodable request (%v)", err)
		http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	var prompts []string
	toolResult := false
	for _, msg := range req.Messages {
		if msg.Role != "user" {
			continue
		}
		text, result := userContent(msg.Content)
		toolResult = result
		if !result {
			prompts = append(prompts, text)
		}
	}
	if len(prompts) == 0 {
		m.t.Errorf("promptModel: a request with no user prompt")
		http.Error(w, `{"type":"error","error":{"type":"invalid_request_error","message":"no prompt"}}`, http.StatusBadRequest)
		return
	}
	turn := int64(len(prompts))
	s := providertest.NewAnthropicStream(responsesModel, providertest.AnthropicUsage{Input: 10 * turn})
	var body string
	switch last := prompts[len(prompts)-1]; {
	case toolResult && strings.Contains(last, "count"):
		body = s.Text("Three ", "words.").End("end_turn", 5)
	case toolResult:
		body = s.Text("Found ", "it.").End("end_turn", 5)
	case strings.Contains(last, "count"):
		body = s.Text("Counting.").ToolUse("toolu_2", demo.WordCountTool, `{"text": "three little words"}`).End("tool_use", 5)
	case strings.Contains(last, "notes"):
		body = s.Thinking("sig-1", "Checking ", "the notes.").Text("Let me ", "search.").
			ToolUse("toolu_1", demo.SearchNotesTool, `{"query":`, ` "history limit"}`).End("tool_use", 5)
	default:
		body = s.Text("You said: ", last, fmt.Sprintf(" (turn %d)", turn)).End("end_turn", 5)
	}
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = io.WriteString(w, body)
}

// userContent is a user message's text, and whether it is a tool result
// (Anthropic sends those as user messages).
func userContent(raw json.RawMessage) (string, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, false
	}
	var blocks []struct{ Type, Text string }
	_ = json.Unmarshal(raw, &blocks)
	var b strings.Builder
	for _, bl := range blocks {
		if bl.Type == "tool_result" {
			return "", true
		}
		b.WriteString(bl.Text)
	}
	return b.String(), false
}

// TestNodeHarness runs interop/node's suite (node --test) against a real
// gateway and worker: the official `openai` client creates, streams and
// chains responses, @ag-ui/core's schemas check every event of an
// execution's AG-UI stream, and @ag-ui/client's HttpAgent runs a
// definition. The suite's packages come from its package-lock (`make
// test` runs `npm ci` for it); any failing Node test fails this one with
// Node's report.
func TestNodeHarness(t *testing.T) {
	dir, node := nodeHarness(t)

	fake := httptest.NewServer(promptModel{t})
	t.Cleanup(fake.Close)
	p, err := anthropic.New(anthropic.Options{BaseURL: fake.URL, APIKey: "test-key", Models: []string{responsesModel}})
	require.NoError(t, err)
	e := newEnv(t, envOptions{providers: []agentsdk.Provider{p}, tools: demo.Tools(),
		toolPolicy: agentsdk.Policies{demo.WordCountTool: agentsdk.PolicyAsk}})
	models := []any{map[string]any{"provider": "anthropic", "modelId": responsesModel}}

	// An execution that thinks, calls a tool and answers, whose AG-UI
	// stream the suite replays; and a definition it runs over AG-UI, whose
	// word_count calls wait for approval.
	base := "/api/orgs/" + e.orgA.Slug
	ex := e.ok(e.keyA, http.MethodPost, base+"/agent-executions", map[string]any{
		"kind": "react-agent", "userPrompt": "What do the notes say about the history limit?", "models": models,
		"tools": []string{demo.SearchNotesTool}, "config": map[string]any{"mode": "one-shot"},
	})
	id := ex["id"].(string)
	e.waitStatus(id, "COMPLETED", time.Minute)
	def := e.ok(e.keyA, http.MethodPost, base+"/agent-definitions", map[string]any{
		"name": "Echo", "slug": "echo", "models": models, "tools": []string{demo.WordCountTool},
	})

	// Its own files: a2a.test.js is TestA2AWithOfficialClient's.
	runNodeSuite(t, node, dir, nodeHarnessTests, []string{
		"AGENTREE_BASE_URL=" + e.base, "AGENTREE_API_KEY=" + e.keyA, "AGENTREE_ORG=" + e.orgA.Slug,
		"AGENTREE_MODEL=" + responsesModel, "AGENTREE_EXECUTION_ID=" + id, "AGENTREE_DEFINITION_ID=" + def["id"].(string),
	}, "responses.test.js", "agui.test.js")
}

// runNodeSuite runs the Node test files (node --test) in dir with env
// added to the environment; any failing test fails t with Node's report,
// and so does a suite that ran other than pass tests (a file not found, a
// test dropped).
func runNodeSuite(t *testing.T, node, dir string, pass int, env []string, files ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{"--test", "--test-concurrency=1", "--test-reporter=tap"}, files...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		require.FailNow(t, "a Node suite failed", "node --test %v exited %d:\n%s", files, exit.ExitCode(), out)
	}
	require.NoError(t, err, "node --test: %s", out)
	require.Regexp(t, regexp.MustCompile(fmt.Sprintf(`(?m)^# pass %d$`, pass)), string(out), "every Node test ran and passed:\n%s", out)
	require.Regexp(t, regexp.MustCompile(`(?m)^# fail 0$`), string(out), "%s", out)
}

// nodeHarness is the Node harness's directory and the node to run it
// with; a harness not installed fails the test, saying how to install it.
func nodeHarness(t *testing.T) (dir, node string) {
	t.Helper()
	dir, err := filepath.Abs(nodeHarnessDir)
	require.NoError(t, err)
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@ag-ui", "client")); err != nil {
		require.FailNow(t, "the Node harness is not installed",
			"%s has no node_modules: run `make test` (which installs it) or `npm ci --prefix interop/node` (%v)", dir, err)
	}
	node, err = exec.LookPath("node")
	require.NoError(t, err, "the Node harness needs node on PATH")
	return dir, node
}

// requireAGUIValid has @ag-ui/core's own schemas (interop/node,
// validate-agui.js) check every event of an AG-UI stream.
func requireAGUIValid(t *testing.T, events []sseEvent) {
	t.Helper()
	dir, node := nodeHarness(t)
	var lines strings.Builder
	for _, ev := range events {
		lines.WriteString(ev.Data + "\n")
	}
	file := filepath.Join(t.TempDir(), "agui.jsonl")
	require.NoError(t, os.WriteFile(file, []byte(lines.String()), 0o600))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "validate-agui.js", file)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "@ag-ui/core refused an event: %s", out)
	require.Equal(t, fmt.Sprintf("%d AG-UI events valid\n", len(events)), string(out))
}
