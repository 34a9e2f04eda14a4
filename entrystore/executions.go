package entrystore

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/agentree/agentree/internal/domain"
)

// Status is an execution's lifecycle state, the UI's source of truth
// (domain.Status; see the package doc on the aliases).
type Status = domain.Status

// The statuses an execution moves through (domain's).
const (
	StatusPending    = domain.StatusPending
	StatusRunning    = domain.StatusRunning
	StatusWaiting    = domain.StatusWaiting
	StatusCancelling = domain.StatusCancelling
	StatusCompleted  = domain.StatusCompleted
	StatusFailed     = domain.StatusFailed
	StatusCancelled  = domain.StatusCancelled
	StatusPaused     = domain.StatusPaused
)

// allowedFrom is domain.MovesTo(to) as the text array the status update's
// SQL matches the row against.
func allowedFrom(to Status) []string {
	var from []string
	for _, s := range domain.MovesTo(to) {
		from = append(from, string(s))
	}
	return from
}

// Execution is one agent run: one Temporal workflow ID and its segments
// (domain.Execution).
type Execution = domain.Execution

const executionCols = `id::text AS id, org_id::text AS org_id,
	coalesce(agent_definition_id::text, '') AS definition_id, coalesce(parent_id::text, '') AS parent_id,
	coalesce(resumed_from::text, '') AS resumed_from, coalesce(forked_from::text, '') AS forked_from,
	coalesce(forked_from_entry::text, '') AS forked_from_entry, kind, status, config, execution_input(input, id) AS input, output, error,
	stop_reason, queue, current_checkpoint_seq, step_count, coalesce(leaf_entry_id::text, '') AS leaf_entry_id, metadata, created_at, updated_at,
	started_at, completed_at, version, coalesce(local_worker, '') AS local_worker, traceparent,
	persistence_mode`

// utcExecution reports e's times in UTC.
func utcExecution(e Execution) Execution {
	e.CreatedAt, e.UpdatedAt = e.CreatedAt.UTC(), e.UpdatedAt.UTC()
	e.StartedAt, e.CompletedAt = utcPtr(e.StartedAt), utcPtr(e.CompletedAt)
	return e
}

// DefaultQueue is the task queue an execution runs on unless it names one.
const DefaultQueue = "agentree"

// CreateExecution stores a new PENDING execution. ID may be preset (the
// workflow ID chosen by the caller) or left "" to generate one; a taken ID is
// ErrConflict. Definition, parent and resumed-from references must be rows of
// the same organization (else ErrInvalid). Config is frozen here.
func (s *Store) CreateExecution(ctx context.Context, e Execution) (Execution, error) {
	return createExecution(ctx, s.pool, e)
}

func createExecution(ctx context.Context, q querier, e Execution) (Execution, error) {
	const op = "create execution"
	ids, err := writeIDs(op, e.OrgID)
	if err != nil {
		return Execution{}, err
	}
	refs := []string{e.ID, e.DefinitionID, e.ParentID, e.ResumedFrom, e.ForkedFrom, e.ForkedFromEntry}
	for i, r := range refs {
		v, ok := optID(r)
		if !ok {
			return Execution{}, errf(op, ErrInvalid, "malformed id %q", r)
		}
		refs[i] = v
	}
	if e.Kind == "" {
		return Execution{}, errf(op, ErrInvalid, "kind is required")
	}
	if e.StepCount < 0 {
		return Execution{}, errf(op, ErrInvalid, "negative step count")
	}
	if e.Queue == "" {
		e.Queue = DefaultQueue
	}
	out, err := queryOne[Execution](ctx, q, `
		INSERT INTO agent_execution (id, org_id, agent_definition_id, parent_id, resumed_from, kind,
			config, input, metadata, queue, step_count, forked_from, forked_from_entry, traceparent)
		SELECT coalesce(NULLIF($2, '')::uuid, gen_random_uuid()), $1, NULLIF($3, '')::uuid,
			NULLIF($4, '')::uuid, NULLIF($5, '')::uuid, $6, $7, $8, $9, $10, $11, NULLIF($12, '')::uuid, NULLIF($13, '')::uuid, $14
		WHERE ($3 = '' OR EXISTS (SELECT 1 FROM agent_definition WHERE org_id = $1 AND id = NULLIF($3, '')::uuid))
		  AND ($4 = '' OR EXISTS (SELECT 1 FROM agent_execution WHERE org_id = $1 AND id = NULLIF($4, '')::uuid))
		  AND ($5 = '' OR EXISTS (SELECT 1 FROM agent_execution WHERE org_id = $1 AND id = NULLIF($5, '')::uuid))
		  AND ($12 = '' OR EXISTS (SELECT 1 FROM agent_execution WHERE org_id = $1 AND id = NULLIF($12, '')::uuid))
		RETURNING `+executionCols,
		ids[0], refs[0], refs[1], refs[2], refs[3], e.Kind,
		jsonOr(e.Config, "{}"), nullJSON(e.Input), nullJSON(e.Metadata), e.Queue, e.StepCount, refs[4], refs[5], e.Traceparent)
	if errors.Is(err, errNoRows) {
		return Execution{}, errf(op, ErrInvalid, "definition, parent or resumed-from is not in the organization")
	}
	return utcExecution(out), wrap(op, err)
}

// GetExecution returns one execution of the organization.
func (s *Store) GetExecution(ctx context.Context, orgID, id string) (Execution, error) {
	return getExecution(ctx, s.pool, orgID, id)
}

// ExecutionSettings is what every model call, tool call and segment start
// needs of an execution: its status and frozen config, without its input
// (which can be a whole long first prompt).
type ExecutionSettings struct {
	Status Status          `db:"status"`
	Config json.RawMessage `db:"config"`
	// CheckpointSeq is the latest checkpoint's sequence.
	CheckpointSeq int `db:"current_checkpoint_seq"`
}

// GetExecutionSettings reads only an execution's status and config: the
// hot path's read, kept off the row's large columns.
func (s *Store) GetExecutionSettings(ctx context.Context, orgID, id string) (ExecutionSettings, error) {
	return getOne[ExecutionSettings](ctx, s.pool, "get execution settings "+id, "agent_execution", "status, config, current_checkpoint_seq", orgID, id)
}

func getExecution(ctx context.Context, q querier, orgID, id string) (Execution, error) {
	e, err := getOne[Execution](ctx, q, "get execution "+id, "agent_execution", executionCols, orgID, id)
	return utcExecution(e), err
}

// ExecutionFilter narrows ListExecutions; zero fields match everything.
type ExecutionFilter struct {
	Status       Status
	Kind         string
	DefinitionID string
	ParentID     string
	// ForkedFrom: only the forks of this execution.
	ForkedFrom string
	// PersistenceMode: only executions in this mode (PersistenceRemote or
	// PersistenceWorkerHeld).
	PersistenceMode string
}

// The persistence modes an execution's row records (seed 000 "Execution
// Modes"): the same words as agentsdk.Config.PersistenceMode.
const (
	PersistenceRemote     = "remote"
	PersistenceWorkerHeld = "local"
)

// ListExecutions pages through the organization's executions, newest first.
// Each filter has its own index, so every combination stays a range scan.
func (s *Store) ListExecutions(ctx context.Context, orgID string, f ExecutionFilter, p Page) ([]Execution, string, error) {
	const op = "list executions"
	ids, k, after, err := listStart(op, p, true, orgID)
	if err != nil {
		return nil, "", err
	}
	var w where
	w.and("org_id = ?", ids[0])
	if err := w.status(op, "status", f.Status); err != nil {
		return nil, "", err
	}
	if f.Kind != "" {
		w.and("kind = ?", f.Kind)
	}
	switch f.PersistenceMode {
	case "":
	case PersistenceRemote, PersistenceWorkerHeld:
		w.and("persistence_mode = ?", f.PersistenceMode)
	default:
		return nil, "", errf(op, ErrInvalid, "persistence mode %q", f.PersistenceMode)
	}
	for col, ref := range map[string]string{"agent_definition_id": f.DefinitionID, "parent_id": f.ParentID, "forked_from": f.ForkedFrom} {
		if ref == "" {
			continue
		}
		id, ok := parseID(ref)
		if !ok {
			return nil, "", errf(op, ErrInvalid, "malformed id %q", ref)
		}
		w.and(col+" = ?", id)
	}
	if after {
		w.and("(created_at, id) < (?, ?::uuid)", k.T, k.ID)
	}
	es, next, err := listPage(ctx, s.pool, p, pgx.RowToStructByName[Execution], func(e Execution) keyset { return keyset{T: e.CreatedAt, ID: e.ID} },
		`SELECT `+executionCols+` FROM agent_execution
		WHERE `+w.String()+` ORDER BY created_at DESC, id DESC LIMIT `+w.param(p.limit()+1), w.args...)
	if err != nil {
		return nil, "", wrap(op, err)
	}
	return utcAll(es, utcExecution), next, nil
}

// ResumedBy returns the ID of the execution that resumed id ("" when none
// has).
func (s *Store) ResumedBy(ctx context.Context, orgID, id string) (string, error) {
	op := "resumed by " + id
	ids, err := readIDs(op, orgID, id)
	if err != nil {
		return "", err
	}
	var by string
	err = s.pool.QueryRow(ctx, `SELECT id::text FROM agent_execution WHERE org_id = $1 AND resumed_from = $2`, ids[0], ids[1]).Scan(&by)
	if errors.Is(err, errNoRows) {
		return "", nil
	}
	return by, wrap(op, err)
}
