package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/tools/mcp"
	"github.com/agentree/agentree/internal/mcptest"
)

// call validates args against the tool's schema, as the runtime does, and
// runs it.
func call(t *testing.T, tools agentsdk.Tools, name, args string) (string, error) {
	t.Helper()
	tool, err := tools.Get(name)
	require.NoError(t, err)
	require.NoError(t, tool.Validate(json.RawMessage(args)))
	return tool.Run(context.Background(), agentsdk.ToolInvocation{ToolCallID: "c1", Arguments: json.RawMessage(args)})
}

func connect(t *testing.T, opts mcp.Options) agentsdk.Tools {
	t.Helper()
	c, err := mcp.Connect(context.Background(), opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	tools, err := agentsdk.NewTools(c.Tools()...)
	require.NoError(t, err)
	return tools
}

func pid(t *testing.T, tools agentsdk.Tools) int {
	t.Helper()
	out, err := call(t, tools, "calc__pid", `{}`)
	require.NoError(t, err)
	p, err := strconv.Atoi(out)
	require.NoError(t, err)
	return p
}

// alive reports whether a process with this ID exists (a reaped one does
// not).
func alive(p int) bool { return !errors.Is(syscall.Kill(p, 0), syscall.ESRCH) }

// TestMCPToolsOverStdio runs a real MCP server process, built from
// internal/mcptest with the same SDK: its tools are listed with their
// schemas, calls answer, an isError result and a timeout become errors
// for the model, and a crashed or killed server is restarted while calls
// meanwhile fail at once.
func TestMCPToolsOverStdio(t *testing.T) {
	bin := mcptest.Build(t)
	t.Setenv("AGENTREE_TEST_SECRET", "worker-only")
	c, err := mcp.Connect(context.Background(), mcp.Options{
		Servers: []mcp.Server{
			{Name: "calc", Command: bin, Env: map[string]string{"GREETING": "hello"}},
			{Name: "slowcalc", Command: bin, Timeout: 300 * time.Millisecond},
		},
		// Long enough that the call right after a crash surely finds the
		// server still restarting.
		MinBackoff: 2 * time.Second,
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	tools, err := agentsdk.NewTools(c.Tools()...)
	require.NoError(t, err)

	t.Run("list", func(t *testing.T) {
		names := []string{"add", "fail", "pieces", "slow", "env", "pid", "whoami", "grow", "crash"}
		var want []string
		for _, s := range []string{"calc", "slowcalc"} {
			for _, n := range names {
				want = append(want, s+"__"+n)
			}
		}
		require.ElementsMatch(t, want, tools.Names())
		add, err := tools.Get("calc__add")
		require.NoError(t, err)
		require.Equal(t, "Adds two integers.", add.Description)
		var schema struct {
			Type       string
			Properties map[string]struct{ Type, Description string }
			Required   []string
		}
		require.NoError(t, json.Unmarshal(add.Parameters, &schema))
		require.Equal(t, "object", schema.Type)
		require.Equal(t, "integer", schema.Properties["a"].Type)
		require.Equal(t, "the second addend", schema.Properties["b"].Description)
		require.ElementsMatch(t, []string{"a", "b"}, schema.Required)
		require.Error(t, add.Validate(json.RawMessage(`{"a":"two","b":3}`)), "the server's schema is enforced before calling it")
	})

	t.Run("call", func(t *testing.T) {
		out, err := call(t, tools, "calc__add", `{"a":2,"b":40}`)
		require.NoError(t, err)
		require.Equal(t, "42", out)
		out, err = call(t, tools, "calc__pieces", `{}`)
		require.NoError(t, err)
		require.Equal(t, "first\nsecond", out)
	})

	t.Run("environment", func(t *testing.T) {
		out, err := call(t, tools, "calc__env", `{"name":"GREETING"}`)
		require.NoError(t, err)
		require.Equal(t, "hello", out)
		out, err = call(t, tools, "calc__env", `{"name":"AGENTREE_TEST_SECRET"}`)
		require.NoError(t, err)
		require.Equal(t, "(unset)", out, "the worker's own variables are not passed on")
		out, err = call(t, tools, "calc__env", `{"name":"PATH"}`)
		require.NoError(t, err)
		require.NotEqual(t, "(unset)", out)
	})

	t.Run("error result", func(t *testing.T) {
		_, err := call(t, tools, "calc__fail", `{"reason":"no reason"}`)
		require.EqualError(t, err, "cannot comply: no reason")
		require.False(t, agentsdk.IsRetryable(err))
	})

	t.Run("timeout", func(t *testing.T) {
		_, err := call(t, tools, "slowcalc__slow", `{"millis":60000}`)
		require.EqualError(t, err, "MCP server slowcalc: slow did not answer within 300ms")
		out, err := call(t, tools, "slowcalc__add", `{"a":1,"b":1}`)
		require.NoError(t, err, "a call that timed out leaves the session usable")
		require.Equal(t, "2", out)
	})

	t.Run("crash and restart", func(t *testing.T) {
		first := pid(t, tools)
		_, err := call(t, tools, "calc__crash", `{}`)
		require.ErrorContains(t, err, "MCP server calc stopped during the call")
		_, err = call(t, tools, "calc__add", `{"a":1,"b":2}`)
		require.ErrorIs(t, err, mcp.ErrRestarting)
		require.ErrorContains(t, err, "MCP server calc is restarting after it stopped")
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			_, err := call(t, tools, "calc__add", `{"a":1,"b":2}`)
			require.ErrorContains(c, err, "(its process ended: exit status 3; reconnection attempt 1)")
		}, 30*time.Second, 10*time.Millisecond, "the error says how the process ended")
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			out, err := call(t, tools, "calc__add", `{"a":1,"b":2}`)
			require.NoError(c, err)
			require.Equal(c, "3", out)
		}, 30*time.Second, 50*time.Millisecond)
		second := pid(t, tools)
		require.NotEqual(t, first, second)
		require.False(t, alive(first), "the crashed process was reaped")

		// Killed from outside, with no call under way: noticed and
		// restarted too.
		require.NoError(t, syscall.Kill(second, syscall.SIGKILL))
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			out, err := call(t, tools, "calc__pid", `{}`)
			require.NoError(c, err)
			require.NotEqual(c, strconv.Itoa(second), out)
		}, 30*time.Second, 50*time.Millisecond)
	})

	t.Run("close", func(t *testing.T) {
		last := pid(t, tools)
		require.True(t, alive(last))
		require.NoError(t, c.Close())
		require.False(t, alive(last), "Close ends the server's process")
		_, err := call(t, tools, "calc__add", `{"a":1,"b":2}`)
		require.EqualError(t, err, "MCP server calc is shut down")
	})
}

// syncBuffer is a log destination tests read while servers write to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestRestartedServerKeepsItsListedTools: a server that comes back with
// other tools is logged, the tools offered stay those listed at start, and
// a call to one it no longer has gets its error.
func TestRestartedServerKeepsItsListedTools(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "changed")
	var logs syncBuffer
	c, err := mcp.Connect(context.Background(), mcp.Options{
		Servers:    []mcp.Server{{Name: "calc", Command: mcptest.Build(t), Env: map[string]string{mcptest.ChangedEnv: marker}}},
		Logger:     slog.New(slog.NewTextHandler(&logs, nil)),
		MinBackoff: 50 * time.Millisecond,
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	tools, err := agentsdk.NewTools(c.Tools()...)
	require.NoError(t, err)
	listed := tools.Names()
	require.Contains(t, listed, "calc__pieces")

	require.NoError(t, os.WriteFile(marker, nil, 0o600))
	_, err = call(t, tools, "calc__crash", `{}`)
	require.Error(t, err)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		require.Contains(c, logs.String(), `changes="added extra, removed pieces"`)
	}, 30*time.Second, 20*time.Millisecond)

	again, err := agentsdk.NewTools(c.Tools()...)
	require.NoError(t, err)
	require.Equal(t, listed, again.Names())
	_, err = call(t, tools, "calc__pieces", `{}`)
	require.ErrorContains(t, err, "MCP server calc: pieces: ")
	out, err := call(t, tools, "calc__add", `{"a":1,"b":1}`)
	require.NoError(t, err)
	require.Equal(t, "2", out)
}

// TestCloseKillsWhatTheServerStarted: a server started through a script
// that leaves a sleeper behind (as npx leaves node) runs in its own
// process group, and Close leaves nothing of it.
func TestCloseKillsWhatTheServerStarted(t *testing.T) {
	bin := mcptest.Build(t)
	c, err := mcp.Connect(context.Background(), mcp.Options{Servers: []mcp.Server{{
		Name: "calc", Command: "sh", Args: []string{"-c", `sleep 300 & exec "$0"`, bin},
	}}})
	require.NoError(t, err)
	tools, err := agentsdk.NewTools(c.Tools()...)
	require.NoError(t, err)
	group := pid(t, tools) // the shell's process ID, which exec kept: its group's ID
	require.Len(t, running(t, group), 2, "the server and the sleeper")
	require.NoError(t, c.Close())
	require.Empty(t, running(t, group), "Close leaves no process of the server's group running")
}

// running lists the processes of a process group that are not zombies
// (a killed process whose new parent has not reaped it yet is no longer
// running), from /proc.
func running(t *testing.T, group int) []string {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	require.NoError(t, err)
	var out []string
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // ended meanwhile
		}
		// pid (comm) state ppid pgrp …; comm may hold spaces.
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) > 2 && f[2] == strconv.Itoa(group) && f[0] != "Z" {
			out = append(out, path)
		}
	}
	return out
}

// TestServerPerOrganization: each organization's calls go through a
// session with its own credentials, or the shared one, and carry the
// organization in _meta; an organization not enabled is refused; tools
// default to ask unless the server says they only read; and a server
// that announces a new tool list is listed again.
func TestServerPerOrganization(t *testing.T) {
	changed := make(chan struct{}, 4)
	c, err := mcp.Connect(context.Background(), mcp.Options{
		Servers: []mcp.Server{{Name: "calc", Command: mcptest.Build(t), Env: map[string]string{mcptest.TokenEnv: "shared"},
			Orgs: map[string]mcp.Access{
				"acme":   {Env: map[string]string{mcptest.TokenEnv: "acme-token"}},
				"globex": {},
			}}},
		OnToolsChanged: func() { changed <- struct{}{} },
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	tools, err := agentsdk.NewTools(c.Tools()...)
	require.NoError(t, err)
	whoami, err := tools.Get("calc__whoami")
	require.NoError(t, err)
	require.Equal(t, []string{"acme", "globex"}, whoami.Orgs)
	require.False(t, whoami.ServesOrg("initech"))
	run := func(tool *agentsdk.Tool, org string) (string, error) {
		return tool.Run(context.Background(), agentsdk.ToolInvocation{OrgID: org, ToolCallID: "c1", Arguments: json.RawMessage(`{}`)})
	}
	for org, want := range map[string]string{"acme": "token=acme-token org=acme", "globex": "token=shared org=globex"} {
		out, err := run(whoami, org)
		require.NoError(t, err, org)
		require.Equal(t, want, out, org)
	}
	_, err = run(whoami, "initech")
	require.EqualError(t, err, "MCP server calc is not enabled for this organization")

	grow, err := tools.Get("calc__grow")
	require.NoError(t, err)
	slow, err := tools.Get("calc__slow")
	require.NoError(t, err)
	require.Equal(t, agentsdk.PolicyAuto, whoami.Policy, "read-only")
	require.Equal(t, agentsdk.PolicyAsk, grow.Policy, "destructive")
	require.Equal(t, agentsdk.PolicyAsk, slow.Policy, "no annotations")

	// grow runs on acme's session; the shared session (which lists what
	// is offered) is another process, so grow there too.
	for _, org := range []string{"globex", "acme"} {
		out, err := run(grow, org)
		require.NoError(t, err)
		require.Equal(t, "grew", out)
	}
	select {
	case <-changed:
	case <-time.After(30 * time.Second):
		t.Fatal("the server's list_changed was not followed by a new listing")
	}
	again, err := agentsdk.NewTools(c.Tools()...)
	require.NoError(t, err)
	grown, err := again.Get("calc__grown")
	require.NoError(t, err)
	out, err := run(grown, "acme")
	require.NoError(t, err)
	require.Equal(t, "grown", out)
	same, err := again.Get("calc__whoami")
	require.NoError(t, err)
	require.Same(t, whoami, same, "an unchanged tool keeps its agentsdk tool")
}
