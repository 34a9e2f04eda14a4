package adapter

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/pgtest"
)

// TestBudgetCheckFailsClosedOnlyOnOverspend: a spent daily quota refuses
// the call as an *agentsdk.BudgetError that crosses the activity boundary
// with its reason; a store that cannot answer lets the call go.
func TestBudgetCheckFailsClosedOnlyOnOverspend(t *testing.T) {
	ctx := context.Background()
	es := entrystore.New(pgtest.New(t))
	org, err := es.CreateOrg(ctx, "budget", "Budget")
	require.NoError(t, err)
	now := time.Now()
	budget := callGate(es, func() time.Time { return now }, true)
	// No execution of that ID: only the organization's quota is over it.
	exID := uuid.NewString()
	check := func(ctx context.Context, orgID string) error {
		_, err := budget(ctx, orgID, exID, "")
		return err
	}
	require.NoError(t, check(ctx, org.ID), "no quota")
	_, err = es.SetQuota(ctx, entrystore.Quota{OrgID: org.ID, CostPerDay: 0.01, TokensPerDay: 1000})
	require.NoError(t, err)
	require.NoError(t, check(ctx, org.ID), "nothing spent yet")
	_, err = es.Pool().Exec(ctx, `INSERT INTO org_usage_day (org_id, day, tokens, cost) VALUES ($1, $2::date, 10, 0.02)`,
		org.ID, now.UTC().Format(time.DateOnly))
	require.NoError(t, err)

	err = check(ctx, org.ID)
	require.ErrorIs(t, err, agentsdk.ErrBudgetSpent)
	require.Contains(t, err.Error(), "costPerDay quota is spent")
	act, ok := budgetError(err)
	require.True(t, ok)
	var ae *temporal.ApplicationError
	require.True(t, errors.As(act, &ae))
	require.True(t, ae.NonRetryable())
	back := modelCallError(act)
	require.ErrorIs(t, back, agentsdk.ErrBudgetSpent, "the workflow side reads it back")
	require.Equal(t, err.Error(), agentsdk.BudgetReason(back))

	// A store that does not answer: the call goes ahead.
	pool, err := pgxpool.New(ctx, "postgres://nobody@127.0.0.1:1/none?connect_timeout=1")
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	g, err := callGate(entrystore.New(pool), time.Now, true)(cctx, org.ID, exID, "k")
	require.NoError(t, err)
	require.Zero(t, g.Share, "no downgrade on a guess")
	require.Nil(t, g.Overlay, "the overlay is then read on its own")
	require.False(t, g.KeyFree, "and the call's key is looked up")
}
