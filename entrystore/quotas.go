package entrystore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// Quota is an organization's limits (migration 0017); a zero field is no
// limit.
type Quota struct {
	OrgID string `db:"org_id"`
	// MaxRunning bounds the executions that have not ended (PENDING,
	// RUNNING, WAITING, CANCELLING): a create past it is refused. A
	// WAITING execution holds its place until it ends.
	MaxRunning int `db:"max_running"`
	// TokensPerDay and CostPerDay (USD) bound the model calls of one UTC
	// day: once the day's spend reaches either, model calls are refused
	// and their executions pause.
	TokensPerDay int64     `db:"tokens_per_day"`
	CostPerDay   float64   `db:"cost_per_day"`
	UpdatedAt    time.Time `db:"updated_at"`
}

// The names of the limits, as the API spells them.
const (
	QuotaMaxRunning   = "maxRunning"
	QuotaTokensPerDay = "tokensPerDay"
	QuotaCostPerDay   = "costPerDay"
)

// ErrQuotaExceeded is what a *QuotaError is.
var ErrQuotaExceeded = errors.New("entrystore: quota exceeded")

// QuotaError says which quota or budget refused a request.
type QuotaError struct {
	// Scope is whose budget it is (BudgetOrganization, the default, or
	// another BudgetLine scope) and OwnerID its execution or definition.
	Scope, OwnerID string
	// Quota is QuotaMaxRunning, QuotaTokensPerDay or QuotaCostPerDay for
	// the organization, else the budget's field ("budget.maxTokens").
	Quota string
	// Limit and Used are the quota and what was used of it.
	Limit, Used float64
	// ResetAt is when a daily quota starts afresh (the next UTC midnight);
	// zero for QuotaMaxRunning, which frees as executions end.
	ResetAt time.Time
}

func (e *QuotaError) Error() string {
	if e.Scope != "" && e.Scope != BudgetOrganization {
		return budgetMessage(e)
	}
	switch e.Quota {
	case QuotaMaxRunning:
		return fmt.Sprintf("the organization's %s quota is reached: %s executions have not ended, of %s allowed; wait for one to end or cancel one",
			e.Quota, num(e.Used), num(e.Limit))
	case QuotaCostPerDay:
		return fmt.Sprintf("the organization's %s quota is spent: %s USD used today, of %s; it resets at %s",
			e.Quota, num(e.Used), num(e.Limit), e.ResetAt.Format(time.RFC3339))
	}
	return fmt.Sprintf("the organization's %s quota is spent: %s tokens used today, of %s; it resets at %s",
		e.Quota, num(e.Used), num(e.Limit), e.ResetAt.Format(time.RFC3339))
}

// Is makes a QuotaError an ErrQuotaExceeded.
func (e *QuotaError) Is(target error) bool { return target == ErrQuotaExceeded }

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

const quotaCols = `org_id::text AS org_id, max_running, tokens_per_day, cost_per_day, updated_at`

// SetQuota stores the organization's quota (all of it: a zero field
// removes that limit).
func (s *Store) SetQuota(ctx context.Context, q Quota) (Quota, error) {
	const op = "set quota"
	ids, err := writeIDs(op, q.OrgID)
	if err != nil {
		return Quota{}, err
	}
	if q.MaxRunning < 0 || q.TokensPerDay < 0 || q.CostPerDay < 0 {
		return Quota{}, errf(op, ErrInvalid, "limits must not be negative")
	}
	out, err := queryOne[Quota](ctx, s.pool, `
		INSERT INTO org_quota (org_id, max_running, tokens_per_day, cost_per_day) VALUES ($1, $2, $3, $4)
		ON CONFLICT (org_id) DO UPDATE SET max_running = EXCLUDED.max_running, tokens_per_day = EXCLUDED.tokens_per_day,
			cost_per_day = EXCLUDED.cost_per_day, updated_at = now()
		RETURNING `+quotaCols, ids[0], q.MaxRunning, q.TokensPerDay, q.CostPerDay)
	out.UpdatedAt = out.UpdatedAt.UTC()
	return out, wrap(op, err)
}

// GetQuota returns the organization's quota; ErrNotFound when it set none
// (no limits).
func (s *Store) GetQuota(ctx context.Context, orgID string) (Quota, error) {
	const op = "get quota"
	ids, err := readIDs(op, orgID)
	if err != nil {
		return Quota{}, err
	}
	out, err := queryOne[Quota](ctx, s.pool, `SELECT `+quotaCols+` FROM org_quota WHERE org_id = $1`, ids[0])
	out.UpdatedAt = out.UpdatedAt.UTC()
	return out, wrap(op, err)
}

// Spend is an organization's model calls of one UTC day.
type Spend struct {
	Tokens int64   `db:"tokens"`
	Cost   float64 `db:"cost"`
}

// SpendOn returns the organization's spend on the UTC day of t.
func (s *Store) SpendOn(ctx context.Context, orgID string, t time.Time) (Spend, error) {
	const op = "spend"
	ids, err := readIDs(op, orgID)
	if err != nil {
		return Spend{}, err
	}
	out, err := queryOne[Spend](ctx, s.pool, `SELECT coalesce(sum(tokens), 0)::bigint AS tokens, coalesce(sum(cost), 0)::float8 AS cost
		FROM org_usage_day WHERE org_id = $1 AND day = $2::date`, ids[0], utcDay(t))
	return out, wrap(op, err)
}

// CheckBudget reports, as a *QuotaError, whether the organization has
// spent a daily quota on the UTC day of now; nil when it has not or has
// none. It is one primary-key read (the model call path asks it before
// every call).
func (s *Store) CheckBudget(ctx context.Context, orgID string, now time.Time) error {
	const op = "check budget"
	ids, err := readIDs(op, orgID)
	if err != nil {
		return err
	}
	var q Quota
	var sp Spend
	err = s.pool.QueryRow(ctx, `SELECT q.tokens_per_day, q.cost_per_day, coalesce(d.tokens, 0), coalesce(d.cost, 0)
		FROM org_quota q LEFT JOIN org_usage_day d ON d.org_id = q.org_id AND d.day = $2::date
		WHERE q.org_id = $1`, ids[0], utcDay(now)).Scan(&q.TokensPerDay, &q.CostPerDay, &sp.Tokens, &sp.Cost)
	if errors.Is(err, errNoRows) {
		return nil
	}
	if err != nil {
		return wrap(op, err)
	}
	return q.spent(sp, now)
}

// spent is the daily quota sp reached, if any: the organization's
// BudgetLine, judged as every budget is.
func (q Quota) spent(sp Spend, now time.Time) error {
	return BudgetLine{Scope: BudgetOrganization, MaxTokens: q.TokensPerDay, MaxCost: q.CostPerDay,
		Tokens: sp.Tokens, Cost: sp.Cost, ResetAt: DayResets(now)}.Reached()
}

func utcDay(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// liveStatuses are the statuses QuotaMaxRunning counts.
const liveStatuses = `('PENDING','RUNNING','WAITING','CANCELLING')`

// CreateExecutionWithinQuota is CreateExecution refused with a *QuotaError
// when the organization already has its quota's MaxRunning executions not
// ended. Creates of an organization with that quota take a transaction
// lock of their own, so simultaneous creates cannot pass it together; a
// repeat of a create (its ID taken already) is not counted against it, and
// answers ErrConflict as CreateExecution does.
func (s *Store) CreateExecutionWithinQuota(ctx context.Context, e Execution) (Execution, error) {
	const op = "create execution"
	ids, err := writeIDs(op, e.OrgID)
	if err != nil {
		return Execution{}, err
	}
	// A malformed ID is createExecution's to refuse.
	id, _ := optID(e.ID)
	var out Execution
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var limit int
		err := tx.QueryRow(ctx, `SELECT max_running FROM org_quota WHERE org_id = $1`, ids[0]).Scan(&limit)
		if err != nil && !errors.Is(err, errNoRows) {
			return wrap(op, err)
		}
		if limit > 0 {
			// Keyed by organization, in a space of its own (the second key).
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1), 36)`, ids[0]); err != nil {
				return wrap(op, err)
			}
			var n int
			var repeat bool
			err := tx.QueryRow(ctx, `SELECT count(*),
				coalesce(bool_or(id = NULLIF($2, '')::uuid), false) FROM agent_execution WHERE org_id = $1 AND status IN `+liveStatuses,
				ids[0], id).Scan(&n, &repeat)
			if err != nil {
				return wrap(op, err)
			}
			if n >= limit && !repeat {
				return &QuotaError{Quota: QuotaMaxRunning, Limit: float64(limit), Used: float64(n)}
			}
		}
		out, err = createExecution(ctx, tx, e)
		return err
	})
	return out, err
}

// DayResets is when the UTC day of t ends: when daily quotas start afresh.
func DayResets(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), t.Day()+1, 0, 0, 0, 0, time.UTC)
}

// CountLive counts the organization's executions that have not ended: what
// QuotaMaxRunning bounds.
func (s *Store) CountLive(ctx context.Context, orgID string) (int, error) {
	const op = "count live executions"
	ids, err := readIDs(op, orgID)
	if err != nil {
		return 0, err
	}
	var n int
	err = s.pool.QueryRow(ctx, `SELECT count(*) FROM agent_execution WHERE org_id = $1 AND status IN `+liveStatuses, ids[0]).Scan(&n)
	return n, wrap(op, err)
}
