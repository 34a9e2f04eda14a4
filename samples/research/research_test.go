package research_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/agenttest"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/agentsdk/step"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/samples/internal/sampleenv"
	"github.com/agentree/agentree/samples/internal/sampletest"
	"github.com/agentree/agentree/samples/research"
)

// answerStart is how the note the session should find begins.
const answerStart = "Agentree keeps the conversation in a Postgres side store"

func startInMemory(t *testing.T, cfg agentsdk.Config) *agenttest.Execution {
	t.Helper()
	x, err := agenttest.Start(agenttest.Options{
		Agent:      react.New(react.Options{}),
		Providers:  []agentsdk.Provider{scripted.New(research.Script())},
		Tools:      research.Tools(),
		Config:     cfg,
		UserPrompt: research.Prompt,
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
	x := startInMemory(t, research.Config())
	require.NoError(t, x.Run(context.Background()))
	require.Equal(t, agenttest.StatusCompleted, x.Status, x.Reason)
	require.Equal(t, react.StopFinalAnswer, x.Reason)

	msgs, err := x.Messages()
	require.NoError(t, err)
	require.Equal(t, []string{research.SearchNotesTool, research.FetchNoteTool, research.WordCountTool}, toolNames(msgs))
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
		if e.Name == step.EventToken {
			var tok struct{ Text string }
			require.NoError(t, json.Unmarshal(e.Data, &tok))
			streamed.WriteString(tok.Text)
			tokens++
		}
	}
	require.Greater(t, tokens, 50)
	require.True(t, strings.HasSuffix(streamed.String(), answer.Text()))
	require.Equal(t, 3, x.State().Steps)
	require.Equal(t, 4, x.State().Turn)
}

// TestScriptAnswersFollowUps: in a multi-turn chat (as `agentree run
// --chat` makes on the dev worker) each question gets its own session.
func TestScriptAnswersFollowUps(t *testing.T) {
	cfg := research.Config()
	cfg.Mode = agentsdk.ModeMultiTurn
	cfg.MaxTurns = 0 // MaxTurns counts the execution's model calls, not one question's
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
	cfg := research.Config()
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
	tools, err := agentsdk.NewTools(research.Tools()...)
	require.NoError(t, err)
	run := func(name, args string) (string, error) {
		t.Helper()
		tool, err := tools.Get(name)
		require.NoError(t, err)
		require.NoError(t, tool.Validate(json.RawMessage(args)))
		return tool.Run(context.Background(), agentsdk.ToolInvocation{Arguments: json.RawMessage(args)})
	}

	out, err := run(research.SearchNotesTool, `{"query":"history limits"}`)
	require.NoError(t, err)
	require.Equal(t, "history-limits — Temporal's history limits", strings.Split(out, "\n")[1])
	out, err = run(research.SearchNotesTool, `{"query":"zebra"}`)
	require.NoError(t, err)
	require.Equal(t, `No note matches "zebra".`, out)

	out, err = run(research.FetchNoteTool, `{"id":"idempotency"}`)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(out, "# Idempotent appends\n\nEvery entry"), out)
	_, err = run(research.FetchNoteTool, `{"id":"nope"}`)
	require.EqualError(t, err, `no note "nope": search_notes lists the notes' IDs`)

	out, err = run(research.WordCountTool, `{"text":"one two  three\nfour"}`)
	require.NoError(t, err)
	require.Equal(t, "4 words", out)

	tool, _ := tools.Get(research.SearchNotesTool)
	require.Error(t, tool.Validate(json.RawMessage(`{"query":""}`)), "the model is told an empty query is wrong")
}

// TestResearchEndToEnd runs the sample as its worker and starter do: the
// react-agent on a Temporal worker, the conversation in Postgres, the
// stream followed until the execution completes.
func TestResearchEndToEnd(t *testing.T) {
	env := sampletest.New(t, adapter.Options{
		Agents:    []agentsdk.Agent{react.New(react.Options{})},
		Providers: []agentsdk.Provider{scripted.New(research.Script())},
		Tools:     research.Tools(),
	})
	ex, printed := env.Follow(env.Start(react.Kind, research.Config(), research.Prompt).ID, sampleenv.Ended)
	require.Equal(t, entrystore.StatusCompleted, ex.Status, ex.Error)
	require.Equal(t, 3, ex.StepCount)
	require.Contains(t, printed, "I'll search my notes for that.\n  → search_notes {\"query\":")
	require.Contains(t, printed, "  ← 3 notes match")
	require.Contains(t, printed, "\n"+answerStart)

	res, err := env.Agentree.Wait(env.Context(), ex.ID)
	require.NoError(t, err)
	require.Equal(t, "COMPLETED", res.Status)
	require.True(t, strings.HasPrefix(res.Text, answerStart), res.Text)

	msgs := env.Conversation(ex)
	require.Equal(t, []string{research.SearchNotesTool, research.FetchNoteTool, research.WordCountTool}, toolNames(msgs))
	require.Equal(t, res.Text, msgs[len(msgs)-1].Text())
}
