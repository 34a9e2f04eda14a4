package entrystore_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/entrystore"
)

// Standing approvals: one a decision makes is made once however often the
// decision is retried; those in force for an execution are its
// organization's and its definition's, not another definition's nor a
// revoked one; another organization sees none of them.
func TestStandingApprovals(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	defA, err := f.store.CreateDefinition(ctx, entrystore.Definition{OrgID: f.org.ID, Name: "A", Slug: "a"})
	require.NoError(t, err)
	defB, err := f.store.CreateDefinition(ctx, entrystore.Definition{OrgID: f.org.ID, Name: "B", Slug: "b"})
	require.NoError(t, err)
	ex, err := f.store.CreateExecution(ctx, entrystore.Execution{OrgID: f.org.ID, Kind: entrystore.DefaultKind, DefinitionID: defA.ID})
	require.NoError(t, err)

	sig := uuid.NewString()
	first, err := f.store.CreateStandingApproval(ctx, entrystore.StandingApproval{OrgID: f.org.ID, DefinitionID: defA.ID,
		ToolName: "echo", CreatedBy: "key-1", SignalID: sig})
	require.NoError(t, err)
	again, err := f.store.CreateStandingApproval(ctx, entrystore.StandingApproval{OrgID: f.org.ID, DefinitionID: defA.ID,
		ToolName: "echo", CreatedBy: "key-1", SignalID: sig})
	require.NoError(t, err)
	require.Equal(t, first.ID, again.ID, "a retried decision makes none twice")
	_, err = f.store.CreateStandingApproval(ctx, entrystore.StandingApproval{OrgID: f.org.ID, DefinitionID: defB.ID, ToolName: "echo", CreatedBy: "k"})
	require.NoError(t, err)
	orgWide, err := f.store.CreateStandingApproval(ctx, entrystore.StandingApproval{OrgID: f.org.ID, ToolName: "echo",
		ArgumentPattern: "ls *", CreatedBy: "k"})
	require.NoError(t, err)

	in, err := f.store.StandingApprovalsFor(ctx, f.org.ID, ex.ID, "echo")
	require.NoError(t, err)
	require.Len(t, in, 2)
	require.Equal(t, first.ID, in[0].ID)
	require.Equal(t, orgWide.ID, in[1].ID)
	require.Equal(t, "ls *", in[1].ArgumentPattern)
	none, err := f.store.StandingApprovalsFor(ctx, f.org.ID, ex.ID, "bash")
	require.NoError(t, err)
	require.Empty(t, none)

	revoked, err := f.store.RevokeStandingApproval(ctx, f.org.ID, first.ID, "key-2")
	require.NoError(t, err)
	require.NotNil(t, revoked.RevokedAt)
	require.Equal(t, "key-2", revoked.RevokedBy)
	in, err = f.store.StandingApprovalsFor(ctx, f.org.ID, ex.ID, "echo")
	require.NoError(t, err)
	require.Len(t, in, 1)
	require.Equal(t, orgWide.ID, in[0].ID)

	live, _, err := f.store.ListStandingApprovals(ctx, f.org.ID, entrystore.StandingApprovalFilter{}, entrystore.Page{})
	require.NoError(t, err)
	require.Len(t, live, 2)
	all, _, err := f.store.ListStandingApprovals(ctx, f.org.ID, entrystore.StandingApprovalFilter{IncludeRevoked: true}, entrystore.Page{Limit: 2})
	require.NoError(t, err)
	require.Len(t, all, 2, "a page of two")
	ofA, _, err := f.store.ListStandingApprovals(ctx, f.org.ID, entrystore.StandingApprovalFilter{DefinitionID: defA.ID, IncludeRevoked: true}, entrystore.Page{})
	require.NoError(t, err)
	require.Len(t, ofA, 1)

	other, err := f.store.CreateOrg(ctx, "other", "Other")
	require.NoError(t, err)
	_, err = f.store.RevokeStandingApproval(ctx, other.ID, orgWide.ID, "k")
	require.ErrorIs(t, err, entrystore.ErrNotFound)
	_, err = f.store.CreateStandingApproval(ctx, entrystore.StandingApproval{OrgID: other.ID, DefinitionID: defA.ID, ToolName: "echo", CreatedBy: "k"})
	require.ErrorIs(t, err, entrystore.ErrNotFound, "another organization's definition")
}
