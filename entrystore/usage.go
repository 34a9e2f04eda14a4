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
	// Unpriced: some of the calls' models had no price (agentsdk.Usage).
	Unpriced bool `db:"unpriced"`
}

// Usage groupings.
const (
	UsageByModel      = "model"
	UsageByKind       = "kind"
	UsageByDefinition = "definition"
)

// modelCalls are the entries that record a model call, each with its
// record c.m and its usage c.u: an llm_call entry's metadata, or the
// record folded into the assistant entry the call wrote (step.CallOf),
// whose usage and model are the message's own unless it names them. The
// OR of entry types is the agent_entry_model_call index's predicate. The
// SQL function model_call_usage (migration 0017) is the one reading of a
// call's record: the trigger that keeps each organization's daily spend
// for its quotas reads calls through it too.
// An explanation's call (migration 0027) is recorded on its row, not as
// an entry (which would move the leaf), and read here as an llm_call
// entry: Postgres pushes the queries' conditions into both branches, so
// the entries are still read through the index.
const modelCalls = `(SELECT org_id, agent_execution_id, created_at, entry_type, role, content, metadata FROM agent_entry
	UNION ALL SELECT org_id, agent_execution_id, completed_at, 'llm_call', NULL, '{}'::json, llm_call
	FROM agent_explanation WHERE llm_call IS NOT NULL) e CROSS JOIN LATERAL model_call_usage(e.entry_type, e.content, e.metadata) c`

const isModelCall = `(e.entry_type = 'llm_call' OR (e.entry_type = 'message' AND e.role = 'assistant')) AND c.m IS NOT NULL`

// usageSums are the sums of modelCalls' usage.
const usageSums = `count(*) AS calls,
	coalesce(sum((c.u->>'input')::bigint), 0) AS input,
	coalesce(sum((c.u->>'output')::bigint), 0) AS output,
	coalesce(sum((c.u->>'cacheRead')::bigint), 0) AS cache_read,
	coalesce(sum((c.u->>'cacheWrite')::bigint), 0) AS cache_write,
	coalesce(sum(coalesce((c.m->>'cost')::float8, (c.u->>'cost')::float8)), 0) AS cost,
	coalesce(bool_or((c.u->>'unpriced')::boolean), false) AS unpriced`

const usageModelKey = `coalesce(c.m->'model'->>'provider', e.content->>'provider', '') || '/' || coalesce(c.m->'model'->>'modelId', e.content->>'model', '')`

// ExecutionUsage sums the execution's model calls (modelCalls)
// by model.
func (s *Store) ExecutionUsage(ctx context.Context, orgID, executionID string) ([]UsageLine, error) {
	op := "usage of " + executionID
	ids, err := readIDs(op, orgID, executionID)
	if err != nil {
		return nil, err
	}
	lines, err := queryAll[UsageLine](ctx, s.pool, `SELECT `+usageModelKey+` AS key, `+usageSums+`
		FROM `+modelCalls+` WHERE e.org_id = $1 AND e.agent_execution_id = $2 AND `+isModelCall+`
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
		FROM `+modelCalls+` JOIN agent_execution x ON x.id = e.agent_execution_id
		WHERE e.org_id = $1 AND `+isModelCall+` AND e.created_at >= $2 AND e.created_at < $3
		GROUP BY 1 ORDER BY 1`, ids[0], from, to)
	return lines, wrap(op, err)
}
