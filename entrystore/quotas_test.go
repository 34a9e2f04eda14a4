package entrystore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/entrystore"
)

// TestDailySpendIsWhatUsageSums: the spend the quota check reads (kept by
// a trigger as model calls are recorded) is the sum OrgUsage computes over
// the same calls — an llm_call entry's and an answer's folded record alike
// — and entries that record no call add nothing. Once the spend reaches
// a daily quota, CheckBudget names it and when it resets.
func TestDailySpendIsWhatUsageSums(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	now := time.Now().UTC()
	root := f.append(t, "", "prompt")
	_, err := f.store.AppendEntries(ctx, []entrystore.Entry{
		{OrgID: f.org.ID, ExecutionID: f.exec.ID, ParentID: root.ID, Type: "message", Role: "assistant", IdempotencyKey: "a1",
			Content:  []byte(`{"role":"assistant","usage":{"input":100,"output":20,"cacheRead":7,"cost":0.25}}`),
			Metadata: []byte(`{"llmCall":{"latencyMs":5}}`)},
		{OrgID: f.org.ID, ExecutionID: f.exec.ID, ParentID: entrystore.PrevParent, Type: "llm_call", IdempotencyKey: "c1",
			Metadata: []byte(`{"model":{"provider":"p","modelId":"m"},"usage":{"input":30,"output":5},"cost":0.5}`)},
		// A message a client appended: no call, no spend.
		{OrgID: f.org.ID, ExecutionID: f.exec.ID, ParentID: entrystore.PrevParent, Type: "message", Role: "assistant", IdempotencyKey: "a2",
			Content: []byte(`{"role":"assistant","usage":{"input":1000,"output":1000}}`)},
	})
	require.NoError(t, err)

	sp, err := f.store.SpendOn(ctx, f.org.ID, now)
	require.NoError(t, err)
	lines, err := f.store.OrgUsage(ctx, f.org.ID, now.Add(-time.Hour), now.Add(time.Hour), entrystore.UsageByModel)
	require.NoError(t, err)
	var tokens int64
	var cost float64
	for _, l := range lines {
		tokens, cost = tokens+l.Input+l.Output, cost+l.Cost
	}
	require.Equal(t, int64(155), tokens)
	require.Equal(t, tokens, sp.Tokens)
	require.InDelta(t, cost, sp.Cost, 1e-9)
	require.InDelta(t, 0.75, sp.Cost, 1e-9)

	require.NoError(t, f.store.CheckBudget(ctx, f.org.ID, now), "no quota: no limit")
	_, err = f.store.SetQuota(ctx, entrystore.Quota{OrgID: f.org.ID, TokensPerDay: 156, CostPerDay: 0.75})
	require.NoError(t, err)
	err = f.store.CheckBudget(ctx, f.org.ID, now)
	var qe *entrystore.QuotaError
	require.True(t, errors.As(err, &qe), "%v", err)
	require.True(t, errors.Is(err, entrystore.ErrQuotaExceeded))
	require.Equal(t, entrystore.QuotaCostPerDay, qe.Quota)
	require.Equal(t, entrystore.DayResets(now), qe.ResetAt)
	require.Contains(t, err.Error(), "0.75 USD used today, of 0.75; it resets at "+entrystore.DayResets(now).Format(time.RFC3339))

	_, err = f.store.SetQuota(ctx, entrystore.Quota{OrgID: f.org.ID, TokensPerDay: 156})
	require.NoError(t, err)
	require.NoError(t, f.store.CheckBudget(ctx, f.org.ID, now), "155 of 156 tokens: not yet spent")
	require.NoError(t, f.store.CheckBudget(ctx, f.org.ID, now.Add(24*time.Hour)), "tomorrow starts afresh")
	_, err = f.store.SetQuota(ctx, entrystore.Quota{OrgID: f.org.ID, TokensPerDay: 155})
	require.NoError(t, err)
	require.ErrorIs(t, f.store.CheckBudget(ctx, f.org.ID, now), entrystore.ErrQuotaExceeded)

	_, err = f.store.SetQuota(ctx, entrystore.Quota{OrgID: f.org.ID, TokensPerDay: -1})
	require.ErrorIs(t, err, entrystore.ErrInvalid)
}

// TestCreateWithinQuotaCountsExecutionsNotEnded: past maxRunning a create
// is a *QuotaError; a repeat of a create already made is the ErrConflict
// CreateExecution answers, not a refusal; an ended execution frees its
// place.
func TestCreateWithinQuotaCountsExecutionsNotEnded(t *testing.T) {
	f := newFixture(t) // one PENDING execution
	ctx := context.Background()
	_, err := f.store.SetQuota(ctx, entrystore.Quota{OrgID: f.org.ID, MaxRunning: 1})
	require.NoError(t, err)
	n, err := f.store.CountLive(ctx, f.org.ID)
	require.NoError(t, err)
	require.Equal(t, 1, n)

	_, err = f.store.CreateExecutionWithinQuota(ctx, entrystore.Execution{OrgID: f.org.ID, Kind: entrystore.DefaultKind})
	var qe *entrystore.QuotaError
	require.True(t, errors.As(err, &qe), "%v", err)
	require.Equal(t, entrystore.QuotaMaxRunning, qe.Quota)
	require.True(t, qe.ResetAt.IsZero())

	_, err = f.store.CreateExecutionWithinQuota(ctx, entrystore.Execution{ID: f.exec.ID, OrgID: f.org.ID, Kind: entrystore.DefaultKind})
	require.ErrorIs(t, err, entrystore.ErrConflict, "a repeat is not refused by the quota")

	_, err = f.store.Transition(ctx, f.org.ID, f.exec.ID, entrystore.Transition{To: entrystore.StatusCancelled})
	require.NoError(t, err)
	ex, err := f.store.CreateExecutionWithinQuota(ctx, entrystore.Execution{OrgID: f.org.ID, Kind: entrystore.DefaultKind})
	require.NoError(t, err)
	require.Equal(t, entrystore.StatusPending, ex.Status)
}

// BenchmarkAppendModelCall appends answers that record a model call, with
// the trigger that keeps the organization's daily spend and without it:
// the difference is what the quotas cost each model call's write.
func BenchmarkAppendModelCall(b *testing.B) {
	for _, counted := range []bool{true, false} {
		name := map[bool]string{true: "counted", false: "uncounted"}[counted]
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			f := newFixture(b)
			if !counted {
				_, err := f.store.Pool().Exec(ctx, `ALTER TABLE agent_entry DISABLE TRIGGER agent_entry_org_usage_day`)
				require.NoError(b, err)
			}
			parent := f.append(b, "", "warm-up").ID
			i := 0
			for b.Loop() {
				e, _, err := f.store.AppendEntry(ctx, entrystore.Entry{
					OrgID: f.org.ID, ExecutionID: f.exec.ID, ParentID: parent, Type: "message", Role: "assistant",
					Content:        []byte(`{"role":"assistant","content":[{"type":"text","text":"hello"}],"usage":{"input":100,"output":20,"cost":0.001}}`),
					Metadata:       []byte(`{"llmCall":{"latencyMs":5}}`),
					IdempotencyKey: fmt.Sprintf("%s/0/%d", f.exec.ID, i),
				})
				if err != nil {
					b.Fatal(err)
				}
				parent = e.ID
				i++
			}
			sp, err := f.store.SpendOn(ctx, f.org.ID, time.Now())
			require.NoError(b, err)
			if counted && sp.Tokens == 0 {
				b.Fatal("the trigger counted nothing")
			}
		})
	}
}
