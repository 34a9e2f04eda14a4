package entrystore

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

// StandingApproval lets calls of a tool run without waiting for a person
// in every execution of a definition (DefinitionID) or of the whole
// organization (no DefinitionID). ArgumentPattern, when set, narrows it
// to some calls; the caller matches it (the store does not know tools'
// arguments). A revoked one stays, for the audit.
type StandingApproval struct {
	ID              string     `db:"id"`
	OrgID           string     `db:"org_id"`
	DefinitionID    string     `db:"definition_id"`
	ToolName        string     `db:"tool_name"`
	ArgumentPattern string     `db:"argument_pattern"`
	CreatedBy       string     `db:"created_by"`
	CreatedAt       time.Time  `db:"created_at"`
	RevokedBy       string     `db:"revoked_by"`
	RevokedAt       *time.Time `db:"revoked_at"`
	// SignalID is the decision that made it, if one did.
	SignalID string `db:"signal_id"`
}

const standingCols = `id::text AS id, org_id::text AS org_id, coalesce(definition_id::text, '') AS definition_id, tool_name,
	coalesce(argument_pattern, '') AS argument_pattern, created_by, created_at, coalesce(revoked_by, '') AS revoked_by,
	revoked_at, coalesce(signal_id::text, '') AS signal_id`

func (a StandingApproval) utc() StandingApproval {
	a.CreatedAt, a.RevokedAt = a.CreatedAt.UTC(), utcPtr(a.RevokedAt)
	return a
}

// CreateStandingApproval stores a standing approval. One made by a
// decision (SignalID) is made once: a retried decision returns the first.
// The definition must be the organization's.
func (s *Store) CreateStandingApproval(ctx context.Context, a StandingApproval) (StandingApproval, error) {
	const op = "create standing approval"
	ids, err := writeIDs(op, a.OrgID)
	if err != nil {
		return StandingApproval{}, err
	}
	def, ok := optID(a.DefinitionID)
	sig, ok2 := optID(a.SignalID)
	if !ok || !ok2 {
		return StandingApproval{}, errf(op, ErrInvalid, "malformed definition or signal id")
	}
	if a.ToolName == "" || a.CreatedBy == "" {
		return StandingApproval{}, errf(op, ErrInvalid, "tool name and creator are required")
	}
	out, err := queryOne[StandingApproval](ctx, s.pool, `
		WITH ins AS (
			INSERT INTO standing_approval (org_id, definition_id, tool_name, argument_pattern, created_by, signal_id)
			SELECT $1, $2::uuid, $3, $4, $5, $6::uuid
			WHERE $2::uuid IS NULL OR EXISTS (SELECT 1 FROM agent_definition WHERE id = $2::uuid AND org_id = $1)
			ON CONFLICT (signal_id) DO NOTHING
			RETURNING `+standingCols+`)
		SELECT * FROM ins
		UNION ALL
		SELECT `+standingCols+` FROM standing_approval WHERE $6::uuid IS NOT NULL AND signal_id = $6::uuid AND org_id = $1
		LIMIT 1`,
		ids[0], nullIfEmpty(def), a.ToolName, nullIfEmpty(a.ArgumentPattern), a.CreatedBy, nullIfEmpty(sig))
	if errors.Is(err, errNoRows) {
		return StandingApproval{}, errf(op, ErrNotFound, "no agent definition %s", a.DefinitionID)
	}
	return out.utc(), wrap(op, err)
}

// StandingApprovalFilter narrows ListStandingApprovals.
type StandingApprovalFilter struct {
	// DefinitionID: only that definition's.
	DefinitionID string
	// IncludeRevoked lists revoked ones too.
	IncludeRevoked bool
}

// ListStandingApprovals pages through the organization's standing
// approvals, oldest first.
func (s *Store) ListStandingApprovals(ctx context.Context, orgID string, f StandingApprovalFilter, p Page) ([]StandingApproval, string, error) {
	const op = "list standing approvals"
	ids, k, after, err := listStart(op, p, true, orgID)
	if err != nil {
		return nil, "", err
	}
	var w where
	w.and("org_id = ?", ids[0])
	if f.DefinitionID != "" {
		def, ok := parseID(f.DefinitionID)
		if !ok {
			return nil, "", nil
		}
		w.and("definition_id = ?::uuid", def)
	}
	if !f.IncludeRevoked {
		w.and("revoked_at IS NULL")
	}
	if after {
		w.and("(created_at, id) > (?, ?::uuid)", k.T, k.ID)
	}
	rows, next, err := listPage(ctx, s.pool, p, pgx.RowToStructByName[StandingApproval],
		func(a StandingApproval) keyset { return keyset{T: a.CreatedAt, ID: a.ID} },
		`SELECT `+standingCols+` FROM standing_approval WHERE `+w.String()+` ORDER BY created_at, id LIMIT `+w.param(p.limit()+1), w.args...)
	if err != nil {
		return nil, "", wrap(op, err)
	}
	return utcAll(rows, StandingApproval.utc), next, nil
}

// RevokeStandingApproval ends a standing approval; revoking it again
// changes nothing and returns it.
func (s *Store) RevokeStandingApproval(ctx context.Context, orgID, id, by string) (StandingApproval, error) {
	const op = "revoke standing approval"
	ids, err := readIDs(op, orgID, id)
	if err != nil {
		return StandingApproval{}, err
	}
	a, err := queryOne[StandingApproval](ctx, s.pool, `
		UPDATE standing_approval SET revoked_at = coalesce(revoked_at, now()), revoked_by = coalesce(revoked_by, $3)
		WHERE org_id = $1 AND id = $2 RETURNING `+standingCols, ids[0], ids[1], by)
	return a.utc(), wrap(op+" "+id, err)
}

// StandingApprovalsFor are the standing approvals in force for calls of
// tool in the execution: the organization's and its definition's,
// oldest first.
func (s *Store) StandingApprovalsFor(ctx context.Context, orgID, executionID, tool string) ([]StandingApproval, error) {
	const op = "standing approvals for a call"
	ids, err := readIDs(op, orgID, executionID)
	if err != nil {
		return nil, err
	}
	rows, err := queryAll[StandingApproval](ctx, s.pool, `
		SELECT `+standingCols+` FROM standing_approval a
		WHERE a.org_id = $1 AND a.tool_name = $3 AND a.revoked_at IS NULL
		  AND (a.definition_id IS NULL OR a.definition_id =
			(SELECT agent_definition_id FROM agent_execution WHERE id = $2 AND org_id = $1))
		ORDER BY a.created_at, a.id`, ids[0], ids[1], tool)
	if err != nil {
		return nil, wrap(op, err)
	}
	return utcAll(rows, StandingApproval.utc), nil
}
