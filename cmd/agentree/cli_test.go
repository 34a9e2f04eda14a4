package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/internal/pgtest"
	"github.com/agentree/agentree/internal/temporaltest"
)

// capture runs fn with os.Stdout going to a buffer.
func capture(t *testing.T, fn func() error) (string, error) {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	old := os.Stdout
	os.Stdout = w
	done := make(chan []byte)
	go func() { b, _ := io.ReadAll(r); done <- b }()
	runErr := fn()
	os.Stdout = old
	require.NoError(t, w.Close())
	return string(<-done), runErr
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// TestDevAndClientCommands runs `agentree dev` (worker and gateway) and
// drives it with the client commands, as `make run` does.
func TestDevAndClientCommands(t *testing.T) {
	temporaltest.Address(t)
	t.Setenv("DATABASE_URL", pgtest.URL(t))
	t.Setenv("ANTHROPIC_API_KEY", "")
	t.Setenv("OPENAI_API_KEY", "")
	addr, keyFile := freeAddr(t), filepath.Join(t.TempDir(), "dev-key")
	ctx, cancel := context.WithCancel(context.Background())
	devDone := make(chan error, 1)
	go func() {
		devDone <- runDev(ctx, []string{"--addr", addr, "--key-file", keyFile, "--task-queue", "cli-" + uuid.NewString()[:8]})
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
	common := []string{"--addr", "http://" + addr, "--org", "dev", "--key", key}

	out, err := capture(t, func() error { return runRun(ctx, append(common, "--demo")) })
	require.NoError(t, err, out)
	require.Contains(t, out, "→ search_notes {", "tool calls are shown with their arguments as they start")
	require.NotContains(t, out, "null")
	require.Contains(t, out, "✓ search_notes")
	require.Contains(t, out, "completed")

	out, err = capture(t, func() error { return runList(ctx, append(common, "--json")) })
	require.NoError(t, err)
	require.Contains(t, out, `"status":"COMPLETED"`)
	id := out[strings.Index(out, `"id":"`)+6:][:36]

	out, err = capture(t, func() error { return runShow(ctx, append(common, id)) })
	require.NoError(t, err)
	require.Contains(t, out, "you:")
	require.Contains(t, out, "agent:")

	// Clear errors, no stack traces, for a wrong address, key or ID.
	_, err = capture(t, func() error { return runList(ctx, []string{"--addr", "http://" + freeAddr(t), "--key", key}) })
	require.ErrorContains(t, err, "cannot reach the gateway")
	_, err = capture(t, func() error { return runList(ctx, []string{"--addr", "http://" + addr, "--key", "agt_wrong"}) })
	require.ErrorContains(t, err, "API key was refused")
	_, err = capture(t, func() error { return runShow(ctx, append(common, uuid.NewString())) })
	require.ErrorContains(t, err, "not found")
	_, err = capture(t, func() error { return runCancel(ctx, append(common, "not-an-id")) })
	require.Error(t, err)
	require.NotContains(t, err.Error(), "goroutine")
	var buf bytes.Buffer
	buf.WriteString(err.Error())
	require.Less(t, buf.Len(), 300, "one line, not a dump")
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
