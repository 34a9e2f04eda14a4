package adapter

import (
	"context"
	"errors"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/engine"
	"github.com/agentree/agentree/internal/step"
)

// ErrTypeBudget: a model call refused because a budget over it is spent
// (agentsdk.ErrBudgetSpent): the organization's daily quota, the
// execution's or an ancestor's config.budget, or its definition's total.
// Never retried, never a fallback: the execution pauses with stop reason
// "budget".
const ErrTypeBudget = "AgentreeBudgetSpent"

// callGate is step.Deps.Gate over the store: one query per model call
// (entrystore.CallGate) reads every budget over the call and what was
// spent of it, the active variant's overlay, and whether the call's
// answer is already written (a retry). The first budget reached
// refuses the call, else the largest share spent is what the execution's
// downgradeAt is compared with. It fails closed only on real overspend: a
// store that cannot answer lets the call go at the model asked for (the
// overlay is then read on its own, and the call's own store writes wait
// for the store), since pausing executions for a hiccup would cost more
// than a few calls past a budget. With a worker store (inPostgres false)
// the overlay and the key are the store's to read: a worker-held
// execution's entries are not in Postgres.
func callGate(es *entrystore.Store, now func() time.Time, inPostgres bool) func(ctx context.Context, orgID, executionID, key string) (step.Gate, error) {
	return func(ctx context.Context, orgID, executionID, key string) (step.Gate, error) {
		ov, lines, taken, err := es.CallGate(ctx, orgID, executionID, key, now())
		if err != nil {
			if activity.IsActivity(ctx) {
				activity.GetLogger(ctx).Warn("budget check failed; the model call goes ahead", "org", orgID, "execution", executionID, "error", err)
			}
			return step.Gate{}, nil
		}
		g := step.Gate{}
		if inPostgres {
			g.Overlay, g.KeyFree = &ov, !taken
		}
		share, err := entrystore.Judge(lines)
		g.Share = share
		if err != nil {
			return g, &agentsdk.BudgetError{Reason: err.Error()}
		}
		return g, nil
	}
}

// budgetError is a refused model call as the activity's error: its
// message is the reason the paused execution shows.
func budgetError(err error) (error, bool) {
	be, ok := errors.AsType[*agentsdk.BudgetError](err)
	if !ok {
		return nil, false
	}
	return temporal.NewNonRetryableApplicationError(be.Reason, ErrTypeBudget, nil), true
}

// modelCallError is a model call's failure as the engine reads it: a
// model that kept failing is engine.ErrModelExhausted (the next model is
// tried), a spent budget agentsdk.ErrBudgetSpent (the execution pauses).
func modelCallError(err error) error {
	var ae *temporal.ApplicationError
	switch {
	case isErrType(err, ErrTypeModelExhausted):
		return engine.MarkExhausted(err)
	case errors.As(err, &ae) && ae.Type() == ErrTypeBudget:
		return &agentsdk.BudgetError{Reason: ae.Message()}
	}
	return err
}
