package adapter

import (
	"context"

	"github.com/agentree/agentree/internal/domain"
	"github.com/agentree/agentree/internal/step"
)

// ContextOverlay is what the execution's active variant changes in its
// model calls' context (issue 40): entrystore keeps variants, so every
// remote execution's calls see them.
func (s pgStore) ContextOverlay(ctx context.Context, orgID, executionID string) (domain.ContextOverlay, error) {
	o, err := s.es.ContextOverlay(ctx, orgID, executionID, "")
	return o, notFound(err)
}

var _ step.Overlayer = pgStore{}

// ContextOverlay is pgStore's for executions in Postgres; a worker-held
// execution's tree is not in Postgres, so it has no variants (the REST
// calls that make them read and write Postgres only).
func (s *heldAware) ContextOverlay(ctx context.Context, orgID, executionID string) (domain.ContextOverlay, error) {
	if held, err := s.isHeld(ctx, orgID, executionID); err != nil || held {
		return domain.ContextOverlay{}, err
	}
	return s.pgStore.ContextOverlay(ctx, orgID, executionID)
}
