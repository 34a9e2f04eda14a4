package adapter

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/domain"
	"github.com/agentree/agentree/internal/engine"
	"github.com/agentree/agentree/internal/pgtest"
)

// TestCancelAfterALostTaskEndsAtTheStoresCheckpoint: a workflow task that
// ran a turn locally to its checkpoint is lost (a Temporal restart timed
// it out), and its replay meets a cancel that came meanwhile: it ends the
// execution from before that work, with a checkpoint older than the
// store's. The execution is CANCELLED at the store's latest checkpoint;
// before, the refused checkpoint failed the workflow and left the
// execution CANCELLING for good (make soak). A checkpoint refused with
// nothing later in the store still fails the ending.
func TestCancelAfterALostTaskEndsAtTheStoresCheckpoint(t *testing.T) {
	ctx := context.Background()
	es := entrystore.New(pgtest.New(t))
	org, err := es.CreateOrg(ctx, "cancel", "Cancel")
	require.NoError(t, err)
	ops := &engine.Ops{Store: pgStore{es: es}}
	newExecution := func() string {
		ex, err := es.CreateExecution(ctx, entrystore.Execution{OrgID: org.ID, Kind: entrystore.DefaultKind})
		require.NoError(t, err)
		return ex.ID
	}
	appendText := func(ex, parent, key string, role agentsdk.Role, text string) string {
		m := agentsdk.TextMessage(role, text)
		ref, err := ops.Append(ctx, engine.AppendInput{OrgID: org.ID, ExecutionID: ex, ParentID: parent, Key: key, Entry: agentsdk.NewEntry{Message: &m}})
		require.NoError(t, err)
		return ref.ID
	}

	ex := newExecution()
	first := appendText(ex, "", "0/1", agentsdk.RoleUser, "hi")
	require.NoError(t, ops.Checkpoint(ctx, engine.CheckpointInput{OrgID: org.ID, ExecutionID: ex, LeafID: first, Sequence: 1, Wait: true}))
	// The lost task: the next turn's message, its answer, its checkpoints.
	second := appendText(ex, first, "1/1", agentsdk.RoleUser, "more")
	require.NoError(t, ops.Checkpoint(ctx, engine.CheckpointInput{OrgID: org.ID, ExecutionID: ex, LeafID: second, Sequence: 2}))
	third := appendText(ex, second, "1/2", agentsdk.RoleAssistant, "done")
	require.NoError(t, ops.Checkpoint(ctx, engine.CheckpointInput{OrgID: org.ID, ExecutionID: ex, LeafID: third, Sequence: 3, Wait: true}))
	_, err = es.Transition(ctx, org.ID, ex, entrystore.Transition{To: entrystore.StatusCancelling})
	require.NoError(t, err)

	// The replay ends it from the first turn's leaf, its checkpoint 2.
	_, err = ops.Finish(ctx, engine.FinishInput{OrgID: org.ID, ExecutionID: ex, LeafID: first, Status: domain.StatusCancelled, StopReason: "cancelled",
		Checkpoint: &engine.CheckpointInput{OrgID: org.ID, ExecutionID: ex, LeafID: first, Sequence: 2}})
	require.NoError(t, err)
	got, err := es.GetExecution(ctx, org.ID, ex)
	require.NoError(t, err)
	require.Equal(t, entrystore.StatusCancelled, got.Status)
	require.Equal(t, 3, got.CheckpointSeq, "the store's latest checkpoint stands")

	// Refused with nothing later in the store: the ending still fails.
	ex2 := newExecution()
	a := appendText(ex2, "", "0/1", agentsdk.RoleUser, "hi")
	b := appendText(ex2, a, "0/2", agentsdk.RoleAssistant, "done")
	require.NoError(t, ops.Checkpoint(ctx, engine.CheckpointInput{OrgID: org.ID, ExecutionID: ex2, LeafID: b, Sequence: 1}))
	_, err = ops.Finish(ctx, engine.FinishInput{OrgID: org.ID, ExecutionID: ex2, LeafID: a, Status: domain.StatusCancelled,
		Checkpoint: &engine.CheckpointInput{OrgID: org.ID, ExecutionID: ex2, LeafID: a, Sequence: 1}})
	require.ErrorIs(t, err, domain.ErrConflict)
}
