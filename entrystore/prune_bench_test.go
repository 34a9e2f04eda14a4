package entrystore_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/entrystore"
)

// seedEnded writes n COMPLETED executions ended 40 days ago, each with a
// user entry and an answer, a checkpoint, a tool call whose output is its
// own content, a signal and two stream events: what a short agent run
// leaves. One INSERT … SELECT per table.
func seedEnded(b *testing.B, w *pruneWorld, n int) {
	b.Helper()
	ctx := context.Background()
	_, err := w.store.Pool().Exec(ctx, `
		WITH x AS (
			INSERT INTO agent_execution (org_id, kind, status, completed_at, started_at, config)
			SELECT $1, 'react-agent', 'COMPLETED', now() - interval '40 days', now() - interval '40 days',
				'{"models":[{"provider":"scripted","modelId":"scripted-1"}],"tools":["echo"]}'
			FROM generate_series(1, $2) RETURNING id
		), u AS (
			INSERT INTO agent_entry (id, org_id, agent_execution_id, depth, branch_id, entry_type, role, content, idempotency_key)
			SELECT gen_random_uuid(), $1, x.id, 0, gen_random_uuid(), 'message', 'user', '{"role":"user","content":[{"type":"text","text":"What do my notes say?"}]}', 'u'
			FROM x RETURNING id, agent_execution_id, branch_id
		), a AS (
			INSERT INTO agent_entry (org_id, agent_execution_id, parent_id, depth, branch_id, step, entry_type, role, content, idempotency_key)
			SELECT $1, u.agent_execution_id, u.id, 1, u.branch_id, 1, 'message', 'assistant',
				'{"role":"assistant","content":[{"type":"text","text":"They say a great deal about checkpoints and segments."}]}', 'a'
			FROM u RETURNING id, agent_execution_id
		), c AS (
			INSERT INTO content (org_id, sha256, size, media_type, data, touched_at)
			SELECT $1, sha256(convert_to(a.id::text, 'UTF8')), 2048, 'text/plain', convert_to(repeat(a.id::text, 57), 'UTF8'),
				now() - interval '40 days'
			FROM a RETURNING sha256
		), t AS (
			INSERT INTO agent_tool_call (org_id, agent_execution_id, message_id, tool_call_id, tool_name, status, input, output, output_sha256, truncated)
			SELECT $1, a.agent_execution_id, a.id, 'c1', 'echo', 'completed', '{"text":"x"}', '{"text":"head … tail"}',
				sha256(convert_to(a.id::text, 'UTF8')), true
			FROM a
		), k AS (
			INSERT INTO agent_checkpoint (org_id, agent_execution_id, sequence, leaf_entry_id, state)
			SELECT $1, a.agent_execution_id, 1, a.id, '{"turn":1,"steps":1,"totalUsage":{"input":120,"output":40}}' FROM a
		), s AS (
			INSERT INTO agent_signal (org_id, agent_execution_id, signal_name, signal_value, consumed)
			SELECT $1, x.id, 'userMessage', '{"text":"and more?"}', true FROM x
		)
		INSERT INTO agent_stream_event (org_id, agent_execution_id, event, data)
		SELECT $1, x.id, e, '{"agentExecutionId":"x","status":"RUNNING"}' FROM x, unnest(ARRAY['agent.started','agent.completed']) e`,
		w.org.ID, n)
	require.NoError(b, err)
}

// BenchmarkPrune10k prunes 10,000 ended executions (11 rows each, 2 KiB
// of content) in the default batches and reports rows and bytes removed
// per second.
func BenchmarkPrune10k(b *testing.B) {
	const n = 10_000
	w := newPruneWorld(b)
	ctx := context.Background()
	var rows, bytes int64
	var elapsed float64
	for b.Loop() {
		b.StopTimer()
		seedEnded(b, w, n)
		b.StartTimer()
		stats, err := w.store.Prune(ctx, entrystore.PruneOptions{})
		b.StopTimer()
		require.NoError(b, err)
		require.EqualValues(b, n, stats.Executions)
		require.EqualValues(b, n, stats.Contents)
		rows += stats.Executions + stats.Entries + stats.Checkpoints + stats.ToolCalls + stats.Signals + stats.StreamEvents + stats.Contents
		bytes += stats.Bytes
		b.StartTimer()
	}
	elapsed = b.Elapsed().Seconds()
	b.ReportMetric(float64(rows)/elapsed, "rows/s")
	b.ReportMetric(float64(bytes)/elapsed/(1<<20), "MiB/s")
	b.ReportMetric(float64(rows)/float64(b.N), "rows/op")
}
