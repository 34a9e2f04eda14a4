package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/internal/pgtest"
	"github.com/agentree/agentree/internal/temporaltest"
)

var uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// cli runs one command line in-process, as main does, and returns what it
// printed on stdout and stderr.
func cli(ctx context.Context, args ...string) (stdout, stderr string, err error) {
	root := newRootCmd()
	var out, errb bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errb)
	root.SetArgs(args)
	err = root.ExecuteContext(ctx)
	return out.String(), errb.String(), err
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// devInstance is an `agentree dev` run in-process on its own schema and
// task queue.
type devInstance struct {
	base, key string
	common    []string // --addr, --org, --key-file
}

func startDev(t *testing.T, args ...string) devInstance {
	t.Helper()
	temporaltest.Address(t)
	t.Setenv("DATABASE_URL", pgtest.URL(t))
	t.Setenv("ANTHROPIC_API_KEY", "")
	t.Setenv("OPENAI_API_KEY", "")
	addr, keyFile := freeAddr(t), filepath.Join(t.TempDir(), "dev-key")
	ctx, cancel := context.WithCancel(context.Background())
	devDone := make(chan error, 1)
	go func() {
		devDone <- runDev(ctx, append([]string{"--addr", addr, "--key-file", keyFile, "--task-queue", "cli-" + uuid.NewString()[:8]}, args...))
	}()
	t.Cleanup(func() { cancel(); <-devDone })
	require.Eventually(t, func() bool {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	}, time.Minute, 10*time.Millisecond, "agentree dev never answered")
	keyBytes, err := os.ReadFile(keyFile)
	require.NoError(t, err)
	key := strings.TrimSpace(string(keyBytes))
	base := "http://" + addr
	info, err := os.Stat(keyFile)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "the dev key is its owner's only")
	return devInstance{base: base, key: key, common: []string{"--addr", base, "--org", "dev", "--key-file", keyFile}}
}

// TestDevAndClientCommands runs `agentree dev` (worker and gateway) and
// drives it with the client commands, as `make run` does.
func TestDevAndClientCommands(t *testing.T) {
	d := startDev(t)
	ctx := context.Background()
	c := func(args ...string) (string, string, error) { return cli(ctx, append(args, d.common...)...) }

	out, _, err := c("run", "--demo")
	require.NoError(t, err, out)
	require.Contains(t, out, "→ search_notes {", "tool calls are shown with their arguments as they start")
	require.NotContains(t, out, "null")
	require.Contains(t, out, "✓ search_notes")
	require.Contains(t, out, "completed")

	out, _, err = c("ls", "--json")
	require.NoError(t, err)
	require.Contains(t, out, `"status":"COMPLETED"`)
	id := uuidRE.FindString(out)
	require.NotEmpty(t, id)

	t.Run("flags after positional arguments", func(t *testing.T) {
		out, _, err := cli(ctx, append([]string{"show", id}, append(d.common, "--json")...)...)
		require.NoError(t, err)
		require.Contains(t, out, `"execution":{"id":"`+id+`"`)
		out, _, err = c("show", id)
		require.NoError(t, err)
		require.Contains(t, out, "you:")
		require.Contains(t, out, "agent:")
	})

	t.Run("run picks the demo model and tools when none are given", func(t *testing.T) {
		out, errOut, err := c("run", "What do my notes say about Temporal?")
		require.NoError(t, err, out+errOut)
		require.Contains(t, errOut, "scripted/scripted-1")
		for _, tool := range []string{"search_notes", "fetch_note", "word_count"} {
			require.Contains(t, errOut, tool)
		}
		require.Contains(t, out, "✓ word_count", "the scripted model got every research tool")
		require.Contains(t, out, "completed")
	})

	t.Run("tools says what the gateway offers, or that it cannot", func(t *testing.T) {
		out, _, err := c("tools")
		if err != nil {
			require.ErrorContains(t, err, "the gateway does not serve capabilities yet")
		} else {
			require.Contains(t, out, "search_notes")
		}
	})

	t.Run("definitions by slug", func(t *testing.T) {
		slug := "researcher-" + uuid.NewString()[:6]
		req, err := http.NewRequest("POST", d.base+"/api/orgs/dev/agent-definitions", strings.NewReader(`{
			"name": "Researcher", "slug": "`+slug+`", "models": [{"provider": "scripted", "modelId": "scripted-1"}],
			"tools": ["search_notes", "fetch_note", "word_count"]}`))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+d.key)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, 200, resp.StatusCode)
		out, _, err := c("run", "--definition", slug, "--detach", "--json", "hello")
		require.NoError(t, err)
		require.Regexp(t, `"agentDefinitionId":"`+uuidRE.String()+`"`, out)
		_, _, err = c("run", "--definition", "no-such-"+slug, "hello")
		require.ErrorContains(t, err, `no agent definition with slug or ID "no-such-`+slug+`"`)
	})

	t.Run("ls counts answered turns as steps", func(t *testing.T) {
		// Without all research tools the scripted model answers at once:
		// three answered turns, no tool calls. run returns once the agent
		// waits, so each message gets its own answer.
		out, _, err := c("run", "--mode", "multi-turn", "--model", "scripted/scripted-1", "--tool", "word_count", "one")
		require.NoError(t, err)
		require.Contains(t, out, "waiting for input")
		chat := uuidRE.FindString(out)
		for _, msg := range []string{"two", "three"} {
			out, _, err = c("send", chat, msg, "--wait")
			require.NoError(t, err)
			require.Contains(t, out, "agent:")
			require.Contains(t, out, "WAITING")
		}
		out, _, err = c("ls")
		require.NoError(t, err)
		require.Regexp(t, chat+`\s+react-agent\s+WAITING\s+3\s`, out)
	})

	t.Run("clear errors", func(t *testing.T) {
		_, _, err := cli(ctx, "ls", "--addr", "http://"+freeAddr(t), "--key", d.key)
		require.ErrorContains(t, err, "cannot reach the gateway")
		_, _, err = cli(ctx, "ls", "--addr", d.base, "--key", "agt_wrong")
		require.ErrorContains(t, err, "API key was refused")
		_, _, err = c("show", uuid.NewString())
		require.ErrorContains(t, err, "not found")
		_, _, err = c("show")
		require.ErrorContains(t, err, "give one execution ID")
		_, _, err = c("cancel", "not-an-id")
		require.Error(t, err)
		require.NotContains(t, err.Error(), "goroutine")
		require.Less(t, len(err.Error()), 300, "one line, not a dump")
	})

	t.Run("Ctrl-C at the chat prompt", func(t *testing.T) { testChatInterrupt(t, d) })
	t.Run("approvals", func(t *testing.T) { testApprovals(t, d, c) })
	t.Run("time travel, timeline, fork", func(t *testing.T) {
		out, _, err := c("run", "--demo")
		require.NoError(t, err, out)
		id := uuidRE.FindString(out)
		req, err := http.NewRequest("GET", d.base+"/api/orgs/dev/agent-executions/"+id+"/entries?pageSize=500", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+d.key)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		var list struct {
			Entries []struct{ ID, Type, Role string }
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&list))
		resp.Body.Close()
		var answer, user string
		for _, e := range list.Entries {
			if e.Role == "assistant" && answer == "" {
				answer = e.ID // it holds the record of the call that wrote it
			}
			if e.Role == "user" && user == "" {
				user = e.ID
			}
		}
		out, _, err = c("show", id, "--context", answer)
		require.NoError(t, err)
		require.Contains(t, out, "the request this model call sent")
		require.Contains(t, out, "model scripted/scripted-1")
		require.Contains(t, out, "user: How does Agentree")
		out, _, err = c("timeline", id)
		require.NoError(t, err)
		require.Contains(t, out, "window 32768 tokens")
		require.Regexp(t, `assistant +[+-]\d+  +\d+ `, out, "an answer's point is the provider's count, not an estimate")
		out, _, err = c("fork", id, "--at", user, "a", "different", "question")
		require.NoError(t, err, out)
		require.Contains(t, out, "forks "+id+" at "+user)
		require.Contains(t, out, "completed")
		_, _, err = c("fork", id, "the prompt")
		require.ErrorContains(t, err, "--at ENTRY_ID is required")
	})
	t.Run("pause and resume", func(t *testing.T) {
		out, _, err := c("run", "--demo", "--max-steps", "1")
		require.NoError(t, err, out)
		id := uuidRE.FindString(out)
		require.Contains(t, out, "paused after 1 steps (its budget); continue it with: agentree resume "+id)
		out, _, err = c("resume", id, "--max-steps", "10", "Go on.")
		require.NoError(t, err, out)
		require.Contains(t, out, "resumes "+id)
		require.Contains(t, out, "completed")
		_, _, err = c("resume", id)
		require.ErrorContains(t, err, "resumed already")
	})
}

// testApprovals: a call whose policy is ask is shown and waits; without a
// terminal run says how to decide, and approve / reject decide; on a
// terminal run asks, and "a" approves the tool for the rest of the run.
func testApprovals(t *testing.T, d devInstance, c func(args ...string) (string, string, error)) {
	out, _, err := c("run", "--demo", "--policy", "search_notes=ask")
	require.NoError(t, err, out)
	require.Contains(t, out, "? search_notes {")
	require.Contains(t, out, "waiting for approval")
	id := uuidRE.FindString(out)
	call := regexp.MustCompile(`agentree approve ` + id + ` (\S+)`).FindStringSubmatch(out)
	require.Len(t, call, 2, "run says how to approve: %s", out)
	require.Contains(t, out, "agentree reject "+id+" "+call[1])

	_, _, err = c("approve", id, "no-such-call")
	require.ErrorContains(t, err, `tool call "no-such-call" not found`)
	out, _, err = c("approve", id, call[1], "--always")
	require.NoError(t, err)
	require.Contains(t, out, "approved "+call[1]+" (search_notes)")
	_, _, err = c("reject", id, call[1], "--reason", "changed my mind")
	require.ErrorContains(t, err, "(409 conflict)")
	require.Eventually(t, func() bool {
		out, _, err := c("show", id, "--json")
		return err == nil && strings.Contains(out, `"status":"COMPLETED"`)
	}, time.Minute, 20*time.Millisecond, "the approved execution never completed")

	term, screen, exited := inTerminal(t, d, "[a]lways", "run", "--demo", "--policy", "search_notes=ask")
	_, err = term.Write([]byte("a\n"))
	require.NoError(t, err)
	select {
	case err := <-exited:
		require.Equal(t, 0, exitStatus(t, err), "%q", screen.String())
	case <-time.After(time.Minute):
		t.Fatalf("still running a minute after the approval; the terminal showed: %q", screen.String())
	}
	// The pty may still hold the last lines when the process exits.
	require.Eventually(t, func() bool { return strings.Contains(screen.String(), "completed") },
		5*time.Second, 10*time.Millisecond, "%q", screen.String())
	require.Equal(t, 1, strings.Count(screen.String(), "[a]lways"), "always: asked once")
}

// TestDemoUsesTheProviderWhoseKeyIsSet: make run's demo switches from the
// scripted model to a real provider when its API key is in the environment,
// and the worker registers that provider.
func TestDemoUsesTheProviderWhoseKeyIsSet(t *testing.T) {
	for _, tc := range []struct{ anthropic, openai, want string }{
		{"", "", "scripted/scripted-1"},
		{"sk-ant-x", "", "anthropic/claude-sonnet-4-5"},
		{"", "sk-x", "openai/gpt-4.1-mini"},
		{"sk-ant-x", "sk-x", "anthropic/claude-sonnet-4-5"},
	} {
		t.Setenv("ANTHROPIC_API_KEY", tc.anthropic)
		t.Setenv("OPENAI_API_KEY", tc.openai)
		require.Equal(t, tc.want, demoModel().Key())
		cfg, err := loadWorkerConfig("", "", "")
		require.NoError(t, err)
		w, err := cfg.Build()
		require.NoError(t, err)
		_, providers, _ := names(w)
		require.Contains(t, providers, strings.Split(tc.want, "/")[0])
	}
}

// TestHelpExitsZero runs the built binary with -h on every command: help
// goes to the terminal with exit status 0, and `migrate -h` migrates
// nothing (its database is unreachable, so running would fail).
func TestHelpExitsZero(t *testing.T) {
	bin := buildCLI(t)
	var paths [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		paths = append(paths, path)
		for _, sub := range c.Commands() {
			if sub.Name() != "help" {
				walk(sub, append(append([]string(nil), path...), sub.Name()))
			}
		}
	}
	walk(newRootCmd(), nil)
	require.Greater(t, len(paths), 12)
	for _, p := range paths {
		for _, h := range []string{"-h", "--help"} {
			cmd := exec.Command(bin, append(append([]string(nil), p...), h)...)
			cmd.Env = append(os.Environ(), "DATABASE_URL=postgres://nobody@127.0.0.1:1/none?connect_timeout=1", "TEMPORAL_ADDRESS=127.0.0.1:1")
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "agentree %s %s: %s", strings.Join(p, " "), h, out)
			require.Contains(t, strings.ToLower(string(out)), "usage", "agentree %s %s", strings.Join(p, " "), h)
		}
	}
}

// TestCompletion: shells get a completion script.
func TestCompletion(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish"} {
		out, _, err := cli(context.Background(), "completion", shell)
		require.NoError(t, err)
		require.Contains(t, out, "agentree")
		require.Greater(t, len(out), 1000, shell)
	}
	out, _, err := cli(context.Background(), "__complete", "run", "--mode", "")
	require.NoError(t, err)
	require.Contains(t, out, "multi-turn")
}

var (
	cliOnce sync.Once
	cliBin  string
	cliErr  error
)

// buildCLI builds this binary once per test process, for tests that need
// a real process (exit status, signals, a terminal).
func buildCLI(t *testing.T) string {
	t.Helper()
	cliOnce.Do(func() {
		dir, err := os.MkdirTemp("", "agentree-cli-")
		if err != nil {
			cliErr = err
			return
		}
		cliBin = filepath.Join(dir, "agentree")
		out, err := exec.Command("go", "build", "-o", cliBin, ".").CombinedOutput()
		if err != nil {
			cliErr = &buildError{out: string(out), err: err}
		}
	})
	require.NoError(t, cliErr)
	return cliBin
}

type buildError struct {
	out string
	err error
}

func (e *buildError) Error() string { return e.err.Error() + ": " + e.out }

func TestMain(m *testing.M) {
	code := m.Run()
	if cliBin != "" {
		os.RemoveAll(filepath.Dir(cliBin))
	}
	os.Exit(code)
}

// TestTemporalUIAddress: agentree dev prints the UI `make up` started
// (services.sh exports AGENTREE_TEMPORAL_UI), else the one at
// AGENTREE_TEMPORAL_UI_PORT.
func TestTemporalUIAddress(t *testing.T) {
	t.Setenv("AGENTREE_TEMPORAL_UI", "")
	t.Setenv("AGENTREE_TEMPORAL_UI_PORT", "")
	require.Equal(t, "http://127.0.0.1:8233", temporalUIDefault())
	t.Setenv("AGENTREE_TEMPORAL_UI_PORT", "9233")
	require.Equal(t, "http://127.0.0.1:9233", temporalUIDefault())
	t.Setenv("AGENTREE_TEMPORAL_UI", "http://127.0.0.1:18233")
	require.Equal(t, "http://127.0.0.1:18233", temporalUIDefault())
}
