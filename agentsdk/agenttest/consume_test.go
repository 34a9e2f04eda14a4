package agenttest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/internal/engine"
)

// A user message that arrives while a workflow task runs a model call
// locally, the task then lost, reaches the task's re-run at its start.
// Its consumption waits when the step after it already wrote its entry
// (the lost task went past this point without the message), so the re-run
// takes up the answer as the lost task made it, the message still to
// come; a message that the lost task consumed here is taken up as it was,
// and one it consumed further on waits for that point; with no entry at
// the next key, the message is consumed.
func TestConsumeWaitsForALostTasksNextStep(t *testing.T) {
	ctx := context.Background()
	const ex, next = "ex-1", "ex-1/0/2"
	s := newStore(agentsdk.Config{}, ex)
	ops := &engine.Ops{Store: s}
	prompt := agentsdk.TextMessage(agentsdk.RoleUser, "first")
	root, err := ops.Append(ctx, engine.AppendInput{ExecutionID: ex, Key: "ex-1/0/1", Entry: agentsdk.NewEntry{Type: agentsdk.EntryMessage, Message: &prompt}})
	require.NoError(t, err)
	consume := func(signalID, nextKey string) engine.ConsumeOutput {
		t.Helper()
		out, err := ops.ConsumeSignal(ctx, engine.ConsumeInput{
			AppendInput: engine.AppendInput{ExecutionID: ex, ParentID: root.ID, Key: "signal/" + signalID},
			SignalID:    signalID, NextKey: nextKey,
		})
		require.NoError(t, err)
		return out
	}
	value := func(text string) json.RawMessage {
		b, _ := json.Marshal(agentsdk.UserMessage{Text: text})
		return b
	}

	// No entry at the next key: consumed.
	early := s.putSignal(agentsdk.SignalUserMessage, value("early"))
	got := consume(early, next)
	require.False(t, got.Deferred)
	require.NotEmpty(t, got.ID)

	// The lost task's answer at the next key, under the same leaf: a
	// message it did not consume waits.
	answer := agentsdk.TextMessage(agentsdk.RoleAssistant, "answer")
	_, err = ops.Append(ctx, engine.AppendInput{ExecutionID: ex, ParentID: root.ID, Key: next, Entry: agentsdk.NewEntry{Type: agentsdk.EntryMessage, Message: &answer}})
	require.NoError(t, err)
	late := s.putSignal(agentsdk.SignalUserMessage, value("late"))
	got = consume(late, next)
	require.True(t, got.Deferred)
	_, err = s.EntryByKey(ctx, "", ex, "signal/"+late)
	require.ErrorIs(t, err, agentsdk.ErrNotFound, "a deferred message appends nothing")

	// The message the lost task consumed here is taken up as it was.
	again := consume(early, next)
	require.False(t, again.Deferred)
	require.Equal(t, early, s.entries[again.ID].IdempotencyKey[len("signal/"):], "the entry that consumed it")

	// Without a next key to look at, the late message is consumed.
	got = consume(late, "")
	require.False(t, got.Deferred)
	require.NotEmpty(t, got.ID)

	// A lost task consumed a message further on (under the answer): seen
	// again at this earlier point, with the next step's entry written, it
	// waits rather than pass for a redelivery and be dropped.
	further := s.putSignal(agentsdk.SignalUserMessage, value("further"))
	answerEntry, err := s.EntryByKey(ctx, "", ex, next)
	require.NoError(t, err)
	_, err = ops.ConsumeSignal(ctx, engine.ConsumeInput{
		AppendInput: engine.AppendInput{ExecutionID: ex, ParentID: answerEntry.ID, Key: "signal/" + further},
		SignalID:    further,
	})
	require.NoError(t, err)
	require.True(t, consume(further, next).Deferred)
	// Where no step went further, it is the redelivery it looks like: the
	// zero ref, nothing appended.
	redelivered := consume(further, "")
	require.False(t, redelivered.Deferred)
	require.Empty(t, redelivered.ID)
}
