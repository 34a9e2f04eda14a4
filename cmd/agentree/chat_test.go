package main

import (
	"bytes"
	"errors"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// syncBuffer collects a terminal's output while the test reads it.
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

// chatInTerminal starts `agentree run --chat` in a pseudo-terminal and
// waits for its first "> " prompt.
func chatInTerminal(t *testing.T, d devInstance) (term interface{ Write([]byte) (int, error) }, out *syncBuffer, exited chan error) {
	t.Helper()
	// Without all research tools the scripted model answers at once.
	return inTerminal(t, d, "> ", "run", "--chat", "--model", "scripted/scripted-1", "--tool", "word_count", "hello")
}

// inTerminal starts agentree with args in a pseudo-terminal and waits
// until it has printed want.
func inTerminal(t *testing.T, d devInstance, want string, args ...string) (term interface{ Write([]byte) (int, error) }, out *syncBuffer, exited chan error) {
	t.Helper()
	cmd := exec.Command(buildCLI(t), append(args, d.common...)...)
	f, err := pty.Start(cmd)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cmd.Process.Kill(); f.Close() })
	out = &syncBuffer{}
	go func() { _, _ = bytes.NewBuffer(nil).ReadFrom(teeReader{f, out}) }()
	exited = make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	if !assert.Eventually(t, func() bool { return bytes.Contains([]byte(out.String()), []byte(want)) }, time.Minute, 10*time.Millisecond) {
		t.Fatalf("no %q; the terminal showed: %q", want, out.String())
	}
	return f, out, exited
}

type teeReader struct {
	r interface{ Read([]byte) (int, error) }
	w *syncBuffer
}

func (t teeReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if n > 0 {
		_, _ = t.w.Write(p[:n])
	}
	return n, err
}

func exitStatus(t *testing.T, err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	require.True(t, errors.As(err, &ee), "%v", err)
	return ee.ExitCode()
}

// testChatInterrupt: Ctrl-C at the prompt ends the process within a second
// (the figure issue 20 asks for), saying how to resume or cancel; Ctrl-D
// leaves the chat cleanly.
func testChatInterrupt(t *testing.T, d devInstance) {
	t.Run("Ctrl-C", func(t *testing.T) {
		term, out, exited := chatInTerminal(t, d)
		id := uuidRE.FindString(out.String())
		require.NotEmpty(t, id, out.String())
		sent := time.Now()
		_, err := term.Write([]byte{3})
		require.NoError(t, err)
		select {
		case err := <-exited:
			took := time.Since(sent)
			t.Logf("exited %v after Ctrl-C at the prompt", took)
			require.Less(t, took, time.Second)
			require.Equal(t, exitInterrupted, exitStatus(t, err))
		case <-time.After(5 * time.Second):
			t.Fatalf("still running 5 s after Ctrl-C; the terminal showed: %q", out.String())
		}
		require.Eventually(t, func() bool {
			s := out.String()
			return bytes.Contains([]byte(s), []byte("agentree send "+id)) && bytes.Contains([]byte(s), []byte("agentree cancel "+id))
		}, 5*time.Second, 10*time.Millisecond, "%q", out.String())
		require.NotContains(t, out.String(), "context canceled")
	})
	t.Run("Ctrl-C while streaming", func(t *testing.T) {
		// The research demo streams its answer token by token. (On a
		// terminal the arrow and the name are coloured separately.)
		term, out, exited := inTerminal(t, d, "search_notes", "run", "--demo")
		id := uuidRE.FindString(out.String())
		require.NotEmpty(t, id, out.String())
		_, err := term.Write([]byte{3})
		require.NoError(t, err)
		select {
		case err := <-exited:
			require.Equal(t, exitInterrupted, exitStatus(t, err))
		case <-time.After(5 * time.Second):
			t.Fatalf("still running 5 s after Ctrl-C; the terminal showed: %q", out.String())
		}
		require.Eventually(t, func() bool {
			return bytes.Contains([]byte(out.String()), []byte("goes on without this terminal")) &&
				bytes.Contains([]byte(out.String()), []byte("agentree cancel "+id))
		}, 5*time.Second, 10*time.Millisecond, "%q", out.String())
		require.NotContains(t, out.String(), "context canceled")
	})
	t.Run("Ctrl-D", func(t *testing.T) {
		term, out, exited := chatInTerminal(t, d)
		_, err := term.Write([]byte{4})
		require.NoError(t, err)
		select {
		case err := <-exited:
			require.Equal(t, 0, exitStatus(t, err), "%q", out.String())
		case <-time.After(10 * time.Second):
			t.Fatalf("still running 10 s after Ctrl-D; the terminal showed: %q", out.String())
		}
		require.Eventually(t, func() bool { return bytes.Contains([]byte(out.String()), []byte("left the chat")) },
			5*time.Second, 10*time.Millisecond, "%q", out.String())
	})
}
