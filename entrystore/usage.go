package entrystore

import (
	"context"
	"time"
)

// UsageLine is the usage of one group of model calls: by model
// ("provider/modelId"), agent kind or definition ID.
type UsageLine struct {
	Key        string  `db:"key"`
	Calls      int64   `db:"calls"`
	Input      int64   `db:"input"`
	Output     int64   `db:"output"`
	CacheRead  int64   `db:"cache_read"`
	CacheWrite int64   `db:"cache_write"`
	Cost       float64 `db:"cost"`
}

// Usage groupings.
const (
	UsageByModel      = "model"
	UsageByKind       = "kind"
	UsageByDefinition = "definition"
)

// usageSums are the sums of an llm_call entry e's metadata.
const usageSums = `count(*) AS calls,
	coalesce(sum((e.metadata->'usage'->>'input')::bigint), 0) AS input,
	coalesce(sum((e.metadata->'usage'->>'output')::bigint), 0) AS output,
	coalesce(sum((e.metadata->'usage'->>'cacheRead')::bigint), 0) AS cache_read,
	coalesce(sum((e.metadata->'usage'->>'cacheWrite')::bigint), 0) AS cache_write,
	coalesce(sum((e.metadata->>'cost')::float8), 0) AS cost`

const usageModelKey = `coalesce(e.metadata->'model'->>'provider', '') || '/' || coalesce(e.metadata->'model'->>'modelId', '')`

// ExecutionUsage sums the execution's model calls (its llm_call entries)
// by model.
func (s *Store) ExecutionUsage(ctx context.Context, orgID, executionID string) ([]UsageLine, error) {
	op := "usage of " + executionID
	ids, err := readIDs(op, orgID, executionID)
	if err != nil {
		return nil, err
	}
	lines, err := queryAll[UsageLine](ctx, s.pool, `SELECT `+usageModelKey+` AS key, `+usageSums+`
		FROM agent_entry e WHERE e.org_id = $1 AND e.agent_execution_id = $2 AND e.entry_type = 'llm_call'
		GROUP BY 1 ORDER BY 1`, ids[0], ids[1])
	return lines, wrap(op, err)
}

// OrgUsage sums the organization's model calls made in [from, to), grouped
// by groupBy (UsageByModel, UsageByKind or UsageByDefinition; "" for
// definition means none).
func (s *Store) OrgUsage(ctx context.Context, orgID string, from, to time.Time, groupBy string) ([]UsageLine, error) {
	const op = "org usage"
	ids, err := readIDs(op, orgID)
	if err != nil {
		return nil, err
	}
	key := usageModelKey
	switch groupBy {
	case UsageByModel:
	case UsageByKind:
		key = "x.kind"
	case UsageByDefinition:
		key = "coalesce(x.agent_definition_id::text, '')"
	default:
		return nil, errf(op, ErrInvalid, "groupBy must be model, kind or definition; got %q", groupBy)
	}
	lines, err := queryAll[UsageLine](ctx, s.pool, `SELECT `+key+` AS key, `+usageSums+`
		FROM agent_entry e JOIN agent_execution x ON x.id = e.agent_execution_id
		WHERE e.org_id = $1 AND e.entry_type = 'llm_call' AND e.created_at >= $2 AND e.created_at < $3
		GROUP BY 1 ORDER BY 1`, ids[0], from, to)
	return lines, wrap(op, err)
}
