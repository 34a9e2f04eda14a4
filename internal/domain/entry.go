package domain

import (
	"encoding/json"
	"time"
)

// Entry is one immutable node of an execution's conversation tree: a
// message, an llm_call record, a compaction… ParentID "" marks the root.
// It is the stored row, as every store keeps it; agents and steps see it
// as an agentsdk.Entry (internal/step converts, once).
type Entry struct {
	ID          string `db:"id"`
	OrgID       string `db:"org_id"`
	ExecutionID string `db:"execution_id"`
	ParentID    string `db:"parent_id"`
	Seq         int64  `db:"seq"`
	Depth       int    `db:"depth"`
	// Step is the number of assistant messages (model calls) on the path
	// from the root to the entry, the entry included: the first prompt is
	// step 0, the first answer and its tool results step 1. Computed on
	// append from the parent's.
	Step           int             `db:"step"`
	Type           string          `db:"entry_type"`
	Role           string          `db:"role"`
	Content        json.RawMessage `db:"content"`
	TurnID         string          `db:"turn_id"`
	IdempotencyKey string          `db:"idempotency_key"`
	Metadata       json.RawMessage `db:"metadata"`
	CreatedAt      time.Time       `db:"created_at"`
}
