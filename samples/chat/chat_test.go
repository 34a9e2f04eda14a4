package chat_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/agenttest"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/samples/chat"
	"github.com/agentree/agentree/samples/internal/sampleenv"
	"github.com/agentree/agentree/samples/internal/sampletest"
)

// wantConversation is the chat the starter holds.
var wantConversation = []string{
	"user: Hi! My name is Ada.",
	"assistant: Nice to meet you, Ada! Tell me something about yourself and I'll remember it.",
	"user: I like hiking and green tea.",
	`assistant: Noted: "I like hiking and green tea". Ask me what I remember whenever you like.`,
	"user: What do you remember about me?",
	`assistant: You've told me 2 things: "Hi! My name is Ada" and "I like hiking and green tea".`,
}

// TestChatInMemory holds the chat in the in-memory runtime.
func TestChatInMemory(t *testing.T) {
	x, err := agenttest.Start(agenttest.Options{
		Agent:      react.New(react.Options{}),
		Providers:  []agentsdk.Provider{scripted.New(chat.Script())},
		Config:     chat.Config(),
		UserPrompt: chat.Messages[0],
	})
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, x.Run(ctx))
	for _, m := range chat.Messages[1:] {
		require.Equal(t, agenttest.StatusWaiting, x.Status)
		require.NoError(t, x.Signal(agentsdk.SignalUserMessage, agentsdk.UserMessage{Text: m}))
		require.NoError(t, x.Run(ctx))
	}
	require.Equal(t, agenttest.StatusWaiting, x.Status)
	msgs, err := x.Messages()
	require.NoError(t, err)
	require.Equal(t, wantConversation, sampletest.Texts(msgs))
}

// TestChatEndToEnd holds the starter's chat on a Temporal worker through
// the REST API, then cancels it.
func TestChatEndToEnd(t *testing.T) {
	env := sampletest.New(t, adapter.Options{
		Agents:    []agentsdk.Agent{react.New(react.Options{})},
		Providers: []agentsdk.Provider{scripted.New(chat.Script())},
	})
	var out strings.Builder
	ex, err := chat.Converse(env.Context(), env.API, chat.Config(), chat.Messages, &out)
	require.NoError(t, err)
	require.Equal(t, "WAITING", ex.GetStatus())
	require.EqualValues(t, 3, ex.GetCurrentCheckpointSeq(), "one checkpoint per reply")
	require.Equal(t, wantConversation, sampleenv.Texts(env.Conversation(ex.GetId())))

	var want strings.Builder
	for i, line := range wantConversation {
		if i%2 == 0 {
			want.WriteString("you: " + strings.TrimPrefix(line, "user: ") + "\n")
		} else {
			want.WriteString("agent: " + strings.TrimPrefix(line, "assistant: ") + "\n")
		}
	}
	require.Equal(t, want.String(), out.String(), "each reply streamed after its message")

	require.NoError(t, sampleenv.Cancel(env.Context(), env.API, ex.GetId()))
	ex, err = sampleenv.Await(env.Context(), env.API, ex.GetId(), sampleenv.Ended)
	require.NoError(t, err)
	require.Equal(t, "CANCELLED", ex.GetStatus())
}
