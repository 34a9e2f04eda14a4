package react_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/agenttest"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/agentsdk/scripted"
)

func echoTool() *agentsdk.Tool {
	return agentsdk.NewTool("echo", "Echoes its text.",
		func(_ context.Context, _ agentsdk.ToolInvocation, a echoArgs) (string, error) {
			return "echo: " + a.Text, nil
		})
}

type echoArgs struct {
	Text string `json:"text"`
}

func call(id, text string) agentsdk.ToolCall {
	return agentsdk.ToolCall{ID: id, Name: "echo", Arguments: []byte(`{"text":"` + text + `"}`)}
}

func start(t *testing.T, cfg agentsdk.Config, script scripted.Script, tools ...*agentsdk.Tool) *agenttest.Execution {
	t.Helper()
	cfg.Models = []agentsdk.ModelRef{scripted.Model("")}
	x, err := agenttest.Start(agenttest.Options{
		Agent: react.New(react.Options{}), Providers: []agentsdk.Provider{scripted.New(script)},
		Tools: tools, Config: cfg, UserPrompt: "hello",
	})
	require.NoError(t, err)
	return x
}

func roles(t *testing.T, x *agenttest.Execution) []string {
	msgs, err := x.Messages()
	require.NoError(t, err)
	var out []string
	for _, m := range msgs {
		out = append(out, string(m.Role))
	}
	return out
}

func TestOneShotWithThreeToolCalls(t *testing.T) {
	x := start(t, agentsdk.Config{Tools: []string{"echo"}}, scripted.Turns(
		scripted.Turn{ToolCalls: []agentsdk.ToolCall{call("a", "1")}},
		scripted.Turn{ToolCalls: []agentsdk.ToolCall{call("b", "2"), call("c", "3")}},
		scripted.Turn{Text: "done"},
	), echoTool())
	require.NoError(t, x.Run(context.Background()))
	require.Equal(t, agenttest.StatusCompleted, x.Status)
	require.Equal(t, react.StopFinalAnswer, x.Reason)
	require.Equal(t, []string{"user", "assistant", "tool_result", "assistant", "tool_result", "tool_result", "assistant"}, roles(t, x))
	msgs, _ := x.Messages()
	require.Equal(t, "echo: 3", msgs[5].Text())
	require.Equal(t, "c", msgs[5].ToolCallID)
	require.Equal(t, 3, x.State().Turn)
	require.Equal(t, 3, x.State().Steps)
	require.Equal(t, 3, x.State().Usage["scripted/scripted-1"].Calls)
	require.Len(t, x.Checkpoints, 3, "one checkpoint per model turn with tools, and the final one at the answer")
}

func TestMultiTurnWaitsForUserMessages(t *testing.T) {
	x := start(t, agentsdk.Config{Mode: agentsdk.ModeMultiTurn}, func(turn int, _ agentsdk.ModelRequest) scripted.Turn {
		return scripted.Turn{Text: "answer " + string(rune('A'+turn))}
	})
	ctx := context.Background()
	require.NoError(t, x.Run(ctx))
	require.Equal(t, agenttest.StatusWaiting, x.Status)
	for _, m := range []string{"second", "third"} {
		require.NoError(t, x.Signal(agentsdk.SignalUserMessage, agentsdk.UserMessage{Text: m}))
		require.NoError(t, x.Run(ctx))
		require.Equal(t, agenttest.StatusWaiting, x.Status)
	}
	msgs, err := x.Messages()
	require.NoError(t, err)
	var texts []string
	for _, m := range msgs {
		texts = append(texts, m.Text())
	}
	require.Equal(t, []string{"hello", "answer A", "second", "answer B", "third", "answer C"}, texts)
}

func TestStopsOnMaxTurns(t *testing.T) {
	x := start(t, agentsdk.Config{Tools: []string{"echo"}, MaxTurns: 4, LoopThreshold: -1},
		func(turn int, _ agentsdk.ModelRequest) scripted.Turn {
			return scripted.Turn{ToolCalls: []agentsdk.ToolCall{call("t", string(rune('a'+turn)))}}
		}, echoTool())
	require.NoError(t, x.Run(context.Background()))
	require.Equal(t, agenttest.StatusCompleted, x.Status)
	require.Equal(t, react.StopMaxTurns, x.Reason)
	require.Equal(t, 4, x.State().Turn)
}

func TestStopsOnRepeatedToolCall(t *testing.T) {
	x := start(t, agentsdk.Config{Tools: []string{"echo"}, LoopThreshold: 3}, scripted.Turns(
		scripted.Turn{ToolCalls: []agentsdk.ToolCall{call("x", "same")}},
	), echoTool())
	require.NoError(t, x.Run(context.Background()))
	require.Equal(t, agenttest.StatusCompleted, x.Status)
	require.Equal(t, react.StopLoopDetected, x.Reason)
	msgs, _ := x.Messages()
	last := msgs[len(msgs)-1]
	require.Equal(t, agentsdk.RoleToolResult, last.Role, "the skipped call is answered")
	require.True(t, last.IsError)
	require.Contains(t, last.Text(), "loop detected")
}

func TestLongToolOutputIsTruncatedAndKeptWhole(t *testing.T) {
	big := strings.Repeat("0123456789", 10_000) // 100 KB
	tool := agentsdk.NewTool("big", "Big output.",
		func(context.Context, agentsdk.ToolInvocation, struct{}) (string, error) {
			return "HEAD" + big + "TAIL", nil
		})
	x := start(t, agentsdk.Config{Tools: []string{"big"}, ToolOutputLimit: 1000}, scripted.Turns(
		scripted.Turn{ToolCalls: []agentsdk.ToolCall{{ID: "b", Name: "big"}}},
		scripted.Turn{Text: "ok"},
	), tool)
	require.NoError(t, x.Run(context.Background()))
	msgs, _ := x.Messages()
	shown := msgs[2].Text()
	require.LessOrEqual(t, len(shown), 1000)
	require.True(t, strings.HasPrefix(shown, "HEAD"))
	require.True(t, strings.HasSuffix(shown, "TAIL"))
	require.Contains(t, shown, "omitted")
	recs := x.Store.ToolCalls()
	require.Len(t, recs, 1)
	require.True(t, recs[0].Truncated)
	full, ok := x.Store.Content(recs[0].OutputSHA256)
	require.True(t, ok)
	require.Equal(t, "HEAD"+big+"TAIL", string(full))
}

func TestBadToolArgumentsAreAnsweredWithAnError(t *testing.T) {
	x := start(t, agentsdk.Config{Tools: []string{"echo"}}, scripted.Turns(
		scripted.Turn{ToolCalls: []agentsdk.ToolCall{{ID: "bad", Name: "echo", Arguments: []byte(`{"text":5}`)}}},
		scripted.Turn{Text: "sorry"},
	), echoTool())
	require.NoError(t, x.Run(context.Background()))
	msgs, _ := x.Messages()
	require.True(t, msgs[2].IsError)
	require.Contains(t, msgs[2].Text(), "arguments of echo")
	require.Equal(t, agenttest.StatusCompleted, x.Status)
}

func TestFallsBackToTheNextModel(t *testing.T) {
	broken := scripted.New(scripted.Turns(scripted.Turn{FailTimes: 1000}))
	good := scripted.New(scripted.Turns(scripted.Turn{Text: "from backup"})).Named("backup")
	x, err := agenttest.Start(agenttest.Options{
		Agent: react.New(react.Options{}), Providers: []agentsdk.Provider{broken, good},
		Config: agentsdk.Config{Models: []agentsdk.ModelRef{scripted.Model(""), {Provider: "backup", ModelID: "b"}}}, UserPrompt: "hi",
	})
	require.NoError(t, err)
	require.NoError(t, x.Run(context.Background()))
	msgs, _ := x.Messages()
	require.Equal(t, "from backup", msgs[1].Text())
	require.Equal(t, "backup", msgs[1].Provider)
}

func TestMultiTurnGetsAFreshTurnBudgetPerMessage(t *testing.T) {
	x := start(t, agentsdk.Config{Mode: agentsdk.ModeMultiTurn, MaxTurns: 1}, func(turn int, _ agentsdk.ModelRequest) scripted.Turn {
		return scripted.Turn{Text: "ok"}
	})
	ctx := context.Background()
	require.NoError(t, x.Run(ctx))
	for i := 0; i < 3; i++ {
		require.Equal(t, agenttest.StatusWaiting, x.Status, "message %d", i)
		require.NoError(t, x.Signal(agentsdk.SignalUserMessage, agentsdk.UserMessage{Text: "again"}))
		require.NoError(t, x.Run(ctx))
	}
	require.Equal(t, agenttest.StatusWaiting, x.Status)
	require.Equal(t, 4, x.State().Turn)
}
