package demo_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/agenttest"
	"github.com/agentree/agentree/agentsdk/event"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/agentsdk/tools/demo"
)

// answerStart is how the note the session should find begins.
const answerStart = "Agentree keeps the conversation in a Postgres side store"

func startInMemory(t *testing.T, cfg agentsdk.Config) *agenttest.Execution {
	t.Helper()
	x, err := agenttest.Start(agenttest.Options{
		Agent:      react.New(react.Options{}),
		Providers:  []agentsdk.Provider{demo.Model()},
		Tools:      demo.Tools(),
		Config:     cfg,
		UserPrompt: demo.Prompt,
	})
	require.NoError(t, err)
	return x
}

// toolNames lists the names of the conversation's tool results, in order.
func toolNames(msgs []agentsdk.Message) []string {
	var out []string
	for _, m := range msgs {
		if m.Role == agentsdk.RoleToolResult {
			out = append(out, m.ToolName)
		}
	}
	return out
}

// TestResearchSessionInMemory runs the agent in the in-memory runtime: no
// Temporal, no Postgres.
func TestResearchSessionInMemory(t *testing.T) {
	x := startInMemory(t, demo.Config())
	require.NoError(t, x.Run(context.Background()))
	require.Equal(t, agenttest.StatusCompleted, x.Status, x.Reason)
	require.Equal(t, react.StopFinalAnswer, x.Reason)

	msgs, err := x.Messages()
	require.NoError(t, err)
	require.Equal(t, []string{demo.SearchNotesTool, demo.FetchNoteTool, demo.WordCountTool}, toolNames(msgs))
	require.Contains(t, msgs[2].Text(), "conversation-store — Keeping the conversation out of workflow history")
	for _, m := range msgs {
		require.False(t, m.IsError, "tool %s failed: %s", m.ToolName, m.Text())
	}
	answer := msgs[len(msgs)-1]
	require.Equal(t, agentsdk.RoleAssistant, answer.Role)
	require.True(t, strings.HasPrefix(answer.Text(), answerStart), answer.Text())
	require.Contains(t, answer.Text(), `(Source: the note "Keeping the conversation out of workflow history"; 87 words.)`)

	// The answer was streamed token by token.
	var tokens int
	var streamed strings.Builder
	for _, e := range x.Store.Events() {
		if e.Name == event.NameToken {
			var tok event.Token
			require.NoError(t, json.Unmarshal(e.Data, &tok))
			streamed.WriteString(tok.Data)
			tokens++
		}
	}
	require.Greater(t, tokens, 50)
	require.True(t, strings.HasSuffix(streamed.String(), answer.Text()))
	require.Equal(t, 4, x.State().Steps, "a step per model call")
	require.Equal(t, 4, x.State().Turn)
}

// TestScriptAnswersFollowUps: in a multi-turn chat (as `agentree run
// --chat` makes on the dev worker) each question gets its own session.
func TestScriptAnswersFollowUps(t *testing.T) {
	cfg := demo.Config()
	cfg.Mode = agentsdk.ModeMultiTurn
	cfg.MaxTurns = 0 // the default: room for every question's model calls
	x := startInMemory(t, cfg)
	ctx := context.Background()
	require.NoError(t, x.Run(ctx))
	require.Equal(t, agenttest.StatusWaiting, x.Status)

	require.NoError(t, x.Signal(agentsdk.SignalUserMessage, agentsdk.UserMessage{Text: "What does continue-as-new do?"}))
	require.NoError(t, x.Run(ctx))
	require.Equal(t, agenttest.StatusWaiting, x.Status)
	msgs, err := x.Messages()
	require.NoError(t, err)
	require.Len(t, toolNames(msgs), 6)
	require.True(t, strings.HasPrefix(msgs[len(msgs)-1].Text(), "Continue-as-new closes a workflow run"), msgs[len(msgs)-1].Text())

	require.NoError(t, x.Signal(agentsdk.SignalUserMessage, agentsdk.UserMessage{Text: "zebra xylophone"}))
	require.NoError(t, x.Run(ctx))
	require.Equal(t, agenttest.StatusWaiting, x.Status)
	msgs, err = x.Messages()
	require.NoError(t, err)
	require.Equal(t, "My notes have nothing on that, so I can't answer it from them.", msgs[len(msgs)-1].Text())
}

func TestScriptWithoutTools(t *testing.T) {
	cfg := demo.Config()
	cfg.Tools = nil
	x := startInMemory(t, cfg)
	require.NoError(t, x.Run(context.Background()))
	require.Equal(t, agenttest.StatusCompleted, x.Status)
	msgs, err := x.Messages()
	require.NoError(t, err)
	require.Len(t, msgs, 2)
	require.Contains(t, msgs[1].Text(), "no research tools")
}

func TestTools(t *testing.T) {
	tools, err := agentsdk.NewTools(demo.Tools()...)
	require.NoError(t, err)
	run := func(name, args string) (string, error) {
		t.Helper()
		tool, err := tools.Get(name)
		require.NoError(t, err)
		require.NoError(t, tool.Validate(json.RawMessage(args)))
		return tool.Run(context.Background(), agentsdk.ToolInvocation{Arguments: json.RawMessage(args)})
	}

	out, err := run(demo.SearchNotesTool, `{"query":"history limits"}`)
	require.NoError(t, err)
	require.Equal(t, "history-limits — Temporal's history limits", strings.Split(out, "\n")[1])
	out, err = run(demo.SearchNotesTool, `{"query":"zebra"}`)
	require.NoError(t, err)
	require.Equal(t, `No note matches "zebra".`, out)

	out, err = run(demo.FetchNoteTool, `{"id":"idempotency"}`)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(out, "# Idempotent appends\n\nEvery entry"), out)
	_, err = run(demo.FetchNoteTool, `{"id":"nope"}`)
	require.EqualError(t, err, `no note "nope": search_notes lists the notes' IDs`)

	out, err = run(demo.WordCountTool, `{"text":"one two  three\nfour"}`)
	require.NoError(t, err)
	require.Equal(t, "4 words", out)

	tool, _ := tools.Get(demo.SearchNotesTool)
	require.Error(t, tool.Validate(json.RawMessage(`{"query":""}`)), "the model is told an empty query is wrong")
}
