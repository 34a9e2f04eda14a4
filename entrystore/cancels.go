package entrystore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// ExecutionKey names one execution of one organization.
type ExecutionKey struct {
	OrgID, ID string
}

// Cancelling returns those of the executions keys names that a client has
// asked to cancel (status CANCELLING): one primary-key probe each, in one
// statement, so a worker can watch all the calls it runs at once.
func (s *Store) Cancelling(ctx context.Context, keys []ExecutionKey) ([]ExecutionKey, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	orgs, ids := make([]string, len(keys)), make([]string, len(keys))
	for i, k := range keys {
		orgs[i], ids[i] = k.OrgID, k.ID
	}
	rows, err := s.pool.Query(ctx, `
		SELECT x.org_id::text, x.id::text FROM unnest($1::uuid[], $2::uuid[]) AS k(org_id, id)
		JOIN agent_execution x ON x.id = k.id AND x.org_id = k.org_id
		WHERE x.status = 'CANCELLING'`, orgs, ids)
	if err != nil {
		return nil, fmt.Errorf("entrystore: cancelling executions: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ExecutionKey, error) {
		var k ExecutionKey
		return k, r.Scan(&k.OrgID, &k.ID)
	})
	if err != nil {
		return nil, fmt.Errorf("entrystore: cancelling executions: %w", err)
	}
	return out, nil
}
