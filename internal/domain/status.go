package domain

import "slices"

// Status is an execution's lifecycle state, kept on the execution row: the
// UI's source of truth (DESIGN.md "Status").
type Status string

// The statuses an execution moves through.
const (
	StatusPending    Status = "PENDING"
	StatusRunning    Status = "RUNNING"
	StatusWaiting    Status = "WAITING"
	StatusCancelling Status = "CANCELLING"
	StatusCompleted  Status = "COMPLETED"
	StatusFailed     Status = "FAILED"
	StatusCancelled  Status = "CANCELLED"
	// StatusPaused: the execution spent its step budget (config.maxSteps).
	// Final like the others; a resume is a new execution.
	StatusPaused Status = "PAUSED"
)

// Terminal reports whether s is final: nothing moves an execution out of it.
func (s Status) Terminal() bool {
	return s == StatusCompleted || s == StatusFailed || s == StatusCancelled || s == StatusPaused
}

// Valid reports whether s is one of the statuses above.
func (s Status) Valid() bool {
	switch s {
	case StatusPending, StatusRunning, StatusWaiting, StatusCancelling:
		return true
	}
	return s.Terminal()
}

// MovesTo lists the statuses an execution may move to `to` from: itself;
// any live status; and, for an ending or a cancel, CANCELLING (a cancel
// that raced with completion or failure). A terminal status appears only
// as itself: it is final. Every store keeps this rule (entrystore in SQL).
func MovesTo(to Status) []Status {
	from := []Status{to, StatusPending, StatusRunning, StatusWaiting}
	if to.Terminal() || to == StatusCancelling {
		from = append(from, StatusCancelling)
	}
	return from
}

// CanMoveTo reports whether an execution at s may move to `to` (MovesTo).
func (s Status) CanMoveTo(to Status) bool {
	return slices.Contains(MovesTo(to), s)
}
