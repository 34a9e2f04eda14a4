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
)

// ErrTypeBudget: a model call refused because the organization spent a
// daily quota (agentsdk.ErrBudgetSpent); never retried, never a fallback:
// the execution pauses with stop reason "budget".
const ErrTypeBudget = "AgentreeBudgetSpent"

// budgetCheck is step.Deps.Budget over the store: one primary-key read per
// model call (entrystore.CheckBudget). It fails closed only on real
// overspend: a store that cannot answer lets the call go (and the call's
// own store writes then wait for it), since pausing executions for a
// hiccup would cost more than a few calls past a quota.
func budgetCheck(es *entrystore.Store, now func() time.Time) func(ctx context.Context, orgID string) error {
	return func(ctx context.Context, orgID string) error {
		err := es.CheckBudget(ctx, orgID, now())
		var qe *entrystore.QuotaError
		switch {
		case err == nil:
			return nil
		case errors.As(err, &qe):
			return &agentsdk.BudgetError{Reason: qe.Error()}
		}
		if activity.IsActivity(ctx) {
			activity.GetLogger(ctx).Warn("quota check failed; the model call goes ahead", "org", orgID, "error", err)
		}
		return nil
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
