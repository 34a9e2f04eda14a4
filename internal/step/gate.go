package step

import (
	"context"
	"fmt"

	"github.com/agentree/agentree/internal/domain"
)

// Gate is what a model call reads before it calls (Deps.Gate).
type Gate struct {
	// Share is the largest share of a budget's cap spent.
	Share float64
	// Overlay is the execution's active variant's overlay when the gate
	// read it; nil when the overlay is the Store's to read (Overlayer).
	Overlay *domain.ContextOverlay
}

// gate reads the budgets over in's call and the overlay of its context:
// with one round trip when d.Gate reads both.
func (d Deps) gate(ctx context.Context, orgID, executionID string) (Gate, Overlay, error) {
	var g Gate
	if d.Gate != nil {
		var err error
		if g, err = d.Gate(ctx, orgID, executionID); err != nil {
			return g, Overlay{}, fmt.Errorf("step: model call: %w", err)
		}
	}
	if g.Overlay == nil {
		ov, err := d.overlay(ctx, orgID, executionID)
		return g, ov, err
	}
	ov, err := OverlayOf(*g.Overlay)
	if err != nil {
		return g, Overlay{}, fmt.Errorf("step: variant: %w", err)
	}
	return g, ov, nil
}
