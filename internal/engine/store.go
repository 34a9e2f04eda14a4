package engine

import (
	"context"
	"encoding/json"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/event"
	"github.com/agentree/agentree/internal/domain"
	"github.com/agentree/agentree/internal/step"
)

// ResumeSource is what resuming an execution needs of it.
type ResumeSource struct {
	Status    domain.Status
	Config    json.RawMessage
	ParentID  string
	LeafID    string
	StepCount int
	// ResumedBy is the execution that resumed it, if any.
	ResumedBy string
	// CheckpointSeq is its latest checkpoint's sequence.
	CheckpointSeq int
}

// Store is the side store as the engine's store operations need it. The
// Temporal plugin implements it over entrystore (Postgres); agenttest in
// memory. Rules both keep: a terminal status is final, CANCELLING may
// only end, moving to the current status is a no-op.
type Store interface {
	step.Store
	// Execution reads the execution's configuration and status.
	Execution(ctx context.Context, orgID, executionID string) (domain.Execution, error)
	// Transition moves the execution's status (see the rules above).
	Transition(ctx context.Context, orgID, executionID string, tr domain.Transition) (domain.Execution, error)
	// AppendCheckpoint records c; domain.ErrConflict when its sequence exists.
	AppendCheckpoint(ctx context.Context, c domain.Checkpoint) error
	GetCheckpoint(ctx context.Context, orgID, executionID string, seq int) (domain.Checkpoint, error)
	// SignalValue is an inbox row's value.
	SignalValue(ctx context.Context, orgID, signalID string) (json.RawMessage, error)
	// PutSignal stores a signal under id for the live execution;
	// domain.ErrConflict when a row with id exists or the inbox refuses
	// it (a decision on the call is pending already).
	PutSignal(ctx context.Context, orgID, executionID, id, name string, value json.RawMessage) error
	// ConsumeSignal appends e and marks the signal consumed, atomically;
	// domain.ErrSignalConsumed when it was consumed before.
	ConsumeSignal(ctx context.Context, orgID, signalID string, e agentsdk.Entry) (agentsdk.Entry, error)
	// CompleteUnlessSignalled applies tr (a completion at leafID) unless
	// the inbox holds signals of the execution other than known that are
	// unconsumed, or whose entry hangs under leafID (a lost task consumed
	// them past it); then it returns them and changes nothing.
	CompleteUnlessSignalled(ctx context.Context, orgID, executionID, leafID string, known []string, tr domain.Transition) (domain.Execution, []agentsdk.Signal, error)
	// ResumeSource reads what resuming an execution needs; a missing one
	// is agentsdk.ErrNotFound.
	ResumeSource(ctx context.Context, orgID, executionID string) (ResumeSource, error)
	// CancelAwaitingToolCalls marks the execution's calls still waiting
	// for approval cancelled: it has ended, and they will never run.
	CancelAwaitingToolCalls(ctx context.Context, orgID, executionID string) error
}

// Announcer is a Store that commits a checkpoint or a status move with
// the events telling of it, in one transaction and one round trip: a
// commit less at a turn's start and at each of its checkpoints. Without
// it the engine writes, then publishes.
type Announcer interface {
	// AppendCheckpointAnnounced is AppendCheckpoint storing evs with the
	// checkpoint it records; a conflict stores none.
	AppendCheckpointAnnounced(ctx context.Context, c domain.Checkpoint, evs []event.Event) error
	// AppendCheckpointAndWait is AppendCheckpointAnnounced (cpEvs) and,
	// when that records c, the move to WAITING with waitEvs, in one
	// transaction; moved says it made the move. Otherwise the caller
	// moves the execution, as after AppendCheckpointAnnounced.
	AppendCheckpointAndWait(ctx context.Context, c domain.Checkpoint, cpEvs, waitEvs []event.Event) (moved bool, err error)
	// TransitionAnnounced is Transition storing evs with the move when it
	// makes it at once (announced); a move it makes otherwise, or none,
	// stores none, and the caller publishes what that calls for.
	TransitionAnnounced(ctx context.Context, orgID, executionID string, tr domain.Transition, evs []event.Event) (e domain.Execution, announced bool, err error)
	// BeginAnnounced reads the execution (before, as Execution does) and
	// moves it to RUNNING in one round trip, storing evs with the move
	// when it makes it and the execution's latest checkpoint is at most
	// seq; moved says it did. Otherwise nothing moved (or, past seq,
	// nothing was announced) and the caller decides from before.
	BeginAnnounced(ctx context.Context, orgID, executionID string, seq int, evs []event.Event) (before domain.Execution, moved bool, err error)
}
