package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentree/agentree/agentsdk"
)

// Status is an execution's status, as the execution row keeps it.
type Status string

// The statuses (DESIGN.md "Status").
const (
	StatusPending    Status = "PENDING"
	StatusRunning    Status = "RUNNING"
	StatusWaiting    Status = "WAITING"
	StatusCancelling Status = "CANCELLING"
	StatusCompleted  Status = "COMPLETED"
	StatusFailed     Status = "FAILED"
	StatusCancelled  Status = "CANCELLED"
	StatusPaused     Status = "PAUSED"
)

// Terminal reports whether s ends the execution.
func (s Status) Terminal() bool {
	return s == StatusCompleted || s == StatusFailed || s == StatusCancelled || s == StatusPaused
}

// Execution is what the engine reads of an execution row.
type Execution struct {
	Config     json.RawMessage
	Status     Status
	StopReason string
	Error      string
	// StepCount is the execution's step count (across resumes), as
	// Transition returns it.
	StepCount int
	// CheckpointSeq is the latest checkpoint's sequence, as Execution
	// reads it.
	CheckpointSeq int
}

// ResumeSource is what resuming an execution needs of it.
type ResumeSource struct {
	Status    Status
	Config    json.RawMessage
	ParentID  string
	LeafID    string
	StepCount int
	// ResumedBy is the execution that resumed it, if any.
	ResumedBy string
	// CheckpointSeq is its latest checkpoint's sequence.
	CheckpointSeq int
}

// Transition is a status change and what comes with it. Empty Error and
// StopReason and a nil Output leave the stored values alone.
type Transition struct {
	To         Status
	Error      string
	StopReason string
	Output     json.RawMessage
	// Steps are added to the step count with the move (not on a move to
	// the status the execution has).
	Steps int
}

// Checkpoint is one checkpoint row.
type Checkpoint struct {
	OrgID, ExecutionID string
	Sequence           int
	LeafID             string
	State              json.RawMessage
	Metadata           json.RawMessage
	// Steps are added to the execution's step count with the checkpoint,
	// in its transaction.
	Steps int
}

// ErrConflict is a store's "that was done already, differently".
var ErrConflict = errors.New("conflict")

// ErrSignalConsumed: the signal was consumed before; nothing changed.
var ErrSignalConsumed = fmt.Errorf("%w: the signal was already consumed", ErrConflict)

// Store is the side store as the engine's store operations need it. The
// Temporal plugin implements it over entrystore (Postgres); agenttest in
// memory. Rules both keep: a terminal status is final, CANCELLING may
// only end, moving to the current status is a no-op.
type Store interface {
	agentsdk.Store
	// Execution reads the execution's configuration and status.
	Execution(ctx context.Context, orgID, executionID string) (Execution, error)
	// Transition moves the execution's status (see the rules above).
	Transition(ctx context.Context, orgID, executionID string, tr Transition) (Execution, error)
	// AppendCheckpoint records c; ErrConflict when its sequence exists.
	AppendCheckpoint(ctx context.Context, c Checkpoint) error
	GetCheckpoint(ctx context.Context, orgID, executionID string, seq int) (Checkpoint, error)
	// SignalValue is an inbox row's value.
	SignalValue(ctx context.Context, orgID, signalID string) (json.RawMessage, error)
	// ConsumeSignal appends e and marks the signal consumed, atomically;
	// ErrSignalConsumed when it was consumed before.
	ConsumeSignal(ctx context.Context, orgID, signalID string, e agentsdk.Entry) (agentsdk.Entry, error)
	// CompleteUnlessSignalled applies tr (a completion) unless the inbox
	// holds unconsumed signals of the execution other than known; then it
	// returns them and changes nothing.
	CompleteUnlessSignalled(ctx context.Context, orgID, executionID string, known []string, tr Transition) (Execution, []agentsdk.Signal, error)
	// ResumeSource reads what resuming an execution needs; a missing one
	// is agentsdk.ErrNotFound.
	ResumeSource(ctx context.Context, orgID, executionID string) (ResumeSource, error)
	// CancelAwaitingToolCalls marks the execution's calls still waiting
	// for approval cancelled: it has ended, and they will never run.
	CancelAwaitingToolCalls(ctx context.Context, orgID, executionID string) error
}
