package step

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/internal/domain"
)

// Gate is what a model call reads before it calls (Deps.Gate), in one
// round trip where the store can.
type Gate struct {
	// Share is the largest share of a budget's cap spent.
	Share float64
	// Overlay is the execution's active variant's overlay when the gate
	// read it; nil when the overlay is the Store's to read (Overlayer).
	Overlay *domain.ContextOverlay
	// KeyFree reports that the gate found no entry with the call's key:
	// this is no retry of a call whose answer is written, and the Store
	// need not be asked (EntryByKey). False: ask it.
	KeyFree bool
}

// gated is the model call's first read: its written answer when this is
// a retry after the answer was stored (done), else the budgets over it
// and the overlay of its context. A budget's refusal comes back as the
// error only for a call that has no answer yet: a retry spends nothing.
func (d Deps) gated(ctx context.Context, in ModelInput) (g Gate, ov Overlay, done *agentsdk.ModelResult, err error) {
	var refused error
	if d.Gate != nil {
		if g, err = d.Gate(ctx, in.OrgID, in.ExecutionID, in.Key); err != nil {
			if !errors.Is(err, agentsdk.ErrBudgetSpent) {
				return g, ov, nil, fmt.Errorf("step: model call: %w", err)
			}
			refused = fmt.Errorf("step: model call: %w", err)
		}
	}
	if !g.KeyFree {
		if e, err := d.Store.EntryByKey(ctx, in.OrgID, in.ExecutionID, in.Key); err == nil {
			res, err := resultFromEntry(e)
			d.markLocal(&res)
			return g, ov, &res, err
		} else if !errors.Is(err, agentsdk.ErrNotFound) {
			return g, ov, nil, fmt.Errorf("step: model call: find %s: %w", in.Key, err)
		}
	}
	if refused != nil {
		return g, ov, nil, refused
	}
	if g.Overlay == nil {
		ov, err = d.overlay(ctx, in.OrgID, in.ExecutionID)
		return g, ov, nil, err
	}
	if ov, err = OverlayOf(*g.Overlay); err != nil {
		return g, ov, nil, fmt.Errorf("step: variant: %w", err)
	}
	return g, ov, nil, nil
}
