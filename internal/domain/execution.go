package domain

import (
	"encoding/json"
	"time"
)

// Execution is one agent run: one Temporal workflow ID and its segments.
// It is the execution row; the db tags name the Postgres columns
// entrystore reads it from (plain tags: this package links no driver).
type Execution struct {
	ID           string `db:"id"`
	OrgID        string `db:"org_id"`
	DefinitionID string `db:"definition_id"`
	ParentID     string `db:"parent_id"`
	ResumedFrom  string `db:"resumed_from"`
	// ForkedFrom and ForkedFromEntry: the execution and entry a fork
	// shares its conversation with.
	ForkedFrom      string `db:"forked_from"`
	ForkedFromEntry string `db:"forked_from_entry"`
	// Holder names the worker whose worker store holds the
	// execution's conversation (persistenceMode local), once it ran.
	Holder string `db:"local_worker"`
	// PersistenceMode is entrystore.PersistenceRemote or
	// entrystore.PersistenceWorkerHeld, generated
	// from the frozen config's persistenceMode (migration 0018).
	PersistenceMode string          `db:"persistence_mode"`
	Kind            string          `db:"kind"`
	Status          Status          `db:"status"`
	Config          json.RawMessage `db:"config"`
	Input           json.RawMessage `db:"input"`
	Output          json.RawMessage `db:"output"`
	Error           string          `db:"error"`
	StopReason      string          `db:"stop_reason"`
	Queue           string          `db:"queue"`
	CheckpointSeq   int             `db:"current_checkpoint_seq"`
	StepCount       int             `db:"step_count"`
	// LeafEntryID is the entry appended last: the end of the active path
	// ("" before the first entry). Every append moves it.
	LeafEntryID string          `db:"leaf_entry_id"`
	Metadata    json.RawMessage `db:"metadata"`
	CreatedAt   time.Time       `db:"created_at"`
	UpdatedAt   time.Time       `db:"updated_at"`
	StartedAt   *time.Time      `db:"started_at"`
	CompletedAt *time.Time      `db:"completed_at"`
	Version     int             `db:"version"`
	// Traceparent is the W3C trace context of the request that created
	// the execution ("" when it carried none): its runs continue that
	// trace.
	Traceparent string `db:"traceparent"`
}

// Transition is a status change and what comes with it. Empty Error,
// StopReason and nil Output leave the stored values alone.
type Transition struct {
	To         Status
	Error      string
	StopReason string
	Output     json.RawMessage
	// Steps are added to the execution's step count with the move (not
	// on a move to the status it has): a completion counts its last step
	// as it shows the status, so no reader sees COMPLETED without it.
	Steps int
}

// Checkpoint is the state a segment hands to the next: the leaf it reached
// and the agent's small state, numbered by a sequence that only grows.
type Checkpoint struct {
	ID          string          `db:"id"`
	OrgID       string          `db:"org_id"`
	ExecutionID string          `db:"execution_id"`
	Sequence    int             `db:"sequence"`
	LeafEntryID string          `db:"leaf_entry_id"`
	State       json.RawMessage `db:"state"`
	Metadata    json.RawMessage `db:"metadata"`
	CreatedAt   time.Time       `db:"created_at"`
	// Steps, on append, are added to the execution's step count in the
	// same transaction.
	Steps int `db:"-"`
}
