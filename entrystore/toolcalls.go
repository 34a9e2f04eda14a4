package entrystore

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

// Tool-call statuses. A record is written "running" when the call starts
// and updated once it ends.
const (
	ToolCallRunning   = "running"
	ToolCallCompleted = "completed"
	ToolCallError     = "error"
	ToolCallCancelled = "cancelled"
	// ToolCallAwaitingApproval: the call waits for a person's decision.
	ToolCallAwaitingApproval = "awaiting_approval"
	// ToolCallRejected: a person rejected the call; it never ran.
	ToolCallRejected = "rejected"
	// ToolCallAwaitingResult: a client tool call waits for the client's
	// output.
	ToolCallAwaitingResult = "awaiting_result"
)

// ToolCall records one tool invocation: what the model asked (MessageID is
// its assistant entry), what came back (ResultEntryID, Output) and, when
// the output was cut for the model, where the whole of it is (OutputSHA256
// in the content store).
type ToolCall struct {
	ID            string          `db:"id"`
	OrgID         string          `db:"org_id"`
	ExecutionID   string          `db:"execution_id"`
	MessageID     string          `db:"message_id"`
	ResultEntryID string          `db:"result_entry_id"`
	ToolCallID    string          `db:"tool_call_id"`
	ToolName      string          `db:"tool_name"`
	Status        string          `db:"status"`
	Input         json.RawMessage `db:"input"`
	Output        json.RawMessage `db:"output"`
	OutputSHA256  string          `db:"output_sha256"`
	OutputSize    int64           `db:"output_size"`
	Truncated     bool            `db:"truncated"`
	DurationMs    int64           `db:"duration_ms"`
	StepNumber    int             `db:"step_number"`
	// Policy is the call's tool policy (auto, ask or forbid), when known.
	Policy string `db:"policy"`
	// Approval: for a call whose policy is ask, its risk, when approval
	// was requested and the decision once made.
	Risk                string     `db:"risk"`
	ApprovalRequestedAt *time.Time `db:"approval_requested_at"`
	Decision            string     `db:"decision"`
	DecisionReason      string     `db:"decision_reason"`
	DecidedBy           string     `db:"decided_by"`
	DecidedAt           *time.Time `db:"decided_at"`
	AlwaysAllow         bool       `db:"always_allow"`
	// EditedArguments are the arguments the call ran with when the
	// person who approved it edited them (Input stays the model's).
	EditedArguments json.RawMessage `db:"edited_arguments"`
	// StandingApprovalID is the standing approval that let the call run
	// without waiting, if one did.
	StandingApprovalID string    `db:"standing_approval_id"`
	CreatedAt          time.Time `db:"created_at"`
	UpdatedAt          time.Time `db:"updated_at"`
}

const toolCallCols = `id::text AS id, org_id::text AS org_id, agent_execution_id::text AS execution_id,
	coalesce(message_id::text, '') AS message_id, coalesce(result_entry_id::text, '') AS result_entry_id,
	tool_call_id, tool_name, status, coalesce(input, ` + askedInput + `) AS input, ` + linkedOutput + ` AS output, coalesce(encode(output_sha256, 'hex'), '') AS output_sha256,
	output_size, truncated, duration_ms, step_number, coalesce(policy, '') AS policy, coalesce(risk, '') AS risk,
	approval_requested_at, coalesce(decision, '') AS decision, coalesce(decision_reason, '') AS decision_reason,
	coalesce(decided_by, '') AS decided_by, decided_at, always_allow, edited_arguments,
	coalesce(standing_approval_id::text, '') AS standing_approval_id, created_at, updated_at`

// linkedOutput is a record's output. A record linked to its result
// entry keeps no copy of the result's text (RecordToolCall drops it): it
// is read from the entry, which holds exactly what the record held, the
// text the model sees. A tool's output was stored twice otherwise, its
// largest payload.
const linkedOutput = `coalesce(output, (SELECT jsonb_build_object(
		'text', (SELECT coalesce(string_agg(b->>'text', ''), '') FROM json_array_elements(e.content->'content') b WHERE b->>'type' = 'text'),
		'isError', coalesce((e.content->>'isError')::boolean, false))
	FROM agent_entry e WHERE e.id = result_entry_id))`

// askedInput is the arguments of tool call tool_call_id in the record's
// assistant entry (message_id): what the model asked for. A record whose
// input is exactly that keeps no copy of it (RecordToolCall drops it, as
// it drops a linked output) and is read from the entry.
const askedInput = `(SELECT (b->'toolCall'->'arguments')::jsonb FROM agent_entry m CROSS JOIN LATERAL json_array_elements(m.content->'content') b
	WHERE m.id = message_id AND b->>'type' = 'tool_call' AND b->'toolCall'->>'id' = tool_call_id LIMIT 1)`

// askedInputOf is askedInput for parameters: message $3, tool call $5.
const askedInputOf = `(SELECT (b->'toolCall'->'arguments')::jsonb FROM agent_entry m CROSS JOIN LATERAL json_array_elements(m.content->'content') b
	WHERE m.id = $3 AND b->>'type' = 'tool_call' AND b->'toolCall'->>'id' = $5 LIMIT 1)`

func (t ToolCall) utc() ToolCall {
	t.CreatedAt, t.UpdatedAt = t.CreatedAt.UTC(), t.UpdatedAt.UTC()
	t.ApprovalRequestedAt, t.DecidedAt = utcPtr(t.ApprovalRequestedAt), utcPtr(t.DecidedAt)
	return t
}

// RecordToolCall inserts the record for (execution, message, tool call ID)
// or, when it exists, updates its outcome: status, output, result entry,
// sizes and duration. A finished call never goes back to "running" or
// "awaiting_approval", so a retried activity that records the start again
// cannot undo the end; "running" replaces "awaiting_approval" (the call
// was approved). A decision, once recorded, stays; unset fields keep their
// value (agentsdk.ToolCallRecord.Merge states the same rules).
func (s *Store) RecordToolCall(ctx context.Context, tc ToolCall) (ToolCall, error) {
	args, err := toolCallArgs(tc)
	if err != nil {
		return ToolCall{}, err
	}
	out, err := queryOne[ToolCall](ctx, s.pool, toolCallUpsertSQL, args...)
	return toolCallRecorded(out, err, tc)
}

// recordToolCallOp names RecordToolCall's errors.
const recordToolCallOp = "record tool call"

// toolCallRecorded is RecordToolCall's answer to what its statement
// returned.
func toolCallRecorded(out ToolCall, err error, tc ToolCall) (ToolCall, error) {
	if errors.Is(err, errNoRows) {
		return ToolCall{}, errf(recordToolCallOp, ErrInvalid, "message or result entry is not an entry of execution %s", tc.ExecutionID)
	}
	return out.utc(), wrap(recordToolCallOp, err)
}

// toolCallArgs checks tc and returns toolCallUpsertSQL's parameters: $1
// organization, $2 execution, $3 message, $5 tool call ID.
func toolCallArgs(tc ToolCall) ([]any, error) {
	const op = recordToolCallOp
	ids, err := writeIDs(op, tc.OrgID, tc.ExecutionID, tc.MessageID)
	if err != nil {
		return nil, err
	}
	result, ok := optID(tc.ResultEntryID)
	if !ok {
		return nil, errf(op, ErrInvalid, "malformed result entry id %q", tc.ResultEntryID)
	}
	if tc.ToolCallID == "" || tc.ToolName == "" {
		return nil, errf(op, ErrInvalid, "tool call id and tool name are required")
	}
	standing, ok := optID(tc.StandingApprovalID)
	if !ok {
		return nil, errf(op, ErrInvalid, "malformed standing approval id %q", tc.StandingApprovalID)
	}
	if tc.Status == "" {
		tc.Status = ToolCallRunning
	}
	if tc.Decision != "" && tc.Decision != "approve" && tc.Decision != "reject" {
		return nil, errf(op, ErrInvalid, "decision must be approve or reject; got %q", tc.Decision)
	}
	var sha []byte
	if tc.OutputSHA256 != "" {
		if sha, err = hex.DecodeString(tc.OutputSHA256); err != nil || len(sha) != 32 {
			return nil, errf(op, ErrInvalid, "output sha256 %q", tc.OutputSHA256)
		}
	}
	return []any{ids[0], ids[1], ids[2], nullIfEmpty(result), tc.ToolCallID, tc.ToolName, tc.Status,
		nullJSON(tc.Input), nullJSON(tc.Output), sha, tc.OutputSize, tc.Truncated, tc.DurationMs, tc.StepNumber,
		nullIfEmpty(tc.Policy), nullIfEmpty(tc.Risk), tc.ApprovalRequestedAt, nullIfEmpty(tc.Decision),
		nullIfEmpty(tc.DecisionReason), nullIfEmpty(tc.DecidedBy), tc.DecidedAt, tc.AlwaysAllow,
		nullJSON(tc.EditedArguments), nullIfEmpty(standing)}, nil
}

// toolCallUpsertSQL is RecordToolCall's statement.
const toolCallUpsertSQL = `
		INSERT INTO agent_tool_call AS t (org_id, agent_execution_id, message_id, result_entry_id, tool_call_id,
			tool_name, status, input, output, output_sha256, output_size, truncated, duration_ms, step_number,
			policy, risk, approval_requested_at, decision, decision_reason, decided_by, decided_at, always_allow,
			edited_arguments, standing_approval_id)
		SELECT $1, $2, $3, $4::uuid, $5, $6, $7, CASE WHEN $8::jsonb = ` + askedInputOf + ` THEN NULL ELSE $8::jsonb END, CASE WHEN $4::uuid IS NULL OR NOT $9::jsonb ? 'text' THEN $9::jsonb END, $10, $11, $12, $13, $14,
			$15, $16, $17, $18, $19, $20, $21, $22, $23::jsonb, $24::uuid
		WHERE EXISTS (SELECT 1 FROM agent_entry WHERE id = $3 AND agent_execution_id = $2 AND org_id = $1)
		  AND ($4::uuid IS NULL OR EXISTS (
			SELECT 1 FROM agent_entry WHERE id = $4::uuid AND agent_execution_id = $2 AND org_id = $1))
		ON CONFLICT (agent_execution_id, message_id, tool_call_id) DO UPDATE SET
			status = CASE
				WHEN EXCLUDED.status IN ('awaiting_approval', 'awaiting_result') THEN t.status
				WHEN EXCLUDED.status = 'running' AND t.status <> 'awaiting_approval' THEN t.status
				ELSE EXCLUDED.status END,
			step_number = CASE WHEN t.step_number = 0 THEN EXCLUDED.step_number ELSE t.step_number END,
			policy = coalesce(t.policy, EXCLUDED.policy),
			risk = coalesce(t.risk, EXCLUDED.risk),
			approval_requested_at = coalesce(t.approval_requested_at, EXCLUDED.approval_requested_at),
			decision = coalesce(t.decision, EXCLUDED.decision),
			decision_reason = CASE WHEN t.decision IS NULL THEN EXCLUDED.decision_reason ELSE t.decision_reason END,
			decided_by = CASE WHEN t.decision IS NULL THEN EXCLUDED.decided_by ELSE t.decided_by END,
			decided_at = CASE WHEN t.decision IS NULL THEN EXCLUDED.decided_at ELSE t.decided_at END,
			always_allow = CASE WHEN t.decision IS NULL THEN EXCLUDED.always_allow ELSE t.always_allow END,
			edited_arguments = CASE WHEN t.decision IS NULL THEN EXCLUDED.edited_arguments ELSE t.edited_arguments END,
			standing_approval_id = CASE WHEN t.decision IS NULL THEN EXCLUDED.standing_approval_id ELSE t.standing_approval_id END,
			result_entry_id = coalesce(EXCLUDED.result_entry_id, t.result_entry_id),
			input = CASE WHEN EXCLUDED.input IS NULL AND $8::jsonb IS NOT NULL THEN NULL ELSE coalesce(EXCLUDED.input, t.input) END,
			output = CASE WHEN coalesce(EXCLUDED.result_entry_id, t.result_entry_id) IS NOT NULL
				AND coalesce($9::jsonb, t.output) ? 'text' THEN NULL
				ELSE coalesce(EXCLUDED.output, t.output) END,
			output_sha256 = coalesce(EXCLUDED.output_sha256, t.output_sha256),
			output_size = greatest(EXCLUDED.output_size, t.output_size),
			truncated = EXCLUDED.truncated OR t.truncated,
			duration_ms = greatest(EXCLUDED.duration_ms, t.duration_ms),
			updated_at = now()
		RETURNING ` + toolCallCols

// GetToolCall returns one tool-call record with its full input and output.
func (s *Store) GetToolCall(ctx context.Context, orgID, id string) (ToolCall, error) {
	t, err := getOne[ToolCall](ctx, s.pool, "get tool call "+id, "agent_tool_call", toolCallCols, orgID, id)
	return t.utc(), err
}

// ToolCallOf returns the record of tool call toolCallID of the assistant
// entry messageID: how a retried or resumed step finds a call's outcome.
func (s *Store) ToolCallOf(ctx context.Context, orgID, executionID, messageID, toolCallID string) (ToolCall, error) {
	op := "get tool call " + toolCallID
	ids, err := readIDs(op, orgID, executionID, messageID)
	if err != nil {
		return ToolCall{}, err
	}
	t, err := queryOne[ToolCall](ctx, s.pool, `SELECT `+toolCallCols+` FROM agent_tool_call
		WHERE org_id = $1 AND agent_execution_id = $2 AND message_id = $3 AND tool_call_id = $4`,
		ids[0], ids[1], ids[2], toolCallID)
	return t.utc(), wrap(op, err)
}

// ToolCallFilter narrows ListToolCalls; zero fields match everything.
type ToolCallFilter struct {
	ToolName string
	Status   string
}

// ListToolCalls pages through an execution's tool calls by step number.
func (s *Store) ListToolCalls(ctx context.Context, orgID, executionID string, f ToolCallFilter, p Page) ([]ToolCall, string, error) {
	const op = "list tool calls"
	ids, k, after, err := listStart(op, p, true, orgID, executionID)
	if err != nil {
		return nil, "", err
	}
	var w where
	w.and("agent_execution_id = ?", ids[1])
	w.and("org_id = ?", ids[0])
	if f.ToolName != "" {
		w.and("tool_name = ?", f.ToolName)
	}
	if f.Status != "" {
		w.and("status = ?", f.Status)
	}
	if after {
		w.and("(step_number, created_at, id) > (?, ?, ?::uuid)", k.N, k.T, k.ID)
	}
	ts, next, err := listPage(ctx, s.pool, p, pgx.RowToStructByName[ToolCall], func(t ToolCall) keyset {
		return keyset{N: int64(t.StepNumber), T: t.CreatedAt, ID: t.ID}
	}, `SELECT `+toolCallCols+` FROM agent_tool_call
		WHERE `+w.String()+` ORDER BY step_number, created_at, id LIMIT `+w.param(p.limit()+1), w.args...)
	if err != nil {
		return nil, "", wrap(op, err)
	}
	return utcAll(ts, ToolCall.utc), next, nil
}

// LatestToolCall returns the newest record of the execution with the
// model's tool call ID: the call a person decides on by that ID (a
// provider's IDs are unique within a conversation; a scripted model's may
// repeat across turns, and then the newest is the one waiting).
func (s *Store) LatestToolCall(ctx context.Context, orgID, executionID, toolCallID string) (ToolCall, error) {
	op := "get tool call " + toolCallID
	ids, err := readIDs(op, orgID, executionID)
	if err != nil {
		return ToolCall{}, err
	}
	t, err := queryOne[ToolCall](ctx, s.pool, `SELECT `+toolCallCols+` FROM agent_tool_call
		WHERE org_id = $1 AND agent_execution_id = $2 AND tool_call_id = $3
		ORDER BY step_number DESC, created_at DESC LIMIT 1`, ids[0], ids[1], toolCallID)
	return t.utc(), wrap(op, err)
}

// CancelAwaitingToolCalls marks the execution's calls still waiting for
// approval or a client's output cancelled (it has ended; they will never run) and returns how
// many it marked.
func (s *Store) CancelAwaitingToolCalls(ctx context.Context, orgID, executionID string) (int64, error) {
	const op = "cancel awaiting tool calls"
	ids, err := writeIDs(op, orgID, executionID)
	if err != nil {
		return 0, err
	}
	tag, err := s.pool.Exec(ctx, `UPDATE agent_tool_call SET status = 'cancelled', updated_at = now()
		WHERE org_id = $1 AND agent_execution_id = $2 AND status IN ('awaiting_approval', 'awaiting_result')`, ids[0], ids[1])
	return tag.RowsAffected(), wrap(op, err)
}
