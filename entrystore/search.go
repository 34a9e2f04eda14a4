package entrystore

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// Cross-run search, statistics and failure clusters (issue 41) read
// agent_execution_summary (migration 0028): one row per execution that
// triggers keep in the transaction of each model call, tool call and
// failure they sum. A search is then an index read on the execution list
// joined by primary key, never a scan of entries per request.
//
// Measured (EXPLAIN ANALYZE on this machine, 5,000 executions of two
// organizations, 15,000 entries and tool calls): a search by tool walks
// agent_execution_list newest first and probes each summary by its key
// (11 ms for a page of 51); adding an argument substring checks only those
// executions' calls of that tool through agent_tool_call_name (29 ms); a
// cost range, 0.2 ms. Failure clusters read the organization's failed
// executions and their summaries once (9 ms for 1,271 failures).

// Summary is what an execution's summary row holds.
type Summary struct {
	Turns          int64    `db:"turns"`
	ToolCalls      int64    `db:"tool_calls"`
	InputTokens    int64    `db:"input_tokens"`
	OutputTokens   int64    `db:"output_tokens"`
	Cost           float64  `db:"cost"`
	Models         []string `db:"models"`
	Tools          []string `db:"tools"`
	LastToolName   string   `db:"last_tool_name"`
	LastToolStatus string   `db:"last_tool_status"`
	ErrorClass     string   `db:"error_class"`
}

const summaryCols = `s.turns, s.tool_calls, s.input_tokens, s.output_tokens, s.cost, s.models, s.tools,
	s.last_tool_name, s.last_tool_status, s.error_class`

// SearchHit is one execution a search found, with its summary.
type SearchHit struct {
	Execution
	Summary
}

// SearchFilter narrows SearchExecutions; zero fields match everything.
type SearchFilter struct {
	// ToolName: executions that called this tool.
	ToolName string
	// ToolArguments: executions with a tool call (of ToolName, when set)
	// whose arguments' JSON text contains this, case-insensitively.
	ToolArguments string
	// Model: executions that called this model ("provider/modelId").
	Model        string
	Status       Status
	StopReason   string
	ErrorClass   string
	DefinitionID string
	// From and To bound the creation time: [From, To).
	From, To time.Time
	// MinCost and MaxCost bound the cost in USD, inclusive; nil: unbounded.
	MinCost, MaxCost *float64
}

// SearchExecutions lists the organization's executions that match f,
// newest first, with their summaries.
func (s *Store) SearchExecutions(ctx context.Context, orgID string, f SearchFilter, p Page) ([]SearchHit, string, error) {
	const op = "search executions"
	ids, k, after, err := listStart(op, p, true, orgID)
	if err != nil {
		return nil, "", err
	}
	var w where
	w.and("org_id = ?", ids[0])
	if err := w.status(op, "status", f.Status); err != nil {
		return nil, "", err
	}
	if err := w.definition(op, "agent_definition_id", f.DefinitionID); err != nil {
		return nil, "", err
	}
	if f.ToolName != "" {
		w.and("s.tools @> ARRAY[?::text]", f.ToolName)
	}
	if f.ToolArguments != "" {
		// The calls of the executions the other conditions leave, through
		// agent_tool_call_name (execution, tool): never a scan of them all.
		cond := "EXISTS (SELECT 1 FROM agent_tool_call WHERE agent_execution_id = agent_execution.id AND coalesce(input, " +
			askedInput + ")::text ILIKE ?"
		args := []any{"%" + likeEscape(f.ToolArguments) + "%"}
		if f.ToolName != "" {
			cond += " AND tool_name = ?"
			args = append(args, f.ToolName)
		}
		w.and(cond+")", args...)
	}
	if f.Model != "" {
		w.and("s.models @> ARRAY[?::text]", f.Model)
	}
	if f.StopReason != "" {
		w.and("stop_reason = ?", f.StopReason)
	}
	if f.ErrorClass != "" {
		w.and("s.error_class = ?", f.ErrorClass)
	}
	if !f.From.IsZero() {
		w.and("created_at >= ?", f.From)
	}
	if !f.To.IsZero() {
		w.and("created_at < ?", f.To)
	}
	if f.MinCost != nil {
		w.and("s.cost >= ?", *f.MinCost)
	}
	if f.MaxCost != nil {
		w.and("s.cost <= ?", *f.MaxCost)
	}
	if after {
		w.and("(created_at, id) < (?, ?::uuid)", k.T, k.ID)
	}
	hits, next, err := listPage(ctx, s.pool, p, pgx.RowToStructByName[SearchHit], func(h SearchHit) keyset { return keyset{T: h.CreatedAt, ID: h.ID} },
		`SELECT `+executionCols+`, `+summaryCols+` FROM agent_execution JOIN agent_execution_summary s ON s.execution_id = agent_execution.id
		WHERE `+w.String()+` ORDER BY created_at DESC, id DESC LIMIT `+w.param(p.limit()+1), w.args...)
	if err != nil {
		return nil, "", wrap(op, err)
	}
	for i := range hits {
		hits[i].Execution = utcExecution(hits[i].Execution)
	}
	return hits, next, nil
}

// likeEscape makes s match itself in a LIKE pattern.
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// Distribution is a quantity's spread over executions.
type Distribution struct {
	Count int64   `json:"count"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
	Max   float64 `json:"max"`
}

// DefinitionStats are a definition's executions in numbers.
type DefinitionStats struct {
	Executions int64
	// ByStatus counts the executions by status.
	ByStatus               map[string]int64
	Turns, ToolCalls, Cost Distribution
	// DurationMs spreads the ended executions' run time, from start to end.
	DurationMs Distribution
}

// StatsOfDefinition sums the definition's executions created in [from,
// to) (zero: unbounded). A definition of another organization, or none,
// is ErrNotFound.
func (s *Store) StatsOfDefinition(ctx context.Context, orgID, definitionID string, from, to time.Time) (DefinitionStats, error) {
	const op = "definition stats"
	ids, err := readIDs(op, orgID, definitionID)
	if err != nil {
		return DefinitionStats{}, err
	}
	if _, err := s.GetDefinition(ctx, orgID, definitionID); err != nil {
		return DefinitionStats{}, err
	}
	var w where
	w.and("x.org_id = ?", ids[0])
	w.and("x.agent_definition_id = ?", ids[1])
	if !from.IsZero() {
		w.and("x.created_at >= ?", from)
	}
	if !to.IsZero() {
		w.and("x.created_at < ?", to)
	}
	dist := func(expr, filter string) string {
		f := ""
		if filter != "" {
			f = " FILTER (WHERE " + filter + ")"
		}
		return `json_build_object('count', count(*)` + f + `,
			'p50', coalesce(percentile_cont(0.5) WITHIN GROUP (ORDER BY ` + expr + `)` + f + `, 0),
			'p90', coalesce(percentile_cont(0.9) WITHIN GROUP (ORDER BY ` + expr + `)` + f + `, 0),
			'p99', coalesce(percentile_cont(0.99) WITHIN GROUP (ORDER BY ` + expr + `)` + f + `, 0),
			'max', coalesce(max(` + expr + `)` + f + `, 0))`
	}
	const ended = "x.started_at IS NOT NULL AND x.completed_at IS NOT NULL"
	var out DefinitionStats
	var turns, tools, cost, dur, byStatus []byte
	err = s.pool.QueryRow(ctx, `SELECT count(*), `+dist("s.turns", "")+`, `+dist("s.tool_calls", "")+`, `+dist("s.cost", "")+`, `+
		dist("extract(epoch FROM x.completed_at - x.started_at) * 1000", ended)+`,
		coalesce((SELECT json_object_agg(status, n) FROM (SELECT status, count(*) AS n FROM agent_execution x WHERE `+w.String()+` GROUP BY status) b), '{}')
		FROM agent_execution x JOIN agent_execution_summary s ON s.execution_id = x.id WHERE `+w.String(), w.args...).
		Scan(&out.Executions, &turns, &tools, &cost, &dur, &byStatus)
	if err != nil {
		return DefinitionStats{}, wrap(op, err)
	}
	for _, d := range []struct {
		raw []byte
		to  any
	}{{turns, &out.Turns}, {tools, &out.ToolCalls}, {cost, &out.Cost}, {dur, &out.DurationMs}, {byStatus, &out.ByStatus}} {
		if err := json.Unmarshal(d.raw, d.to); err != nil {
			return DefinitionStats{}, wrap(op, err)
		}
	}
	return out, nil
}

// FailureCluster is failed executions that share an error class and the
// last decision before the failure: the last tool call's name and
// outcome ("" for none).
type FailureCluster struct {
	ErrorClass     string   `db:"error_class"`
	LastToolName   string   `db:"last_tool_name"`
	LastToolStatus string   `db:"last_tool_status"`
	Count          int64    `db:"n"`
	Examples       []string `db:"examples"`
}

// ClusterFilter narrows FailureClusters; zero fields match everything.
type ClusterFilter struct {
	DefinitionID string
	From, To     time.Time
	// Examples is how many execution IDs a cluster names, newest first;
	// 0 is 3.
	Examples int
}

// FailureClusters groups the organization's FAILED executions by error
// class and last decision, the largest clusters first.
func (s *Store) FailureClusters(ctx context.Context, orgID string, f ClusterFilter, p Page) ([]FailureCluster, string, error) {
	const op = "failure clusters"
	ids, k, after, err := listStart(op, p, false, orgID)
	if err != nil {
		return nil, "", err
	}
	var w where
	w.and("x.org_id = ?", ids[0])
	w.and("x.status = ?", string(StatusFailed))
	if err := w.definition(op, "x.agent_definition_id", f.DefinitionID); err != nil {
		return nil, "", err
	}
	if !f.From.IsZero() {
		w.and("x.created_at >= ?", f.From)
	}
	if !f.To.IsZero() {
		w.and("x.created_at < ?", f.To)
	}
	examples := f.Examples
	if examples <= 0 {
		examples = 3
	}
	query := `SELECT s.error_class, s.last_tool_name, s.last_tool_status, count(*) AS n,
			(array_agg(x.id::text ORDER BY x.created_at DESC, x.id DESC))[1:` + w.param(examples) + `] AS examples
		FROM agent_execution x JOIN agent_execution_summary s ON s.execution_id = x.id
		WHERE ` + w.String() + ` GROUP BY 1, 2, 3`
	// The clusters' order is (count desc, class, tool, outcome): the
	// cursor is the last cluster's place in it.
	outer := ""
	if after {
		var key []string
		if json.Unmarshal([]byte(k.ID), &key) != nil || len(key) != 3 {
			return nil, "", errf(op, ErrInvalid, "bad cursor")
		}
		outer = ` WHERE n < ` + w.param(k.N) + ` OR (n = ` + w.param(k.N) + ` AND (error_class, last_tool_name, last_tool_status) > (` +
			w.param(key[0]) + `, ` + w.param(key[1]) + `, ` + w.param(key[2]) + `))`
	}
	out, next, err := listPage(ctx, s.pool, p, pgx.RowToStructByName[FailureCluster], func(c FailureCluster) keyset {
		key, _ := json.Marshal([]string{c.ErrorClass, c.LastToolName, c.LastToolStatus})
		return keyset{N: c.Count, ID: string(key)}
	}, `SELECT * FROM (`+query+`) c`+outer+` ORDER BY n DESC, error_class, last_tool_name, last_tool_status LIMIT `+w.param(p.limit()+1), w.args...)
	return out, next, wrap(op, err)
}
