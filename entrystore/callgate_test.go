package entrystore_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/entrystore"
)

// TestCallGateReadsBudgetsOverlayAndKeyAtOnce: the model call's one read
// answers what Budgets and ContextOverlay answer, and whether an entry
// already has the call's key; with no execution row only the
// organization's quota is over it.
func TestCallGateReadsBudgetsOverlayAndKeyAtOnce(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	now := time.Now()
	root := f.append(t, "", "prompt")
	_, err := f.store.SetQuota(ctx, entrystore.Quota{OrgID: f.org.ID, TokensPerDay: 240})
	require.NoError(t, err)

	ov, lines, taken, err := f.store.CallGate(ctx, f.org.ID, f.exec.ID, "a1", now)
	require.NoError(t, err)
	require.False(t, taken, "no entry has the key yet")
	want, err := f.store.Budgets(ctx, f.org.ID, f.exec.ID, now)
	require.NoError(t, err)
	require.Equal(t, want, lines)
	wantOv, err := f.store.ContextOverlay(ctx, f.org.ID, f.exec.ID, "")
	require.NoError(t, err)
	require.Equal(t, wantOv, ov)

	_, err = f.store.AppendEntries(ctx, []entrystore.Entry{{OrgID: f.org.ID, ExecutionID: f.exec.ID, ParentID: root.ID,
		Type: "message", Role: "assistant", IdempotencyKey: "a1", Content: []byte(`{"role":"assistant"}`)}})
	require.NoError(t, err)
	_, _, taken, err = f.store.CallGate(ctx, f.org.ID, f.exec.ID, "a1", now)
	require.NoError(t, err)
	require.True(t, taken, "a retry after the answer was written")

	other := "00000000-0000-4000-8000-000000000001"
	ov, lines, taken, err = f.store.CallGate(ctx, f.org.ID, other, "a1", now)
	require.NoError(t, err)
	require.False(t, taken)
	require.Empty(t, ov.Excluded)
	require.Len(t, lines, 1)
	require.Equal(t, entrystore.BudgetOrganization, lines[0].Scope)
}
