package scripted_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
)

// TestEnvironmentDelaysEveryAnswer: with EnvDelay set, an answer the script
// gives at once waits, and the wait honours the context.
func TestEnvironmentDelaysEveryAnswer(t *testing.T) {
	t.Setenv(scripted.EnvDelay, "1h")
	p := scripted.New(scripted.Turns(scripted.Turn{Text: "at once"}))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := p.Stream(ctx, conversation(0), func(agentsdk.StreamEvent) {})
		done <- err
	}()
	require.Never(t, func() bool { return len(done) > 0 }, 100*time.Millisecond, 10*time.Millisecond, "answered before the delay")
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
}

// TestEnvironmentDelaysEveryToken: EnvTokenDelay holds back the tokens
// after the first.
func TestEnvironmentDelaysEveryToken(t *testing.T) {
	t.Setenv(scripted.EnvTokenDelay, "1h")
	p := scripted.New(scripted.Turns(scripted.Turn{Text: "one two three"}))
	ctx, cancel := context.WithCancel(context.Background())
	tokens := make(chan string, 3)
	done := make(chan error, 1)
	go func() {
		_, err := p.Stream(ctx, conversation(0), func(e agentsdk.StreamEvent) { tokens <- e.Text })
		done <- err
	}()
	require.Never(t, func() bool { return len(tokens) > 0 }, 100*time.Millisecond, 10*time.Millisecond)
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
}

func TestBadEnvironmentValuesAreIgnored(t *testing.T) {
	t.Setenv(scripted.EnvDelay, "soon")
	t.Setenv(scripted.EnvTokenDelay, "-1s")
	p := scripted.New(scripted.Turns(scripted.Turn{Text: "fine"}))
	msg, _ := answer(t, p, conversation(0))
	require.Equal(t, "fine", msg.Text())
}

// TestCallLogRecordsStartAndEnd: each call appends a start and an end
// line naming its turn and the last user message.
func TestCallLogRecordsStartAndEnd(t *testing.T) {
	path := filepath.Join(t.TempDir(), "calls.jsonl")
	t.Setenv(scripted.EnvCallLog, path)
	p := scripted.New(scripted.Turns(scripted.Turn{Text: "a"}, scripted.Turn{Text: "b"}))
	answer(t, p, conversation(0))
	answer(t, p, conversation(1))

	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var got []scripted.CallRecord
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r scripted.CallRecord
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r))
		got = append(got, r)
	}
	require.Len(t, got, 4)
	for i, want := range []struct {
		phase string
		turn  int
	}{{"start", 0}, {"end", 0}, {"start", 1}, {"end", 1}} {
		require.Equal(t, want.phase, got[i].Phase, i)
		require.Equal(t, want.turn, got[i].Turn, i)
		require.Equal(t, "go", got[i].User, i)
		require.Equal(t, os.Getpid(), got[i].PID)
		require.False(t, got[i].At.IsZero())
	}
}

func TestWithLatencyAndWithCallLogSetTheSame(t *testing.T) {
	path := filepath.Join(t.TempDir(), "calls.jsonl")
	p := scripted.New(scripted.Turns(scripted.Turn{Text: "x"})).WithLatency(scripted.Latency{Delay: time.Hour}).WithCallLog(path)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := p.Stream(ctx, conversation(0), func(agentsdk.StreamEvent) {})
	require.ErrorIs(t, err, context.Canceled)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(b), `"phase":"start"`)
	require.NotContains(t, string(b), `"phase":"end"`)
}

// TestEnvironmentHangArmsOneCall: with EnvHang's file present, one call
// sends its first token and then nothing until its context ends; the file
// is gone, so the next call answers in full.
func TestEnvironmentHangArmsOneCall(t *testing.T) {
	arm := filepath.Join(t.TempDir(), "hang")
	require.NoError(t, os.WriteFile(arm, nil, 0o644))
	t.Setenv(scripted.EnvHang, arm)
	p := scripted.New(scripted.Turns(scripted.Turn{Text: "one two three"}))

	ctx, cancel := context.WithCancel(context.Background())
	tokens := make(chan string, 3)
	done := make(chan error, 1)
	go func() {
		_, err := p.Stream(ctx, conversation(0), func(ev agentsdk.StreamEvent) { tokens <- ev.Text })
		done <- err
	}()
	require.Equal(t, "one", <-tokens)
	require.NoFileExists(t, arm, "the hanging call took the file")
	require.Never(t, func() bool { return len(tokens) > 0 || len(done) > 0 }, 100*time.Millisecond, 10*time.Millisecond, "the stream went on")
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)

	resp, err := p.Stream(context.Background(), conversation(0), func(agentsdk.StreamEvent) {})
	require.NoError(t, err)
	require.Equal(t, "one two three", resp.Message.Text(), "one file, one hang")
}
