package entrystore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// RetentionPolicy is how long an organization keeps its ended executions:
// KeepDays after a COMPLETED, CANCELLED or PAUSED one ends, KeepFailedDays
// after a FAILED one. Live executions are kept whatever their age.
type RetentionPolicy struct {
	OrgID          string    `db:"org_id"`
	KeepDays       int       `db:"keep_days"`
	KeepFailedDays int       `db:"keep_failed_days"`
	UpdatedAt      time.Time `db:"updated_at"`
}

// DefaultRetention is the policy of an organization that set none.
var DefaultRetention = RetentionPolicy{KeepDays: 30, KeepFailedDays: 90}

// MaxRetentionDays bounds a policy's days (about 100 years).
const MaxRetentionDays = 36500

// SetRetention stores the organization's policy.
func (s *Store) SetRetention(ctx context.Context, p RetentionPolicy) (RetentionPolicy, error) {
	const op = "set retention"
	ids, err := writeIDs(op, p.OrgID)
	if err != nil {
		return RetentionPolicy{}, err
	}
	if p.KeepDays < 0 || p.KeepFailedDays < 0 || p.KeepDays > MaxRetentionDays || p.KeepFailedDays > MaxRetentionDays {
		return RetentionPolicy{}, errf(op, ErrInvalid, "days must be from 0 to %d", MaxRetentionDays)
	}
	out, err := queryOne[RetentionPolicy](ctx, s.pool, `
		INSERT INTO retention_policy (org_id, keep_days, keep_failed_days) VALUES ($1, $2, $3)
		ON CONFLICT (org_id) DO UPDATE SET keep_days = EXCLUDED.keep_days,
			keep_failed_days = EXCLUDED.keep_failed_days, updated_at = now()
		RETURNING org_id::text AS org_id, keep_days, keep_failed_days, updated_at`, ids[0], p.KeepDays, p.KeepFailedDays)
	out.UpdatedAt = out.UpdatedAt.UTC()
	return out, wrap(op, err)
}

// GetRetention returns the organization's policy; ErrNotFound when it set
// none (DefaultRetention, or the pruner's own defaults, apply).
func (s *Store) GetRetention(ctx context.Context, orgID string) (RetentionPolicy, error) {
	const op = "get retention"
	ids, err := readIDs(op, orgID)
	if err != nil {
		return RetentionPolicy{}, err
	}
	out, err := queryOne[RetentionPolicy](ctx, s.pool, `SELECT org_id::text AS org_id, keep_days, keep_failed_days, updated_at
		FROM retention_policy WHERE org_id = $1`, ids[0])
	out.UpdatedAt = out.UpdatedAt.UTC()
	return out, wrap(op, err)
}

// PruneOptions say what Prune removes.
type PruneOptions struct {
	// OrgID limits it to one organization; "" is every one.
	OrgID string
	// OlderThan, when set, prunes every ended execution that ended before
	// now - OlderThan, whatever the policies say.
	OlderThan time.Duration
	// Defaults is the policy of organizations without one; zero is
	// DefaultRetention.
	Defaults RetentionPolicy
	// DryRun counts what would go and changes nothing.
	DryRun bool
	// Batch is how many executions one transaction removes; default 500.
	Batch int
	// ContentGrace is how long content must have gone unput before it is
	// removed; default 1 hour (see PutContent).
	ContentGrace time.Duration
}

// PruneStats is what Prune removed (or, in a dry run, would remove).
type PruneStats struct {
	Executions   int64 `json:"executions"`
	Entries      int64 `json:"entries"`
	Checkpoints  int64 `json:"checkpoints"`
	ToolCalls    int64 `json:"toolCalls"`
	Signals      int64 `json:"signals"`
	StreamEvents int64 `json:"streamEvents"`
	Contents     int64 `json:"contents"`
	// Bytes is the size of what the rows held: entry contents and
	// metadata, checkpoint states, tool inputs and outputs, signal values,
	// stream event data and content bytes.
	Bytes int64 `json:"bytes"`
	// ExecutionIDs are the executions removed: their Temporal histories
	// go too (the caller deletes them; see adapter.DeleteHistories).
	ExecutionIDs []string `json:"-"`
}

func (p *PruneStats) add(q PruneStats) {
	p.Executions += q.Executions
	p.Entries += q.Entries
	p.Checkpoints += q.Checkpoints
	p.ToolCalls += q.ToolCalls
	p.Signals += q.Signals
	p.StreamEvents += q.StreamEvents
	p.Contents += q.Contents
	p.Bytes += q.Bytes
	p.ExecutionIDs = append(p.ExecutionIDs, q.ExecutionIDs...)
}

// prunableSQL selects up to $5 ended executions due for removal: ended
// before their organization's retention (or $4 seconds ago, when $4 > 0),
// of organization $1 (or any), and not resumed or forked by an execution
// that stays (a resume or a fork shares their entries). FOR UPDATE SKIP LOCKED: two pruners
// never take the same rows, and a row being written is left for the next
// pass.
const prunableSQL = `
	SELECT x.id FROM agent_execution x
	LEFT JOIN retention_policy r ON r.org_id = x.org_id
	WHERE x.status IN ('COMPLETED', 'FAILED', 'CANCELLED', 'PAUSED') AND x.completed_at IS NOT NULL
	  AND ($1::uuid IS NULL OR x.org_id = $1::uuid)
	  AND x.completed_at < now() - CASE
		WHEN $4::bigint > 0 THEN make_interval(secs => $4::bigint)
		WHEN x.status = 'FAILED' THEN make_interval(days => coalesce(r.keep_failed_days, $3::int))
		ELSE make_interval(days => coalesce(r.keep_days, $2::int)) END
	  AND NOT EXISTS (SELECT 1 FROM agent_execution y WHERE y.resumed_from = x.id)
	  AND NOT EXISTS (SELECT 1 FROM agent_execution y WHERE y.forked_from = x.id)
	ORDER BY x.completed_at, x.id
	LIMIT $5
	FOR UPDATE OF x SKIP LOCKED`

// pruneSQL counts (and, unless $2, deletes) what belongs to the executions
// $1 and the content only they referenced, untouched for $3 seconds.
const pruneSQL = `
	WITH calls AS (
		SELECT org_id, output_sha256 FROM agent_tool_call
		WHERE agent_execution_id = ANY($1::uuid[]) AND output_sha256 IS NOT NULL
	), freed AS (
		SELECT DISTINCT c.org_id, c.sha256, c.size FROM content c JOIN calls ON c.org_id = calls.org_id AND c.sha256 = calls.output_sha256
		WHERE c.touched_at < now() - make_interval(secs => $3::bigint)
		  AND NOT EXISTS (SELECT 1 FROM agent_tool_call t WHERE t.org_id = c.org_id AND t.output_sha256 = c.sha256
			AND NOT (t.agent_execution_id = ANY($1::uuid[])))
	), counts AS (
		SELECT
			(SELECT count(*) FROM agent_entry WHERE agent_execution_id = ANY($1::uuid[])) AS entries,
			(SELECT coalesce(sum(octet_length(content::text) + coalesce(octet_length(metadata::text), 0)), 0)
				FROM agent_entry WHERE agent_execution_id = ANY($1::uuid[])) AS entry_bytes,
			(SELECT count(*) FROM agent_checkpoint WHERE agent_execution_id = ANY($1::uuid[])) AS checkpoints,
			(SELECT coalesce(sum(octet_length(state::text)), 0) FROM agent_checkpoint WHERE agent_execution_id = ANY($1::uuid[])) AS checkpoint_bytes,
			(SELECT count(*) FROM agent_tool_call WHERE agent_execution_id = ANY($1::uuid[])) AS tool_calls,
			(SELECT coalesce(sum(coalesce(octet_length(input::text), 0) + coalesce(octet_length(output::text), 0)), 0)
				FROM agent_tool_call WHERE agent_execution_id = ANY($1::uuid[])) AS tool_bytes,
			(SELECT count(*) FROM agent_signal WHERE agent_execution_id = ANY($1::uuid[])) AS signals,
			(SELECT coalesce(sum(coalesce(octet_length(signal_value::text), 0)), 0) FROM agent_signal WHERE agent_execution_id = ANY($1::uuid[])) AS signal_bytes,
			(SELECT count(*) FROM agent_stream_event WHERE agent_execution_id = ANY($1::uuid[])) AS stream_events,
			(SELECT coalesce(sum(octet_length(data::text)), 0) FROM agent_stream_event WHERE agent_execution_id = ANY($1::uuid[])) AS stream_bytes,
			(SELECT count(*) FROM freed) AS contents,
			(SELECT coalesce(sum(size), 0) FROM freed) AS content_bytes
	), gone_content AS (
		DELETE FROM content c USING freed f WHERE NOT $2 AND c.org_id = f.org_id AND c.sha256 = f.sha256
	)
	SELECT entries, entry_bytes + checkpoint_bytes + tool_bytes + signal_bytes + stream_bytes + content_bytes,
		checkpoints, tool_calls, signals, stream_events, contents FROM counts`

// Prune removes ended executions past their retention — their entries,
// checkpoints, tool calls, signals and stream events, and the content only
// they referenced — in transactions of Batch executions, and returns what
// it removed. It never touches a live execution, nor one a kept execution
// resumes from, nor content another execution references or that was put
// within ContentGrace (a put racing the prune keeps its row). A dry run
// counts the same and removes nothing.
func (s *Store) Prune(ctx context.Context, o PruneOptions) (PruneStats, error) {
	const op = "prune"
	var org any
	if o.OrgID != "" {
		ids, err := readIDs(op, o.OrgID)
		if err != nil {
			return PruneStats{}, err
		}
		org = ids[0]
	}
	if o.Defaults == (RetentionPolicy{}) {
		o.Defaults = DefaultRetention
	}
	if o.Batch <= 0 {
		o.Batch = 500
	}
	if o.ContentGrace <= 0 {
		o.ContentGrace = time.Hour
	}
	if o.DryRun {
		// One look at everything due, in one transaction rolled back.
		o.Batch = 1 << 30
	}
	var total PruneStats
	for {
		var batch PruneStats
		err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			rows, err := tx.Query(ctx, prunableSQL, org, o.Defaults.KeepDays, o.Defaults.KeepFailedDays,
				int64(o.OlderThan.Seconds()), o.Batch)
			if err != nil {
				return err
			}
			ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil || len(ids) == 0 {
				return err
			}
			batch.Executions, batch.ExecutionIDs = int64(len(ids)), ids
			err = tx.QueryRow(ctx, pruneSQL, ids, o.DryRun, int64(o.ContentGrace.Seconds())).Scan(&batch.Entries, &batch.Bytes,
				&batch.Checkpoints, &batch.ToolCalls, &batch.Signals, &batch.StreamEvents, &batch.Contents)
			if err != nil || o.DryRun {
				return err
			}
			// The execution rows take their entries, checkpoints, tool
			// calls, signals and stream events with them (ON DELETE
			// CASCADE); a child's parent_id becomes NULL.
			_, err = tx.Exec(ctx, `DELETE FROM agent_execution WHERE id = ANY($1::uuid[])`, ids)
			return err
		})
		if err != nil {
			return total, wrap(op, err)
		}
		total.add(batch)
		if o.DryRun || batch.Executions < int64(o.Batch) {
			return total, nil
		}
		if ctx.Err() != nil {
			return total, wrap(op, ctx.Err())
		}
	}
}
