package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/agentree/agentree/agentsdk"
)

// storage measures what one Agentree conversation costs in Postgres per
// byte of conversation: the bytes of the execution's rows in every table
// of the store against the bytes of its messages (each message entry's
// content, as compact JSON). The conversation runs in an organization of
// its own, so the tables keyed by organization only (content) hold its
// rows alone. Tool outputs and the first message are random words: a
// repeated phrase would compress to nothing and flatter the store.
//
// A row's bytes are its columns as stored (pg_column_size of each: after
// compression, out-of-line values counted whole) plus a tuple header and
// line pointer. The stream's events (agent_stream_event) are kept for
// the gateway's replay window (an hour by default), then pruned: the
// durable ratio leaves them out. The disk column is how much the schema's tables,
// indexes and TOAST grew over the conversation: it adds indexes, row
// versions not yet vacuumed and free space in pages.
func (b *bench) storage(ctx context.Context, r *report, trace io.Writer) error {
	c := b.cfg
	org, err := b.store.CreateOrg(ctx, "bench-storage-"+randomHex(4), "storage")
	if err != nil {
		return err
	}
	before, err := b.relationSizes(ctx)
	if err != nil {
		return err
	}
	a := agentree{b: b, org: org.ID}
	p := plan{ID: b.newPlanID("storage"), Calls: c.StorageCalls, ToolBytes: int(c.StorageToolOutput), Tokens: c.StorageTokens, Random: true}
	id, err := a.start(ctx, b.queues.Agentree, p, int(c.StorageConversation))
	if err != nil {
		return err
	}
	status, reason, err := a.wait(ctx, id)
	if err == nil && status != "COMPLETED" {
		err = fmt.Errorf("ended %s %s", status, reason)
	}
	if err != nil {
		return fmt.Errorf("bench: storage: %w", err)
	}
	after, err := b.relationSizes(ctx)
	if err != nil {
		return err
	}
	content, messages, err := b.messageBytes(ctx, id)
	if err != nil {
		return err
	}
	rows, err := b.executionRows(ctx, id, org.ID)
	if err != nil {
		return err
	}

	t := r.table(fmt.Sprintf("storage: one conversation of %d model calls, %s first message, %s per tool output, %d words per answer: bytes in Postgres per byte of its %d messages",
		c.StorageCalls, formatBytes(int64(c.StorageConversation)), formatBytes(int64(c.StorageToolOutput)), c.StorageTokens, messages),
		"table", "rows", "row bytes", "per message byte", "disk growth")
	var total, disk, stream int64
	for _, tr := range rows {
		grew := after[tr.table] - before[tr.table]
		total += tr.bytes
		disk += grew
		if tr.table == "agent_stream_event" {
			stream = tr.bytes
		}
		t.row(tr.table, tr.rows, bytesOf(tr.bytes), ratio(tr.bytes, content), bytesOf(grew))
		r.add("storage_bytes_"+tr.table, bytesOf(tr.bytes))
	}
	t.row("all tables", "", bytesOf(total), ratio(total, content), bytesOf(disk))
	t.row("all but the stream", "", bytesOf(total-stream), ratio(total-stream, content), "")
	t.row("messages (JSON)", messages, bytesOf(content), 1.0, "")
	r.add("storage_messages", messages)
	r.add("storage_content_bytes", bytesOf(content))
	r.add("storage_row_bytes", bytesOf(total))
	r.add("storage_ratio", ratio(total, content))
	r.add("storage_disk_ratio", ratio(disk, content))
	r.add("storage_durable_ratio", ratio(total-stream, content))
	// Judged on what stays: the stream's rows are the replay window's,
	// pruned after it (storage_ratio counts them too).
	return nil
}

// messageBytes is the size of the execution's message entries' content as
// compact JSON, and their count.
func (b *bench) messageBytes(ctx context.Context, id string) (int64, int, error) {
	rows, err := b.store.Pool().Query(ctx,
		`SELECT content::text FROM agent_entry WHERE agent_execution_id = $1 AND entry_type = $2`, id, agentsdk.EntryMessage)
	if err != nil {
		return 0, 0, err
	}
	texts, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return 0, 0, fmt.Errorf("bench: storage: messages: %w", err)
	}
	var n int64
	for _, s := range texts {
		var buf bytes.Buffer
		if err := json.Compact(&buf, []byte(s)); err != nil {
			return 0, 0, err
		}
		n += int64(buf.Len())
	}
	return n, len(texts), nil
}

// tableRows is one table's rows of an execution.
type tableRows struct {
	table string
	rows  int
	bytes int64
}

// tupleOverhead is what Postgres stores per row beside its columns: the
// tuple header (23 bytes, aligned to 24) and the page's line pointer (4).
const tupleOverhead = 28

// executionRows sums, per table of the store's schema, the execution's
// rows: by agent_execution_id where a table has it, by id in
// agent_execution, by org_id where that is a table's only link (content).
func (b *bench) executionRows(ctx context.Context, id, orgID string) ([]tableRows, error) {
	rows, err := b.store.Pool().Query(ctx, `
		SELECT table_name::text, array_agg(column_name::text ORDER BY ordinal_position)
		FROM information_schema.columns
		WHERE table_schema = current_schema()
		GROUP BY table_name ORDER BY table_name`)
	if err != nil {
		return nil, err
	}
	type tableCols struct {
		Name string
		Cols []string
	}
	tables, err := pgx.CollectRows(rows, pgx.RowToStructByPos[tableCols])
	if err != nil {
		return nil, fmt.Errorf("bench: storage: tables: %w", err)
	}
	var out []tableRows
	for _, tc := range tables {
		key, arg := "", id
		switch {
		case slices.Contains(tc.Cols, "agent_execution_id"):
			key = "agent_execution_id"
		case tc.Name == "agent_execution":
			key = "id"
		case slices.Contains(tc.Cols, "org_id"):
			key, arg = "org_id", orgID
		default:
			continue
		}
		sizes := make([]string, len(tc.Cols))
		for i, col := range tc.Cols {
			sizes[i] = fmt.Sprintf("coalesce(pg_column_size(t.%s), 0)", pgx.Identifier{col}.Sanitize())
		}
		q := fmt.Sprintf(`SELECT count(*), coalesce(sum(%s + %d), 0)::bigint FROM %s t WHERE %s = $1`,
			strings.Join(sizes, " + "), tupleOverhead, pgx.Identifier{tc.Name}.Sanitize(), pgx.Identifier{key}.Sanitize())
		var tr tableRows
		tr.table = tc.Name
		if err := b.store.Pool().QueryRow(ctx, q, arg).Scan(&tr.rows, &tr.bytes); err != nil {
			return nil, fmt.Errorf("bench: storage: %s: %w", tc.Name, err)
		}
		if tr.rows > 0 {
			out = append(out, tr)
		}
	}
	return out, nil
}

// relationSizes are the schema's tables' sizes with their indexes and
// TOAST, by table.
func (b *bench) relationSizes(ctx context.Context) (map[string]int64, error) {
	rows, err := b.store.Pool().Query(ctx, `
		SELECT relname::text, pg_total_relation_size(oid) FROM pg_class
		WHERE relnamespace = current_schema()::regnamespace AND relkind = 'r'`)
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	var name string
	var size int64
	_, err = pgx.ForEachRow(rows, []any{&name, &size}, func() error {
		out[name] = size
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("bench: storage: relation sizes: %w", err)
	}
	return out, nil
}
