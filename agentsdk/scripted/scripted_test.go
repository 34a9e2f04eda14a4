package scripted_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
)

// conversation is a request with assistants assistant messages among
// other messages, which do not count.
func conversation(assistants int) agentsdk.ModelRequest {
	msgs := []agentsdk.Message{agentsdk.TextMessage(agentsdk.RoleUser, "go")}
	for i := range assistants {
		msgs = append(msgs,
			agentsdk.Message{Role: agentsdk.RoleAssistant, Content: []agentsdk.Block{{Type: agentsdk.BlockText, Text: "step"}}},
			agentsdk.ToolResultMessage(agentsdk.ToolCall{ID: string(rune('a' + i))}, "ok", false),
			agentsdk.TextMessage(agentsdk.RoleSystem, "note"),
		)
	}
	return agentsdk.ModelRequest{Model: scripted.Model(""), Messages: msgs}
}

// answer streams req and returns the answer and the streamed text tokens.
func answer(t *testing.T, p *scripted.Provider, req agentsdk.ModelRequest) (agentsdk.Message, []string) {
	t.Helper()
	var tokens []string
	resp, err := p.Stream(context.Background(), req, func(e agentsdk.StreamEvent) {
		if e.Type == agentsdk.StreamText {
			tokens = append(tokens, e.Text)
		}
	})
	require.NoError(t, err)
	return resp.Message, tokens
}

func TestTurnIsChosenByTheNumberOfAssistantMessages(t *testing.T) {
	var seen []int
	p := scripted.New(scripted.Turns(scripted.Turn{Text: "first"}, scripted.Turn{Text: "second"}, scripted.Turn{Text: "third"}))
	p.OnCall = func(turn int, _ agentsdk.ModelRequest) { seen = append(seen, turn) }

	for _, c := range []struct {
		assistants int
		want       string
	}{{0, "first"}, {2, "third"}, {1, "second"}, {0, "first"}, {7, "third"}} {
		msg, _ := answer(t, p, conversation(c.assistants))
		require.Equal(t, c.want, msg.Text(), "%d assistant messages", c.assistants)
	}
	require.Equal(t, []int{0, 2, 1, 0, 7}, seen)
	require.Equal(t, 5, p.Calls())
}

func TestScriptFunctionSeesTheTurnAndRequest(t *testing.T) {
	p := scripted.New(func(turn int, req agentsdk.ModelRequest) scripted.Turn {
		return scripted.Turn{Text: req.Model.ModelID + " turn " + string(rune('0'+turn))}
	})
	msg, _ := answer(t, p, conversation(3))
	require.Equal(t, "scripted-1 turn 3", msg.Text())
	require.Equal(t, scripted.Name, msg.Provider)
	require.Equal(t, "scripted-1", msg.Model)

	empty, _ := answer(t, scripted.New(scripted.Turns()), conversation(0))
	require.Equal(t, "[scripted] no script", empty.Text())
}

func TestFailTimesFailsThenSucceeds(t *testing.T) {
	p := scripted.New(scripted.Turns(scripted.Turn{Text: "ok", FailTimes: 2})).Named("primary")
	for range 2 {
		_, err := p.Stream(context.Background(), conversation(0), func(agentsdk.StreamEvent) {})
		me, ok := agentsdk.AsModelError(err)
		require.True(t, ok, "want a ModelError, got %v", err)
		require.True(t, me.Retryable)
		require.Equal(t, 503, me.StatusCode)
		require.Equal(t, "primary", me.Provider)
	}
	msg, _ := answer(t, p, conversation(0))
	require.Equal(t, "ok", msg.Text())
	msg, _ = answer(t, p, conversation(0))
	require.Equal(t, "ok", msg.Text(), "failures are used up")
	require.Equal(t, 4, p.Calls())
}

func TestFailTimesCountsPerTurnAndReturnsErr(t *testing.T) {
	boom := errors.New("boom")
	p := scripted.New(scripted.Turns(scripted.Turn{Text: "zero"}, scripted.Turn{Text: "one", FailTimes: 1, Err: boom}))
	msg, _ := answer(t, p, conversation(0))
	require.Equal(t, "zero", msg.Text(), "another turn's failures do not apply")
	_, err := p.Stream(context.Background(), conversation(1), func(agentsdk.StreamEvent) {})
	require.ErrorIs(t, err, boom)
	msg, _ = answer(t, p, conversation(1))
	require.Equal(t, "one", msg.Text())
}

func TestTokensJoinBackToTheText(t *testing.T) {
	for _, text := range []string{
		"one",
		"Hello, world",
		"The quick brown fox jumps over the lazy dog.",
		"  leading and  double  spaces ",
		"trailing ",
		"multi-byte: 漢字 and 🙂 too",
	} {
		msg, tokens := answer(t, scripted.New(scripted.Turns(scripted.Turn{Text: text})), conversation(0))
		require.Equal(t, text, strings.Join(tokens, ""), "%q", text)
		require.Equal(t, text, msg.Text())
		for i, tok := range tokens {
			require.NotEmpty(t, tok, "%q", text)
			require.NotContains(t, tok[1:], " ", "%q: a token is one word with the space before it", text)
			if i > 0 {
				require.True(t, strings.HasPrefix(tok, " "), "%q: token %d is %q", text, i, tok)
			}
		}
	}
	_, tokens := answer(t, scripted.New(scripted.Turns(scripted.Turn{Text: "Hello, big world"})), conversation(0))
	require.Equal(t, []string{"Hello,", " big", " world"}, tokens)
	_, tokens = answer(t, scripted.New(scripted.Turns(scripted.Turn{ToolCalls: []agentsdk.ToolCall{{ID: "c", Name: "ls"}}})), conversation(0))
	require.Empty(t, tokens, "no text, no tokens")
}

func TestToolCallsAreStreamedAndEndTheTurn(t *testing.T) {
	p := scripted.New(scripted.Turns(scripted.Turn{Thinking: "hmm", ToolCalls: []agentsdk.ToolCall{{ID: "c1", Name: "ls"}}}))
	var types []agentsdk.StreamEventType
	resp, err := p.Stream(context.Background(), conversation(0), func(e agentsdk.StreamEvent) { types = append(types, e.Type) })
	require.NoError(t, err)
	require.Equal(t, []agentsdk.StreamEventType{agentsdk.StreamThinking, agentsdk.StreamToolCallStart, agentsdk.StreamToolCallEnd}, types)
	msg := resp.Message
	require.Equal(t, agentsdk.StopToolUse, msg.StopReason)
	require.Equal(t, []agentsdk.ToolCall{{ID: "c1", Name: "ls", Arguments: []byte(`{}`)}}, msg.ToolCalls())
	require.NotNil(t, msg.Usage)
	require.Positive(t, msg.Usage.Input)
}

func TestCancellationDuringDelayReturnsContextError(t *testing.T) {
	called := make(chan struct{})
	p := scripted.New(scripted.Turns(scripted.Turn{Text: "too late", Delay: time.Hour}))
	p.OnCall = func(int, agentsdk.ModelRequest) { close(called) }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := p.Stream(ctx, conversation(0), func(agentsdk.StreamEvent) { t.Error("nothing may stream") })
		done <- err
	}()

	<-called
	cancel()
	select {
	case err := <-done:
		require.ErrorIs(t, err, context.Canceled)
		require.Equal(t, ctx.Err(), err)
	case <-time.After(10 * time.Second):
		t.Fatal("Stream did not return after its context was cancelled")
	}
}

func TestDeadlineDuringDelayReturnsContextError(t *testing.T) {
	p := scripted.New(scripted.Turns(scripted.Turn{Text: "too late", Delay: time.Hour}))
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	_, err := p.Stream(ctx, conversation(0), func(agentsdk.StreamEvent) {})
	require.ErrorIs(t, err, context.DeadlineExceeded)
}
