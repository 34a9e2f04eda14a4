package entrystore

import (
	"context"
	"fmt"
	"time"
)

// The scopes of a budget over an execution's model calls (BudgetLine).
const (
	// BudgetOrganization is the organization's daily quota (Quota).
	BudgetOrganization = "organization"
	// BudgetExecution is the execution's config.budget, over its own
	// calls and its descendants'.
	BudgetExecution = "execution"
	// BudgetParent is an ancestor's config.budget: a parent's cap bounds
	// its children, whose calls count toward it.
	BudgetParent = "parent"
	// BudgetDefinition is the execution's definition's total over all
	// its executions.
	BudgetDefinition = "definition"
)

// BudgetLine is one budget over an execution's model calls: its caps and
// what was spent of them. A zero cap is no limit.
// Its json names are its columns': CallGate reads lines as JSON.
type BudgetLine struct {
	Scope string `db:"scope" json:"scope"`
	// OwnerID is the execution, definition or organization it belongs to.
	OwnerID   string  `db:"owner_id" json:"owner_id"`
	MaxTokens int64   `db:"max_tokens" json:"max_tokens"`
	MaxCost   float64 `db:"max_cost" json:"max_cost"`
	Tokens    int64   `db:"tokens" json:"tokens"`
	Cost      float64 `db:"cost" json:"cost"`
	// ResetAt is when a daily quota starts afresh; zero for the others.
	ResetAt time.Time `db:"-" json:"-"`
}

// Share is the largest share of a cap the line spent (0 with no cap).
func (l BudgetLine) Share() float64 {
	var s float64
	if l.MaxTokens > 0 {
		s = float64(l.Tokens) / float64(l.MaxTokens)
	}
	if l.MaxCost > 0 {
		s = max(s, l.Cost/l.MaxCost)
	}
	return s
}

// Reached is the *QuotaError of a cap the line's spend reached; nil when
// none is.
func (l BudgetLine) Reached() error {
	tokens, cost := budgetNames(l.Scope)
	switch {
	case l.MaxTokens > 0 && l.Tokens >= l.MaxTokens:
		return &QuotaError{Scope: l.Scope, OwnerID: l.OwnerID, Quota: tokens, Limit: float64(l.MaxTokens), Used: float64(l.Tokens), ResetAt: l.ResetAt}
	case l.MaxCost > 0 && l.Cost >= l.MaxCost:
		return &QuotaError{Scope: l.Scope, OwnerID: l.OwnerID, Quota: cost, Limit: l.MaxCost, Used: l.Cost, ResetAt: l.ResetAt}
	}
	return nil
}

// Judge is what lines allow: the first reached cap's *QuotaError, else
// the largest share of a cap spent (what a budget's downgradeAt is
// compared with).
func Judge(lines []BudgetLine) (share float64, err error) {
	for _, l := range lines {
		if err := l.Reached(); err != nil {
			return l.Share(), err
		}
		share = max(share, l.Share())
	}
	return share, nil
}

// budgetNames are the names of a scope's token and cost caps, as the API
// spells them.
func budgetNames(scope string) (tokens, cost string) {
	switch scope {
	case BudgetOrganization, "":
		return QuotaTokensPerDay, QuotaCostPerDay
	case BudgetDefinition:
		return "budget.totalMaxTokens", "budget.totalMaxCostUsd"
	}
	return "budget.maxTokens", "budget.maxCostUsd"
}

// budgetMessage is a reached budget's message for the scopes that are not
// the organization's (QuotaError.Error).
func budgetMessage(e *QuotaError) string {
	used := num(e.Used) + " tokens"
	if _, cost := budgetNames(e.Scope); e.Quota == cost {
		used = num(e.Used) + " USD"
	}
	switch e.Scope {
	case BudgetParent:
		return fmt.Sprintf("the parent execution %s's %s is spent: %s used, of %s; its children count toward it",
			e.OwnerID, e.Quota, used, num(e.Limit))
	case BudgetDefinition:
		return fmt.Sprintf("the definition's %s is spent: %s used by its executions, of %s; raise it on the definition",
			e.Quota, used, num(e.Limit))
	}
	return fmt.Sprintf("the execution's %s is spent: %s used, of %s; resume it with a higher budget",
		e.Quota, used, num(e.Limit))
}

// Budgets returns every budget over the execution's next model call, in
// one round trip: its own config.budget, its ancestors' (nearest first),
// its definition's total and the organization's daily quota, each with
// what was spent of it (migration 0024 keeps the sums). Budgets nobody set
// are left out; an execution with none at all answers no lines.
func (s *Store) Budgets(ctx context.Context, orgID, executionID string, now time.Time) ([]BudgetLine, error) {
	op := "budgets of " + executionID
	ids, err := readIDs(op, orgID, executionID)
	if err != nil {
		return nil, err
	}
	lines, err := queryAll[BudgetLine](ctx, s.pool, budgetLinesSQL+`
		SELECT scope, owner_id, max_tokens, max_cost, tokens, cost FROM lines WHERE `+budgetLineSet+` ORDER BY ord`,
		ids[0], ids[1], utcDay(now))
	if err != nil {
		return nil, wrap(op, err)
	}
	return dated(lines, now), nil
}

// dated sets the organization's line's ResetAt.
func dated(lines []BudgetLine, now time.Time) []BudgetLine {
	for i := range lines {
		if lines[i].Scope == BudgetOrganization {
			lines[i].ResetAt = DayResets(now)
		}
	}
	return lines
}

// budgetLinesSQL is the WITH clause of a read of the budgets over an
// execution's next model call ($1 its organization, $2 its ID, $3 the UTC
// day): its `lines`, each with its caps and what was spent, ordered by
// ord. Only the lines budgetLineSet keeps are budgets someone set.
const budgetLinesSQL = `WITH RECURSIVE chain AS (
			SELECT id, parent_id, agent_definition_id, config, 0 AS depth FROM agent_execution WHERE org_id = $1 AND id = $2
			UNION ALL
			SELECT x.id, x.parent_id, x.agent_definition_id, x.config, c.depth + 1
			FROM agent_execution x JOIN chain c ON x.id = c.parent_id WHERE x.org_id = $1 AND c.depth < 64
		), lines AS (
			SELECT CASE WHEN c.depth = 0 THEN 'execution' ELSE 'parent' END AS scope, c.id::text AS owner_id,
				coalesce((c.config->'budget'->>'maxTokens')::bigint, 0) AS max_tokens,
				coalesce((c.config->'budget'->>'maxCostUsd')::float8, 0) AS max_cost,
				coalesce(s.tokens, 0) AS tokens, coalesce(s.cost, 0) AS cost, c.depth AS ord
			FROM chain c LEFT JOIN execution_spend s ON s.agent_execution_id = c.id
			UNION ALL
			SELECT 'definition', d.id::text,
				coalesce((d.config->'budget'->>'totalMaxTokens')::bigint, 0),
				coalesce((d.config->'budget'->>'totalMaxCostUsd')::float8, 0),
				coalesce(s.tokens, 0), coalesce(s.cost, 0), 1000
			FROM chain c JOIN agent_definition d ON d.id = c.agent_definition_id
			LEFT JOIN definition_spend s ON s.agent_definition_id = d.id WHERE c.depth = 0
			UNION ALL
			SELECT 'organization', q.org_id::text, q.tokens_per_day, q.cost_per_day, coalesce(u.tokens, 0), coalesce(u.cost, 0), 1001
			FROM org_quota q LEFT JOIN org_usage_day u ON u.org_id = q.org_id AND u.day = $3::date WHERE q.org_id = $1
		)
`

// budgetLineSet keeps, of budgetLinesSQL's lines, the budgets someone
// set, and the execution's own line (what it spent) always.
const budgetLineSet = `(max_tokens > 0 OR max_cost > 0 OR scope = 'execution')`

// ExecutionSpend is what the execution's model calls, its descendants'
// included, have spent (a resume's, the paused execution's too).
func (s *Store) ExecutionSpend(ctx context.Context, orgID, executionID string) (Spend, error) {
	op := "spend of " + executionID
	ids, err := readIDs(op, orgID, executionID)
	if err != nil {
		return Spend{}, err
	}
	out, err := queryOne[Spend](ctx, s.pool, `SELECT coalesce(sum(tokens), 0)::bigint AS tokens, coalesce(sum(cost), 0)::float8 AS cost
		FROM execution_spend WHERE org_id = $1 AND agent_execution_id = $2`, ids[0], ids[1])
	return out, wrap(op, err)
}
