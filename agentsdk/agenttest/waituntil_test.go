package agenttest_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/agenttest"
)

// napAgent sleeps once with agentsdk.WaitUntil, then notes whether it
// woke at or after its deadline and completes.
type napAgent struct{ wake time.Time }

func (*napAgent) Kind() string { return "nap-agent" }

func (a *napAgent) RunSegment(ctx agentsdk.Context) (agentsdk.Outcome, error) {
	if a.wake.IsZero() {
		a.wake = ctx.Now().Add(200 * time.Millisecond)
		return agentsdk.WaitUntil(a.wake, agentsdk.WaitTimer), nil
	}
	text := "woke early"
	if !ctx.Now().Before(a.wake) {
		text = "woke on time"
	}
	msg := agentsdk.TextMessage(agentsdk.RoleAssistant, text)
	if _, err := ctx.Append(agentsdk.NewEntry{Type: agentsdk.EntryMessage, Message: &msg}); err != nil {
		return agentsdk.Outcome{}, err
	}
	return agentsdk.Complete("done"), nil
}

// TestWaitUntilWakesOnTheTimerOnly: an agent that waits with WaitUntil
// and no signals is WAITING for reason timer; a message that arrives
// meanwhile does not wake it; once the deadline passes it wakes on time.
func TestWaitUntilWakesOnTheTimerOnly(t *testing.T) {
	x, err := agenttest.Start(agenttest.Options{Agent: &napAgent{}, UserPrompt: "nap"})
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, x.Run(ctx))
	require.Equal(t, agenttest.StatusWaiting, x.Status)
	require.Equal(t, agentsdk.WaitTimer, x.Reason)

	require.NoError(t, x.Signal(agentsdk.SignalUserMessage, agentsdk.UserMessage{Text: "wake up"}))
	require.NoError(t, x.Run(ctx))
	require.Equal(t, agenttest.StatusWaiting, x.Status, "a message does not end a wait for the timer alone")

	require.Eventually(t, func() bool {
		require.NoError(t, x.Run(ctx))
		return x.Status == agenttest.StatusCompleted
	}, 10*time.Second, 20*time.Millisecond)
	msgs, err := x.Messages()
	require.NoError(t, err)
	require.Equal(t, "woke on time", msgs[len(msgs)-1].Text())
}
