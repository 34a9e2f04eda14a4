package agenttest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/event"
	"github.com/agentree/agentree/internal/domain"
	"github.com/agentree/agentree/internal/engine"
)

// A workflow task that runs a whole turn locally — Begin, the model and
// tool calls, the checkpoint of the wait that ends it — and is then lost
// (its worker killed before it completed) is run again from its start:
// the re-run's Begin moves the execution back to RUNNING but announces
// nothing, since the lost task announced already (chaos seed 19 stored
// agent.started twice). A Begin after the checkpoint, as a real resume
// is, announces.
func TestBeginAnnouncesOnceAfterALostTask(t *testing.T) {
	ctx := context.Background()
	const ex = "ex-1"
	s := newStore(agentsdk.Config{}, ex)
	ops := &engine.Ops{Store: s}
	announced := func(name string) int {
		n := 0
		for _, e := range s.Events() {
			if e.Name == name {
				n++
			}
		}
		return n
	}
	begin := func(announce string, seq int) domain.Status {
		t.Helper()
		out, err := ops.Begin(ctx, engine.BeginInput{ExecutionID: ex, Announce: announce, Sequence: seq})
		require.NoError(t, err)
		return out.Status
	}

	require.Equal(t, domain.StatusRunning, begin(event.NameStarted, 0))
	require.Equal(t, 1, announced(event.NameStarted))

	// The lost task went on to its wait's checkpoint.
	prompt := agentsdk.TextMessage(agentsdk.RoleUser, "hi")
	leaf, err := ops.Append(ctx, engine.AppendInput{ExecutionID: ex, Key: "0/1", Entry: agentsdk.NewEntry{Message: &prompt}})
	require.NoError(t, err)
	require.NoError(t, ops.Checkpoint(ctx, engine.CheckpointInput{ExecutionID: ex, LeafID: leaf.ID, Sequence: 1, Wait: true}))
	require.Equal(t, domain.StatusWaiting, s.execution().Status)

	// Its re-run begins the same segment again.
	require.Equal(t, domain.StatusRunning, begin(event.NameStarted, 0))
	require.Equal(t, 1, announced(event.NameStarted), "the re-run announced the start again")

	// The re-run reaches the wait again; a message then resumes the
	// execution from that checkpoint, which is announced.
	require.NoError(t, ops.Checkpoint(ctx, engine.CheckpointInput{ExecutionID: ex, LeafID: leaf.ID, Sequence: 1, Wait: true}))
	require.Equal(t, domain.StatusRunning, begin(event.NameResumed, 1))
	require.Equal(t, 1, announced(event.NameResumed))
}
