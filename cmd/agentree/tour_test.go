package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/internal/pgtest"
	"github.com/agentree/agentree/internal/temporaltest"
)

// tourBlock is the README's tour: the shell block after the
// "<!-- tour" marker.
func tourBlock(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(b), "<!-- tour")
	require.True(t, ok, "README.md has no <!-- tour --> marker")
	_, rest, ok = strings.Cut(rest, "```sh\n")
	require.True(t, ok)
	block, _, ok := strings.Cut(rest, "```")
	require.True(t, ok)
	return block
}

// TestReadmeTour runs the README's tour as written, top to bottom, in a
// directory laid out like a clone after `make run` (bin/agentree,
// .data/dev-key), against an `agentree dev` process of its own; only
// AGENTREE_ADDR points the tour at it. It checks what each step printed.
func TestReadmeTour(t *testing.T) {
	temporaltest.Address(t)
	block := tourBlock(t)
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "bin"), 0o755))
	require.NoError(t, os.Symlink(buildCLI(t), filepath.Join(dir, "bin", "agentree")))

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dev := exec.CommandContext(ctx, filepath.Join(dir, "bin", "agentree"), "dev",
		"--addr", "127.0.0.1:0", "--key-file", ".data/dev-key", "--task-queue", "tour-"+uuid.NewString()[:8])
	dev.Dir = dir
	dev.Env = append(os.Environ(), "DATABASE_URL="+pgtest.URL(t), "ANTHROPIC_API_KEY=", "OPENAI_API_KEY=")
	stderr, err := dev.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, dev.Start())
	t.Cleanup(func() { _ = dev.Process.Signal(os.Interrupt); _ = dev.Wait() })
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		re := regexp.MustCompile(`gateway on (http://\S+)`)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	var base string
	select {
	case base = <-addr:
	case <-ctx.Done():
		t.Fatal("agentree dev never said where its gateway is")
	}

	tour := exec.CommandContext(ctx, "bash", "-e", "-o", "pipefail", "-c", block)
	tour.Dir = dir
	tour.Env = append(os.Environ(), "AGENTREE_ADDR="+base, "AGENTREE_API_KEY=", "NO_COLOR=1")
	outBytes, err := tour.CombinedOutput()
	out := string(outBytes)
	require.NoError(t, err, out)
	t.Logf("the tour printed:\n%s", out)

	id := regexp.MustCompile(`execution (` + uuidRE.String() + `)`).FindStringSubmatch(out)
	require.NotNil(t, id, "the tour printed no execution ID:\n%s", out)
	must := []string{
		"you:\nWhat do my notes say about Temporal?\n\nagent:\nI'll search", // show --wait: the first answer
		`"signalId"`,                          // the REST follow-up was accepted
		"Source: the note",                    // send --wait printed the answer
		"WAITING",                             // ... and the execution waits again
		id[1] + "  react-agent",               // ls lists it
		"event: agent.cancelled",              // the stream replayed to its end
		"--model scripted/scripted-1 --tool ", // run's defaults, said on stderr
		"✓ word_count",                        // ... which include every research tool
		"completed",                           // ... and its run completed
	}
	for _, s := range must {
		require.Contains(t, out, s, "tour output:\n%s", out)
	}
	require.Regexp(t, `(?m)^search_notes +tour-`, out, "agentree tools lists the worker's tools")
	require.Regexp(t, `"toolName": ?"word_count"`, out, "the tool calls")
	require.Regexp(t, `"sequence": ?[1-9]`, out, "the checkpoints")
	require.Regexp(t, id[1]+` CANCELL(ING|ED)`, out, "cancel")
}
