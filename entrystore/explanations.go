package entrystore

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"
)

// Explanation statuses.
const (
	ExplanationPending   = "pending"
	ExplanationCompleted = "completed"
	ExplanationFailed    = "failed"
)

// Explanation is an explain model's account of an execution up to a leaf
// (migration 0027): made once per (execution, leaf). Prompt is the replay
// the model reads; LLMCall the call's record, in an llm_call entry's
// metadata shape, once made.
type Explanation struct {
	ID             string          `db:"id"`
	OrgID          string          `db:"org_id"`
	ExecutionID    string          `db:"execution_id"`
	LeafEntryID    string          `db:"leaf_entry_id"`
	Status         string          `db:"status"`
	Model          json.RawMessage `db:"model"`
	Prompt         string          `db:"prompt"`
	ReplayTokens   int             `db:"replay_tokens"`
	DecisionPoints int             `db:"decision_points"`
	Truncated      bool            `db:"truncated"`
	Text           string          `db:"text"`
	LLMCall        json.RawMessage `db:"llm_call"`
	Error          string          `db:"error"`
	CreatedAt      time.Time       `db:"created_at"`
	CompletedAt    *time.Time      `db:"completed_at"`
}

const explanationCols = `id::text AS id, org_id::text AS org_id, agent_execution_id::text AS execution_id,
	leaf_entry_id::text AS leaf_entry_id, status, model, prompt, replay_tokens, decision_points, truncated,
	coalesce(text, '') AS text, llm_call, coalesce(error, '') AS error, created_at, completed_at`

// ClaimExplanation returns the explanation of x's execution and leaf,
// writing x as it (pending) when there is none: the first request for a
// leaf's explanation writes it, every later one gets that one back.
// created says which.
func (s *Store) ClaimExplanation(ctx context.Context, x Explanation) (Explanation, bool, error) {
	const op = "claim explanation"
	ids, err := writeIDs(op, x.OrgID, x.ExecutionID, x.LeafEntryID)
	if err != nil {
		return Explanation{}, false, err
	}
	rows, err := s.pool.Query(ctx, `
		WITH ins AS (
			INSERT INTO agent_explanation (org_id, agent_execution_id, leaf_entry_id, model, prompt, replay_tokens, decision_points, truncated)
			SELECT $1, $2, $3, $4, $5, $6, $7, $8 FROM agent_execution WHERE id = $2 AND org_id = $1
			ON CONFLICT (agent_execution_id, leaf_entry_id) DO NOTHING
			RETURNING *, true AS created)
		SELECT `+explanationCols+`, created FROM ins
		UNION ALL
		SELECT `+explanationCols+`, false FROM agent_explanation
		WHERE org_id = $1 AND agent_execution_id = $2 AND leaf_entry_id = $3`,
		ids[0], ids[1], ids[2], string(x.Model), x.Prompt, x.ReplayTokens, x.DecisionPoints, x.Truncated)
	if err != nil {
		return Explanation{}, false, wrap(op, err)
	}
	type claimed struct {
		Explanation
		Created bool `db:"created"`
	}
	got, err := pgx.CollectRows(rows, pgx.RowToStructByName[claimed])
	if err != nil {
		return Explanation{}, false, wrap(op, err)
	}
	if len(got) == 0 {
		// Nothing inserted and nothing found: no such execution here.
		return Explanation{}, false, errf(op, ErrNotFound, "no execution %s", x.ExecutionID)
	}
	return got[0].Explanation.utc(), got[0].Created, nil
}

// GetExplanation reads explanation id of the organization.
func (s *Store) GetExplanation(ctx context.Context, orgID, id string) (Explanation, error) {
	x, err := getOne[Explanation](ctx, s.pool, "get explanation", "agent_explanation", explanationCols, orgID, id)
	return x.utc(), err
}

// LatestExplanation is the execution's explanation of leafID, or its
// latest when leafID is "".
func (s *Store) LatestExplanation(ctx context.Context, orgID, executionID, leafID string) (Explanation, error) {
	const op = "latest explanation"
	ids, err := readIDs(op, orgID, executionID)
	if err != nil {
		return Explanation{}, err
	}
	leaf := any(nil)
	if leafID != "" {
		l, err := readIDs(op, leafID)
		if err != nil {
			return Explanation{}, err
		}
		leaf = l[0]
	}
	x, err := queryOne[Explanation](ctx, s.pool, `SELECT `+explanationCols+` FROM agent_explanation
		WHERE org_id = $1 AND agent_execution_id = $2 AND ($3::uuid IS NULL OR leaf_entry_id = $3::uuid)
		ORDER BY created_at DESC, id LIMIT 1`, ids[0], ids[1], leaf)
	return x.utc(), wrap(op, err)
}

// CompleteExplanation records a pending explanation's text and its
// call's record; an explanation no longer pending keeps what it has
// (a retried activity finds its first attempt's work), and false says so.
func (s *Store) CompleteExplanation(ctx context.Context, orgID, id, text string, llmCall json.RawMessage) (bool, error) {
	return s.endExplanation(ctx, "complete explanation", orgID, id, ExplanationCompleted, text, llmCall, "")
}

// FailExplanation records why a pending explanation could not be made.
func (s *Store) FailExplanation(ctx context.Context, orgID, id, reason string) (bool, error) {
	return s.endExplanation(ctx, "fail explanation", orgID, id, ExplanationFailed, "", nil, reason)
}

func (s *Store) endExplanation(ctx context.Context, op, orgID, id, status, text string, llmCall json.RawMessage, reason string) (bool, error) {
	ids, err := writeIDs(op, orgID, id)
	if err != nil {
		return false, err
	}
	tag, err := s.pool.Exec(ctx, `UPDATE agent_explanation SET status = $3, text = nullif($4, ''), llm_call = $5::json,
		error = nullif($6, ''), completed_at = now()
		WHERE org_id = $1 AND id = $2 AND status = 'pending'`, ids[0], ids[1], status, text, nullJSON(llmCall), reason)
	if err != nil {
		return false, wrap(op, err)
	}
	return tag.RowsAffected() == 1, nil
}

func (x Explanation) utc() Explanation {
	x.CreatedAt = x.CreatedAt.UTC()
	x.CompletedAt = utcPtr(x.CompletedAt)
	return x
}
