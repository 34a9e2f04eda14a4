package domain_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/internal/domain"
)

var statuses = []domain.Status{domain.StatusPending, domain.StatusRunning, domain.StatusWaiting, domain.StatusCancelling,
	domain.StatusCompleted, domain.StatusFailed, domain.StatusCancelled, domain.StatusPaused}

// TestStatusMoves: the rules every store keeps. A terminal status is
// final, CANCELLING may only end (or stay), a live status may go
// anywhere, and moving to the status an execution has is allowed.
func TestStatusMoves(t *testing.T) {
	for _, from := range statuses {
		require.True(t, from.Valid(), from)
		for _, to := range statuses {
			var want bool
			switch {
			case from == to:
				want = true
			case from.Terminal():
				want = false
			case from == domain.StatusCancelling:
				want = to.Terminal()
			default:
				want = true
			}
			require.Equal(t, want, from.CanMoveTo(to), "%s → %s", from, to)
		}
	}
	require.False(t, domain.Status("DONE").Valid())
	require.ErrorIs(t, domain.ErrSignalConsumed, domain.ErrConflict, "a consumed signal is a conflict")
}
