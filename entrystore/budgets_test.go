package entrystore_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/entrystore"
)

// TestExecutionSpendCountsEachCallOnce: the spend a budget is judged by
// grows with each model call recorded, and a retried call — its entry
// appended again under the same idempotency key — adds nothing. Budgets
// reads it beside the organization's quota, and Judge names the first cap
// reached.
func TestExecutionSpendCountsEachCallOnce(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	root := f.append(t, "", "prompt")
	answer := entrystore.Entry{OrgID: f.org.ID, ExecutionID: f.exec.ID, ParentID: root.ID, Type: "message", Role: "assistant",
		IdempotencyKey: "a1", Content: []byte(`{"role":"assistant","usage":{"input":100,"output":20,"cost":0.25}}`),
		Metadata: []byte(`{"llmCall":{"latencyMs":5}}`)}
	for range 2 {
		_, err := f.store.AppendEntries(ctx, []entrystore.Entry{answer})
		require.NoError(t, err)
	}
	sp, err := f.store.ExecutionSpend(ctx, f.org.ID, f.exec.ID)
	require.NoError(t, err)
	require.Equal(t, int64(120), sp.Tokens, "the repeat added nothing")
	require.InDelta(t, 0.25, sp.Cost, 1e-9)

	_, err = f.store.SetQuota(ctx, entrystore.Quota{OrgID: f.org.ID, TokensPerDay: 240})
	require.NoError(t, err)
	lines, err := f.store.Budgets(ctx, f.org.ID, f.exec.ID, time.Now())
	require.NoError(t, err)
	require.Len(t, lines, 2, "the execution's own line and the organization's quota")
	require.Equal(t, entrystore.BudgetExecution, lines[0].Scope)
	require.Equal(t, int64(120), lines[0].Tokens)
	require.Equal(t, entrystore.BudgetOrganization, lines[1].Scope)
	share, err := entrystore.Judge(lines)
	require.NoError(t, err)
	require.InDelta(t, 0.5, share, 1e-9, "half the day's tokens")

	lines[0].MaxTokens = 120
	_, err = entrystore.Judge(lines)
	require.ErrorIs(t, err, entrystore.ErrQuotaExceeded)
	require.Contains(t, err.Error(), "the execution's budget.maxTokens is spent: 120 tokens used, of 120")
}
