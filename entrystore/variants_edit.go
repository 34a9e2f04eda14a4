package entrystore

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/agentree/agentree/internal/domain"
)

// ContextOverlay is domain.ContextOverlay: what a variant changes in the
// model's context.
type ContextOverlay = domain.ContextOverlay

// EntryInjection is the type of an operator's injection entry.
const EntryInjection = "injection"

// ContextOverlay returns what the execution's variant name ("" for the
// active one) changes in the model's context: the entries it excludes,
// the live injections, its model override. An execution that never had a
// variant gets the empty overlay (and its injections) in one read each.
func (s *Store) ContextOverlay(ctx context.Context, orgID, executionID, name string) (ContextOverlay, error) {
	const op = "context overlay"
	ids, err := readIDs(op, orgID, executionID)
	if err != nil {
		return ContextOverlay{}, err
	}
	// One statement for the common case, an execution with no
	// injection: it is read on every model call (agent_entry_injection
	// answers the EXISTS from the index alone).
	var o ContextOverlay
	var injections bool
	err = s.pool.QueryRow(ctx, `SELECT `+overlayCols+`
		FROM agent_execution x LEFT JOIN agent_variant v ON v.agent_execution_id = x.id
			AND CASE WHEN $3 = '' THEN v.id = x.active_variant_id ELSE v.name = $3 END
		WHERE x.id = $2 AND x.org_id = $1`, ids[0], ids[1], name).Scan(&o.Excluded, (*[]byte)(&o.Model), &injections)
	if err != nil || !injections {
		return o, wrap(op, err)
	}
	o.Injections, err = s.injections(ctx, ids)
	return o, wrap(op, err)
}

// overlayCols are a variant's overlay, of the variant v of the execution
// x: the excluded entries, the model override and whether the execution
// has any injection entry.
const overlayCols = `coalesce(v.excluded_entry_ids::text[], '{}'), v.model_override,
			EXISTS (SELECT 1 FROM agent_entry e WHERE e.agent_execution_id = x.id AND e.entry_type = 'injection')`

// injections are the execution's live injection entries, oldest first.
func (s *Store) injections(ctx context.Context, ids []string) ([]Entry, error) {
	return queryEntries(ctx, s.pool, `SELECT `+entryCols+` FROM agent_entry
		WHERE agent_execution_id = $2 AND org_id = $1 AND entry_type = 'injection'
		  AND NOT EXISTS (SELECT 1 FROM agent_entry_retired r WHERE r.entry_id = agent_entry.id)
		ORDER BY seq`, ids[0], ids[1])
}

// wireMessage is the part of a stored message entry the checks here read.
type wireMessage struct {
	Role    string `json:"role"`
	Content []struct {
		Type     string `json:"type"`
		ToolCall *struct {
			ID string `json:"id"`
		} `json:"toolCall"`
	} `json:"content"`
	ToolCallID string `json:"toolCallId"`
}

func (m wireMessage) toolCalls() []string {
	var ids []string
	for _, b := range m.Content {
		if b.Type == "tool_call" && b.ToolCall != nil {
			ids = append(ids, b.ToolCall.ID)
		}
	}
	return ids
}

// variantPath is the path to leaf, root first (nil for "").
func variantPath(ctx context.Context, q querier, orgID, leaf string) ([]Entry, error) {
	if leaf == "" {
		return nil, nil
	}
	return queryEntries(ctx, q, `SELECT `+entryCols+` FROM agent_entry WHERE org_id = $1 AND id IN (SELECT id FROM (`+pathIDsSQL+`) p)
		ORDER BY depth`, orgID, leaf)
}

// lastCallDepth is the depth of the last model answer on path (-1: none):
// context before it is what that call saw.
func lastCallDepth(path []Entry) int {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i].Type == "message" && path[i].Role == "assistant" {
			return path[i].Depth
		}
	}
	return -1
}

// checkPairs refuses exclusions that would leave a tool call without its
// result, or a result without its call, in the context: providers reject
// either. path is root first.
func checkPairs(path []Entry, excluded map[string]bool) error {
	for i, e := range path {
		if e.Type != "message" || e.Role != "assistant" {
			continue
		}
		var m wireMessage
		if json.Unmarshal(e.Content, &m) != nil || len(m.toolCalls()) == 0 {
			continue
		}
		var results []string
		for _, r := range path[i+1:] {
			if r.Type != "message" || r.Role != "tool_result" {
				break
			}
			results = append(results, r.ID)
		}
		pair := append([]string{e.ID}, results...)
		in := 0
		for _, id := range pair {
			if excluded[id] {
				in++
			}
		}
		if in != 0 && in != len(pair) {
			return fmt.Errorf("%w: entry %s calls tools answered by %s: exclude the call and its results together (entries %s)",
				ErrInvalid, e.ID, strings.Join(results, ", "), strings.Join(pair, ", "))
		}
	}
	return nil
}

// Edit is what an edit of a variant's context did: the variant that holds
// it, and whether it is a new one forked because the edit changed what an
// earlier model call of the variant saw.
type Edit struct {
	Variant Variant
	Forked  bool
	// Entry is the injection entry written, for an injection edit.
	Entry Entry
}

// forkFor returns the variant an edit of v goes to: v itself when the edit
// changes the context only after v's last model call, else a new variant
// "<name>-edit-N" forked from v (and active if v was), so what v's calls
// saw is never rewritten.
func forkFor(ctx context.Context, tx pgx.Tx, ex Execution, v Variant, before bool) (Variant, bool, error) {
	if !before {
		return v, false, nil
	}
	var n int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM agent_variant WHERE agent_execution_id = $1 AND name LIKE $2`,
		ex.ID, strings.ReplaceAll(v.Name, "_", `\_`)+"-edit-%").Scan(&n); err != nil {
		return v, false, err
	}
	name := fmt.Sprintf("%s-edit-%d", v.Name, n+1)
	if len(name) > 63 {
		name = fmt.Sprintf("edit-%d", n+1)
	}
	id, err := insertVariant(ctx, tx, ex, name, v.LeafEntryID, v.ID)
	if err != nil {
		return v, false, err
	}
	fork, err := variantByID(ctx, tx, ex.OrgID, id)
	if err != nil {
		return v, false, err
	}
	if v.Active {
		if err := activate(ctx, tx, ex, fork, ""); err != nil {
			return v, false, err
		}
		fork.Active = true
	}
	return fork, true, nil
}

// SetExclusions sets the entries the variant name leaves out of the
// model's context. Every entry must be on the variant's path (else
// ErrNotFound), a tool call and its results go together (else
// ErrInvalid); an edit before the variant's last model call forks it.
func (s *Store) SetExclusions(ctx context.Context, orgID, executionID, name string, excluded []string) (Edit, error) {
	const op = "set exclusions"
	var out Edit
	err := s.variantTx(ctx, op, orgID, executionID, name, func(tx pgx.Tx, ex Execution, v Variant) error {
		path, err := variantPath(ctx, tx, ex.OrgID, v.LeafEntryID)
		if err != nil {
			return wrap(op, err)
		}
		depth := map[string]int{}
		for _, e := range path {
			depth[e.ID] = e.Depth
		}
		set := map[string]bool{}
		for _, id := range excluded {
			id, _ = parseID(id)
			if _, ok := depth[id]; !ok {
				return fmt.Errorf("entrystore: %s: entry %q is not on variant %q's path: %w", op, id, v.Name, ErrNotFound)
			}
			set[id] = true
		}
		if err := checkPairs(path, set); err != nil {
			return fmt.Errorf("entrystore: %s: %w", op, err)
		}
		// What changes is the symmetric difference; an entry excluded
		// before and now off the path changes nothing the model sees.
		last, before := lastCallDepth(path), false
		for id := range set {
			before = before || (!slices.Contains(v.ExcludedEntryIDs, id) && depth[id] < last)
		}
		for _, id := range v.ExcludedEntryIDs {
			d, on := depth[id]
			before = before || (on && !set[id] && d < last)
		}
		target, forked, err := forkFor(ctx, tx, ex, v, before)
		if err != nil {
			return wrap(op, err)
		}
		ids := make([]string, 0, len(set))
		for id := range set {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		if _, err := tx.Exec(ctx, `UPDATE agent_variant SET excluded_entry_ids = $2::uuid[], updated_at = now() WHERE id = $1`,
			target.ID, ids); err != nil {
			return wrap(op, err)
		}
		target, err = variantByID(ctx, tx, ex.OrgID, target.ID)
		out = Edit{Variant: target, Forked: forked}
		return wrap(op, err)
	})
	return out, err
}

// SetModelOverride sets (model non-nil: an agentsdk.ModelRef as JSON) or
// clears the model the variant name's calls use.
func (s *Store) SetModelOverride(ctx context.Context, orgID, executionID, name string, model json.RawMessage) (Variant, error) {
	const op = "set model override"
	var out Variant
	err := s.variantTx(ctx, op, orgID, executionID, name, func(tx pgx.Tx, ex Execution, v Variant) error {
		if _, err := tx.Exec(ctx, `UPDATE agent_variant SET model_override = $2, updated_at = now() WHERE id = $1`, v.ID, nullJSON(model)); err != nil {
			return wrap(op, err)
		}
		var err error
		out, err = variantByID(ctx, tx, ex.OrgID, v.ID)
		return wrap(op, err)
	})
	return out, err
}
