package entrystore

import (
	"context"
	"encoding/json"
	"time"
)

// CallGate is what a model call reads before it calls, in one round trip
// (a second only when the execution has injections): the active variant's
// overlay (ContextOverlay), every budget over the call (Budgets), and
// whether an entry of the execution already has the call's key (taken: a
// retry, whose answer GetEntryByKey reads). All are read on every model
// call, so they share a statement.
func (s *Store) CallGate(ctx context.Context, orgID, executionID, key string, now time.Time) (o ContextOverlay, lines []BudgetLine, taken bool, err error) {
	op := "model call gate of " + executionID
	ids, err := readIDs(op, orgID, executionID)
	if err != nil {
		return o, nil, false, err
	}
	var injections bool
	var raw []byte
	// The execution's row is joined, not required: with none, the
	// organization's quota still answers.
	err = s.pool.QueryRow(ctx, budgetLinesSQL+`SELECT `+overlayCols+`,
			(SELECT coalesce(json_agg(json_build_object('scope', scope, 'owner_id', owner_id, 'max_tokens', max_tokens,
				'max_cost', max_cost, 'tokens', tokens, 'cost', cost) ORDER BY ord), '[]') FROM lines WHERE `+budgetLineSet+`),
			EXISTS (SELECT 1 FROM agent_entry WHERE agent_execution_id = $2 AND idempotency_key = $4 AND org_id = $1)
		FROM (SELECT) one LEFT JOIN agent_execution x ON x.id = $2 AND x.org_id = $1
			LEFT JOIN agent_variant v ON v.agent_execution_id = x.id AND v.id = x.active_variant_id`, ids[0], ids[1], utcDay(now), key).
		Scan(&o.Excluded, (*[]byte)(&o.Model), &injections, &raw, &taken)
	if err != nil {
		return ContextOverlay{}, nil, false, wrap(op, err)
	}
	if err := json.Unmarshal(raw, &lines); err != nil {
		return ContextOverlay{}, nil, false, wrap(op, err)
	}
	if injections {
		if o.Injections, err = s.injections(ctx, ids); err != nil {
			return ContextOverlay{}, nil, false, wrap(op, err)
		}
	}
	return o, dated(lines, now), taken, nil
}
