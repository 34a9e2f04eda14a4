package entrystore

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
)

// insertInjectionSQL appends an injection under $3 as a branch of its own
// (so the conversation's own continuation under $3 keeps its slot) and,
// unlike every other append, leaves the execution's leaf where it is: an
// injection is beside the path, joined to the context by the overlay.
var insertInjectionSQL = `INSERT INTO agent_entry (id, org_id, agent_execution_id, parent_id, depth, branch_id, step, entry_type,
		role, content, idempotency_key, metadata)
	SELECT n.id, $1, $2, p.id, p.depth + 1, n.id, p.step, 'injection', 'user', $4, 'injection/' || n.id::text, $5
	FROM agent_entry p, (SELECT gen_random_uuid() AS id) n WHERE p.id = $3::uuid AND p.org_id = $1
	RETURNING ` + entryColsOf("agent_entry")

// injectionContent is an injection's entry content: the user message the
// model sees, marked as the operator's.
func injectionContent(text string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"role": "user", "content": []map[string]string{{"type": "text", "text": text}}})
	return b
}

// onActivePath reports whether the entry at (id, depth) lies before the
// last model call of the active variant v's path: what that call saw.
func beforeLastCall(ctx context.Context, tx pgx.Tx, ex Execution, v Variant, parentID string) (bool, error) {
	path, err := variantPath(ctx, tx, ex.OrgID, v.LeafEntryID)
	if err != nil {
		return false, err
	}
	i := slices.IndexFunc(path, func(e Entry) bool { return e.ID == parentID })
	return i >= 0 && path[i].Depth < lastCallDepth(path), nil
}

// activeVariant is the execution's active variant (saved: run inside
// variantTx).
func activeVariant(ctx context.Context, tx pgx.Tx, ex Execution) (Variant, error) {
	vs, err := queryVariants(ctx, tx, `v.agent_execution_id = $1 AND v.id = x.active_variant_id`, ex.ID)
	if err == nil && len(vs) == 0 {
		err = ErrNotFound
	}
	if err != nil {
		return Variant{}, err
	}
	return vs[0], nil
}

// exclude adds ids to variant id's exclusions.
func exclude(ctx context.Context, tx pgx.Tx, variantID string, ids ...string) error {
	_, err := tx.Exec(ctx, `UPDATE agent_variant SET excluded_entry_ids = ARRAY(SELECT DISTINCT unnest(excluded_entry_ids || $2::uuid[])),
		updated_at = now() WHERE id = $1`, variantID, ids)
	return err
}

// AddInjection writes an operator's injection under the entry parentID of
// the execution's tree: it joins the context of every variant whose path
// passes there, from there on. Under an answer that calls tools it would
// split the call from its results: ErrInvalid. Placed before the active
// variant's last model call, it forks that variant (the original leaves
// the injection out, so what its calls saw stays true).
func (s *Store) AddInjection(ctx context.Context, orgID, executionID, parentID, text string) (Edit, error) {
	const op = "add injection"
	var out Edit
	err := s.variantTx(ctx, op, orgID, executionID, "", func(tx pgx.Tx, ex Execution, _ Variant) error {
		parent, err := treeEntry(ctx, tx, ex, parentID)
		if err != nil {
			return fmt.Errorf("entrystore: %s: %w", op, err)
		}
		var m wireMessage
		if parent.Type == "message" && json.Unmarshal(parent.Content, &m) == nil && len(m.toolCalls()) > 0 {
			return errf(op, ErrInvalid, "entry %s calls tools: place the injection at its last tool result", parent.ID)
		}
		out, err = s.inject(ctx, tx, ex, parent.ID, text, nil, "")
		return wrap(op, err)
	})
	return out, err
}

// inject appends the injection and forks the active variant when it
// lands before its last model call; replaced is an injection the new one
// replaces in the variant that gets it.
func (s *Store) inject(ctx context.Context, tx pgx.Tx, ex Execution, parentID, text string, meta json.RawMessage, replaced string) (Edit, error) {
	v, err := activeVariant(ctx, tx, ex)
	if err != nil {
		return Edit{}, err
	}
	before, err := beforeLastCall(ctx, tx, ex, v, parentID)
	if err != nil {
		return Edit{}, err
	}
	target, forked, err := forkFor(ctx, tx, ex, v, before)
	if err != nil {
		return Edit{}, err
	}
	e, err := queryEntry(ctx, tx, insertInjectionSQL, ex.OrgID, ex.ID, parentID, injectionContent(text), nullJSON(meta))
	if err != nil {
		return Edit{}, err
	}
	switch {
	case forked:
		// The original goes on seeing what it saw; the fork sees the edit.
		err = exclude(ctx, tx, v.ID, e.ID)
		if err == nil && replaced != "" {
			err = exclude(ctx, tx, target.ID, replaced)
		}
	case replaced != "":
		_, err = tx.Exec(ctx, `INSERT INTO agent_entry_retired (entry_id, org_id, agent_execution_id, replaced_by) VALUES ($1, $2, $3, $4)`,
			replaced, ex.OrgID, ex.ID, e.ID)
	}
	if err != nil {
		return Edit{}, err
	}
	target, err = variantByID(ctx, tx, ex.OrgID, target.ID)
	return Edit{Variant: target, Forked: forked, Entry: e}, err
}

// liveInjection is the execution's injection id, unless retired.
func liveInjection(ctx context.Context, tx pgx.Tx, ex Execution, id string) (Entry, error) {
	if _, ok := parseID(id); !ok {
		return Entry{}, fmt.Errorf("injection %q: %w", id, ErrNotFound)
	}
	e, err := queryEntry(ctx, tx, `SELECT `+entryCols+` FROM agent_entry WHERE id = $2 AND org_id = $1 AND agent_execution_id = $3
		AND entry_type = 'injection' AND NOT EXISTS (SELECT 1 FROM agent_entry_retired r WHERE r.entry_id = agent_entry.id)`, ex.OrgID, id, ex.ID)
	if err != nil {
		return Entry{}, fmt.Errorf("injection %q: %w", id, wrap("read injection", err))
	}
	return e, nil
}

// EditInjection replaces the injection entryID's text: a new injection at
// the same place, whose metadata names the one it replaces (retired, for
// the audit). Before the active variant's last model call it forks the
// variant instead, as AddInjection does.
func (s *Store) EditInjection(ctx context.Context, orgID, executionID, entryID, text string) (Edit, error) {
	const op = "edit injection"
	var out Edit
	err := s.variantTx(ctx, op, orgID, executionID, "", func(tx pgx.Tx, ex Execution, _ Variant) error {
		old, err := liveInjection(ctx, tx, ex, entryID)
		if err != nil {
			return fmt.Errorf("entrystore: %s: %w", op, err)
		}
		meta, _ := json.Marshal(map[string]string{"replaces": old.ID})
		out, err = s.inject(ctx, tx, ex, old.ParentID, text, meta, old.ID)
		return wrap(op, err)
	})
	return out, err
}

// DeleteInjection retires the injection entryID (it stays in the tree,
// for the audit, and leaves every context), or, before the active
// variant's last model call, forks the variant without it.
func (s *Store) DeleteInjection(ctx context.Context, orgID, executionID, entryID string) (Edit, error) {
	const op = "delete injection"
	var out Edit
	err := s.variantTx(ctx, op, orgID, executionID, "", func(tx pgx.Tx, ex Execution, _ Variant) error {
		old, err := liveInjection(ctx, tx, ex, entryID)
		if err != nil {
			return fmt.Errorf("entrystore: %s: %w", op, err)
		}
		v, err := activeVariant(ctx, tx, ex)
		if err != nil {
			return wrap(op, err)
		}
		before, err := beforeLastCall(ctx, tx, ex, v, old.ParentID)
		if err != nil {
			return wrap(op, err)
		}
		target, forked, err := forkFor(ctx, tx, ex, v, before)
		if err != nil {
			return wrap(op, err)
		}
		if forked {
			err = exclude(ctx, tx, target.ID, old.ID)
		} else {
			_, err = tx.Exec(ctx, `INSERT INTO agent_entry_retired (entry_id, org_id, agent_execution_id) VALUES ($1, $2, $3)`, old.ID, ex.OrgID, ex.ID)
		}
		if err != nil {
			return wrap(op, err)
		}
		target, err = variantByID(ctx, tx, ex.OrgID, target.ID)
		out = Edit{Variant: target, Forked: forked, Entry: old}
		return wrap(op, err)
	})
	return out, err
}
