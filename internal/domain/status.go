package domain

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
