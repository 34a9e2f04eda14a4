package entrystore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/jackc/pgx/v5"
)

// DefaultVariant is the name of every execution's implicit variant: the
// whole path, no override. It gets a row the first time any variant of
// its execution is written (ensureDefault).
const DefaultVariant = "main"

// Variant is a named view of an execution's tree (migration 0025): its
// leaf, the entries left out of the model's context and a model that
// replaces the one the agent asks for.
type Variant struct {
	ID          string
	OrgID       string
	ExecutionID string
	Name        string
	// LeafEntryID is where the variant's path ends: the execution's leaf
	// while the variant is active.
	LeafEntryID      string
	ExcludedEntryIDs []string
	// ModelOverride is an agentsdk.ModelRef as JSON; nil for none.
	ModelOverride json.RawMessage
	ForkedFrom    string
	Active        bool
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

var variantName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`)

// variantCols selects a Variant from agent_variant v joined with its
// execution x (the active variant's leaf is the execution's).
const variantCols = `v.id::text, v.org_id::text, v.agent_execution_id::text, v.name,
	coalesce(CASE WHEN x.active_variant_id = v.id THEN x.leaf_entry_id ELSE v.leaf_entry_id END::text, ''),
	v.excluded_entry_ids::text[], v.model_override, coalesce(v.forked_from::text, ''),
	x.active_variant_id IS NOT DISTINCT FROM v.id, v.created_at, v.updated_at`

func scanVariant(row pgx.CollectableRow) (Variant, error) {
	var v Variant
	err := row.Scan(&v.ID, &v.OrgID, &v.ExecutionID, &v.Name, &v.LeafEntryID, &v.ExcludedEntryIDs,
		(*[]byte)(&v.ModelOverride), &v.ForkedFrom, &v.Active, &v.CreatedAt, &v.UpdatedAt)
	v.CreatedAt, v.UpdatedAt = v.CreatedAt.UTC(), v.UpdatedAt.UTC()
	if v.ExcludedEntryIDs == nil {
		v.ExcludedEntryIDs = []string{}
	}
	return v, err
}

func queryVariants(ctx context.Context, q querier, where string, args ...any) ([]Variant, error) {
	rows, err := q.Query(ctx, `SELECT `+variantCols+` FROM agent_variant v JOIN agent_execution x ON x.id = v.agent_execution_id
		WHERE `+where+` ORDER BY v.created_at, v.id`, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, scanVariant)
}

// ListVariants returns the execution's variants, oldest first: only the
// implicit default, unsaved (no ID), if none was ever written.
func (s *Store) ListVariants(ctx context.Context, orgID, executionID string) ([]Variant, error) {
	const op = "list variants"
	ex, err := s.GetExecution(ctx, orgID, executionID)
	if err != nil {
		return nil, err
	}
	vs, err := queryVariants(ctx, s.pool, `v.org_id = $1 AND v.agent_execution_id = $2`, ex.OrgID, ex.ID)
	if err != nil {
		return nil, wrap(op, err)
	}
	if len(vs) == 0 {
		vs = []Variant{{OrgID: ex.OrgID, ExecutionID: ex.ID, Name: DefaultVariant, LeafEntryID: ex.LeafEntryID,
			ExcludedEntryIDs: []string{}, Active: true, CreatedAt: ex.CreatedAt, UpdatedAt: ex.CreatedAt}}
	}
	return vs, nil
}

// GetVariant returns the execution's variant name.
func (s *Store) GetVariant(ctx context.Context, orgID, executionID, name string) (Variant, error) {
	vs, err := s.ListVariants(ctx, orgID, executionID)
	if err != nil {
		return Variant{}, err
	}
	for _, v := range vs {
		if v.Name == name {
			return v, nil
		}
	}
	return Variant{}, fmt.Errorf("entrystore: get variant %q: %w", name, ErrNotFound)
}

// variantTx runs fn in a transaction holding the execution's row lock,
// with its default variant saved and the variant name (if not "") read:
// every change to an execution's variants goes through here, so two never
// interleave.
func (s *Store) variantTx(ctx context.Context, op, orgID, executionID, name string, fn func(tx pgx.Tx, ex Execution, v Variant) error) error {
	ids, err := readIDs(op, orgID, executionID)
	if err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		ex, err := queryOne[Execution](ctx, tx, `SELECT `+executionCols+` FROM agent_execution WHERE id = $2 AND org_id = $1 FOR UPDATE`, ids[0], ids[1])
		if err != nil {
			return wrap(op, err)
		}
		if err := ensureDefault(ctx, tx, ex); err != nil {
			return wrap(op, err)
		}
		var v Variant
		if name != "" {
			vs, err := queryVariants(ctx, tx, `v.org_id = $1 AND v.agent_execution_id = $2 AND v.name = $3`, ex.OrgID, ex.ID, name)
			if err != nil {
				return wrap(op, err)
			}
			if len(vs) == 0 {
				return fmt.Errorf("entrystore: %s: variant %q: %w", op, name, ErrNotFound)
			}
			v = vs[0]
		}
		return fn(tx, ex, v)
	})
}

// ensureDefault saves the execution's implicit default variant, active,
// unless it has variants already.
func ensureDefault(ctx context.Context, tx pgx.Tx, ex Execution) error {
	_, err := tx.Exec(ctx, `WITH ins AS (
			INSERT INTO agent_variant (org_id, agent_execution_id, name) SELECT $1, $2, $3
			WHERE NOT EXISTS (SELECT 1 FROM agent_variant WHERE agent_execution_id = $2)
			RETURNING id
		)
		UPDATE agent_execution SET active_variant_id = ins.id FROM ins WHERE agent_execution.id = $2`, ex.OrgID, ex.ID, DefaultVariant)
	return err
}

// CreateVariant saves a new variant of the execution whose path ends at
// the entry fromEntryID (an entry of the execution's tree), with the
// active variant's exclusions and model override. It does not become
// active (ActivateVariant).
func (s *Store) CreateVariant(ctx context.Context, orgID, executionID, name, fromEntryID string) (Variant, error) {
	const op = "create variant"
	if !variantName.MatchString(name) {
		return Variant{}, errf(op, ErrInvalid, "name %q must be 1-63 lowercase letters, digits, '.', '_' or '-', starting with a letter or digit", name)
	}
	var out Variant
	err := s.variantTx(ctx, op, orgID, executionID, "", func(tx pgx.Tx, ex Execution, _ Variant) error {
		if _, err := treeEntry(ctx, tx, ex, fromEntryID); err != nil {
			return fmt.Errorf("entrystore: %s: %w", op, err)
		}
		id, err := insertVariant(ctx, tx, ex, name, fromEntryID, "")
		if err != nil {
			return wrap(op, err)
		}
		out, err = variantByID(ctx, tx, ex.OrgID, id)
		return wrap(op, err)
	})
	return out, err
}

// insertVariant saves variant name at leaf with the active variant's
// settings (forkedFrom's, when set) and returns its ID.
func insertVariant(ctx context.Context, tx pgx.Tx, ex Execution, name, leaf, forkedFrom string) (string, error) {
	var id string
	err := tx.QueryRow(ctx, `INSERT INTO agent_variant (org_id, agent_execution_id, name, leaf_entry_id, excluded_entry_ids, model_override, forked_from)
		SELECT $1, $2, $3, $4::uuid, s.excluded_entry_ids, s.model_override, $5::uuid
		FROM agent_variant s WHERE s.id = coalesce($5::uuid, (SELECT active_variant_id FROM agent_execution WHERE id = $2))
		RETURNING id::text`, ex.OrgID, ex.ID, name, leaf, nullIfEmpty(forkedFrom)).Scan(&id)
	return id, err
}

func variantByID(ctx context.Context, q querier, orgID, id string) (Variant, error) {
	vs, err := queryVariants(ctx, q, `v.org_id = $1 AND v.id = $2`, orgID, id)
	if err == nil && len(vs) == 0 {
		err = ErrNotFound
	}
	if err != nil {
		return Variant{}, err
	}
	return vs[0], nil
}

// treeEntry returns the entry id if it belongs to the execution's tree:
// an entry of the execution, or on its path (shared with the execution a
// fork or resume continues). Else ErrNotFound: another execution's
// entries are not this one's to name.
func treeEntry(ctx context.Context, q querier, ex Execution, id string) (Entry, error) {
	if _, ok := parseID(id); !ok {
		return Entry{}, fmt.Errorf("entry %q: %w", id, ErrNotFound)
	}
	e, err := queryEntry(ctx, q, `SELECT `+entryCols+` FROM agent_entry WHERE id = $2 AND org_id = $1`, ex.OrgID, id)
	if err != nil {
		return Entry{}, fmt.Errorf("entry %q: %w", id, wrap("read entry", err))
	}
	if e.ExecutionID == ex.ID || ex.LeafEntryID == "" {
		if e.ExecutionID != ex.ID {
			return Entry{}, fmt.Errorf("entry %q: %w", id, ErrNotFound)
		}
		return e, nil
	}
	var on bool
	err = q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM (`+pathIDsSQL+`) p WHERE p.id = $3)`, ex.OrgID, ex.LeafEntryID, id).Scan(&on)
	if err != nil {
		return Entry{}, wrap("read path", err)
	}
	if !on {
		return Entry{}, fmt.Errorf("entry %q: %w", id, ErrNotFound)
	}
	return e, nil
}

// TreeEntry returns the entry id if it belongs to the execution's tree
// (see treeEntry); ErrNotFound otherwise.
func (s *Store) TreeEntry(ctx context.Context, ex Execution, id string) (Entry, error) {
	e, err := treeEntry(ctx, s.pool, ex, id)
	if err != nil {
		return e, fmt.Errorf("entrystore: tree entry: %w", err)
	}
	return e, nil
}

// pathIDsSQL selects the ids and depths of the path from $2 (an entry of
// org $1) to the root: a plain walk, for the rare checks here; model calls
// read paths through pathSQL.
const pathIDsSQL = `WITH RECURSIVE up (id, parent_id, depth) AS (
		SELECT id, parent_id, depth FROM agent_entry WHERE id = $2::uuid AND org_id = $1
		UNION ALL
		SELECT e.id, e.parent_id, e.depth FROM agent_entry e JOIN up ON e.id = up.parent_id
	) SELECT id, depth FROM up`

// ErrNotBranchable: the execution's leaf cannot move now. It is an
// ErrConflict.
var ErrNotBranchable = fmt.Errorf("%w: the execution's leaf can move only while it waits for input or after it completed", ErrConflict)

// moveLeaf makes to the execution's leaf (its active path's end). A
// WAITING execution's workflow holds the leaf it waits at: the seam
// (branch_from → branch_to) makes the next signal it consumes there go
// under to (ConsumeSignal). Only a WAITING or COMPLETED execution moves:
// a running one's next append would race the move.
func moveLeaf(ctx context.Context, tx pgx.Tx, ex Execution, to string) error {
	if ex.Status != StatusWaiting && ex.Status != StatusCompleted {
		return fmt.Errorf("%w (it is %s)", ErrNotBranchable, ex.Status)
	}
	var waitingAt string
	var callsTools bool
	if ex.Status == StatusWaiting {
		err := tx.QueryRow(ctx, `SELECT coalesce(c.leaf_entry_id::text, ''),
				coalesce(e.entry_type = 'message' AND e.role = 'assistant' AND jsonb_path_exists(e.content::jsonb, '$.content[*] ? (@.type == "tool_call")'), false)
			FROM agent_checkpoint c LEFT JOIN agent_entry e ON e.id = c.leaf_entry_id
			WHERE c.agent_execution_id = $1 ORDER BY c.sequence DESC LIMIT 1`, ex.ID).Scan(&waitingAt, &callsTools)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if callsTools {
			return fmt.Errorf("%w: it waits for tool calls to be decided or answered", ErrNotBranchable)
		}
	}
	_, err := tx.Exec(ctx, `UPDATE agent_execution x SET leaf_entry_id = e.id, leaf_seq = e.seq,
			branch_from = CASE WHEN $3 = '' THEN NULL ELSE $3::uuid END,
			branch_to = CASE WHEN $3 = '' THEN NULL ELSE e.id END
		FROM agent_entry e WHERE x.id = $1 AND e.id = $2::uuid`, ex.ID, to, waitingAt)
	return err
}

// MoveLeaf moves the execution's leaf back (or anywhere) to the entry
// entryID of its tree, keeping the active variant: new messages go on
// from there, siblings of the old path's entries, which stay in the tree.
// It is the seam a workspace restore hangs on: whoever restores the
// entry's files calls it after, or beside, this.
func (s *Store) MoveLeaf(ctx context.Context, orgID, executionID, entryID string) (Execution, error) {
	const op = "move leaf"
	var out Execution
	err := s.variantTx(ctx, op, orgID, executionID, "", func(tx pgx.Tx, ex Execution, _ Variant) error {
		if _, err := treeEntry(ctx, tx, ex, entryID); err != nil {
			return fmt.Errorf("entrystore: %s: %w", op, err)
		}
		if err := moveLeaf(ctx, tx, ex, entryID); err != nil {
			return fmt.Errorf("entrystore: %s: %w", op, err)
		}
		var err error
		out, err = queryOne[Execution](ctx, tx, `SELECT `+executionCols+` FROM agent_execution WHERE id = $1`, ex.ID)
		return wrap(op, err)
	})
	return out, err
}

// ActivateVariant makes the variant name the execution's active one: the
// current one keeps its leaf, and the execution's leaf moves to name's.
func (s *Store) ActivateVariant(ctx context.Context, orgID, executionID, name string) (Variant, error) {
	const op = "activate variant"
	var out Variant
	err := s.variantTx(ctx, op, orgID, executionID, name, func(tx pgx.Tx, ex Execution, v Variant) error {
		var err error
		if !v.Active {
			err = activate(ctx, tx, ex, v, v.LeafEntryID)
		}
		if err == nil {
			out, err = variantByID(ctx, tx, ex.OrgID, v.ID)
		}
		return wrap(op, err)
	})
	return out, err
}

// activate switches the execution's active variant to v, the one active
// until now keeping its leaf, and moves the execution's leaf to leaf.
func activate(ctx context.Context, tx pgx.Tx, ex Execution, v Variant, leaf string) error {
	if leaf != "" && leaf != ex.LeafEntryID {
		if err := moveLeaf(ctx, tx, ex, leaf); err != nil {
			return err
		}
	}
	_, err := tx.Exec(ctx, `UPDATE agent_variant SET leaf_entry_id = $2::uuid, updated_at = now()
		WHERE id = (SELECT active_variant_id FROM agent_execution WHERE id = $1)`, ex.ID, nullIfEmpty(ex.LeafEntryID))
	if err == nil {
		_, err = tx.Exec(ctx, `UPDATE agent_execution SET active_variant_id = $2 WHERE id = $1`, ex.ID, v.ID)
	}
	return err
}

// PromoteVariant makes the variant name's leaf the default variant's and
// the default variant active, so the execution's main conversation goes
// on from where name got to.
func (s *Store) PromoteVariant(ctx context.Context, orgID, executionID, name string) (Variant, error) {
	const op = "promote variant"
	var out Variant
	err := s.variantTx(ctx, op, orgID, executionID, name, func(tx pgx.Tx, ex Execution, v Variant) error {
		vs, err := queryVariants(ctx, tx, `v.agent_execution_id = $1 AND v.name = $2`, ex.ID, DefaultVariant)
		if err != nil || len(vs) == 0 {
			return wrap(op, errors.Join(err, ErrNotFound))
		}
		main := vs[0]
		switch {
		case v.ID == main.ID:
		case main.Active:
			if v.LeafEntryID != ex.LeafEntryID {
				err = moveLeaf(ctx, tx, ex, v.LeafEntryID)
			}
		default:
			err = activate(ctx, tx, ex, main, v.LeafEntryID)
		}
		if err != nil {
			return wrap(op, err)
		}
		out, err = variantByID(ctx, tx, ex.OrgID, main.ID)
		return wrap(op, err)
	})
	return out, err
}
