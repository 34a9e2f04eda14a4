package adapter

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/pgtest"
	"github.com/agentree/agentree/internal/step"
)

// compactEvery and keptTurns shape the conversations of
// BenchmarkContextAtTurn: a compaction after every compactEvery turns
// keeps the last keptTurns verbatim, as a 70%/30% window would.
const (
	compactEvery = 10
	keptTurns    = 3
)

// BenchmarkContextAtTurn builds a model's context — the store read and
// the request — at the end of turn 50 and of turn 1,000 of a
// conversation that compacts as it goes (each turn a user message, a
// tool call, its result and an answer). With the path read only from the
// latest compaction's boundary, turn 1,000 costs what turn 50 does; the
// ratio is logged.
func BenchmarkContextAtTurn(b *testing.B) {
	ctx := context.Background()
	es := entrystore.New(pgtest.New(b))
	org, err := es.CreateOrg(ctx, "bench", "Bench")
	require.NoError(b, err)
	store := pgStore{es: es}
	cfg := agentsdk.Config{SystemPrompt: "Be helpful."}.WithDefaults()
	model := agentsdk.ModelRef{Provider: "scripted", ModelID: "scripted-1"}
	perOp := map[int]time.Duration{}
	for _, turns := range []int{50, 1000} {
		leaf := compactedConversation(b, es, org.ID, turns)
		_, err := es.Pool().Exec(ctx, "VACUUM ANALYZE agent_entry")
		require.NoError(b, err)
		b.Run(fmt.Sprintf("turn=%d", turns), func(b *testing.B) {
			for b.Loop() {
				path, err := store.ContextPath(ctx, org.ID, leaf)
				if err != nil {
					b.Fatal(err)
				}
				req, err := step.Request(cfg, model, path, nil)
				if err != nil || len(req.Messages) < 4*keptTurns {
					b.Fatalf("request of %d messages: %v", len(req.Messages), err)
				}
			}
			perOp[turns] = b.Elapsed() / time.Duration(b.N)
		})
	}
	if perOp[50] > 0 {
		b.Logf("context at turn 50: %v, at turn 1000: %v; ratio %.2f (goal ≤ 1.2)",
			perOp[50], perOp[1000], float64(perOp[1000])/float64(perOp[50]))
	}
}

// compactedConversation writes, with COPY, an execution of turns turns
// compacted every compactEvery turns, and returns its leaf's ID.
func compactedConversation(b testing.TB, es *entrystore.Store, orgID string, turns int) string {
	ctx := context.Background()
	ex, err := es.CreateExecution(ctx, entrystore.Execution{OrgID: orgID, Kind: entrystore.DefaultKind})
	require.NoError(b, err)
	n := turns*4 + turns/compactEvery
	ids := make([]string, n)
	require.NoError(b, es.Pool().QueryRow(ctx, "SELECT array_agg(gen_random_uuid()::text) FROM generate_series(1, $1)", n).Scan(&ids))
	var rows [][]any
	var userDepths []int
	add := func(typ, role string, content any) {
		c, err := json.Marshal(content)
		require.NoError(b, err)
		d := len(rows)
		var parent any
		if d > 0 {
			parent = ids[d-1]
		}
		rows = append(rows, []any{ids[d], orgID, ex.ID, parent, d, typ, role, string(c), fmt.Sprintf("k%d", d), ids[0]})
	}
	for t := 1; t <= turns; t++ {
		userDepths = append(userDepths, len(rows))
		call := agentsdk.ToolCall{ID: fmt.Sprintf("call_%d", t), Name: "read_file", Arguments: json.RawMessage(`{"path":"notes/turn.md"}`)}
		add("message", "user", agentsdk.TextMessage(agentsdk.RoleUser, fmt.Sprintf("Turn %d: read the notes and tell me what changed.", t)))
		add("message", "assistant", agentsdk.Message{Role: agentsdk.RoleAssistant, Content: []agentsdk.Block{{Type: agentsdk.BlockToolCall, ToolCall: &call}}})
		add("message", "tool_result", agentsdk.ToolResultMessage(call, fmt.Sprintf("notes at turn %d: %0200d", t, t), false))
		add("message", "assistant", agentsdk.TextMessage(agentsdk.RoleAssistant, fmt.Sprintf("At turn %d the notes changed in one line.", t)))
		if t%compactEvery == 0 && t < turns {
			kept := userDepths[len(userDepths)-keptTurns]
			add("compaction", "", agentsdk.CompactionRecord{Summary: fmt.Sprintf("## Goal\nTrack the notes (to turn %d).\n%0800d", t, t),
				FirstKeptEntryID: ids[kept], FirstKeptDepth: kept, Trigger: agentsdk.CompactAuto})
		}
	}
	_, err = es.Pool().CopyFrom(ctx, pgx.Identifier{"agent_entry"},
		[]string{"id", "org_id", "agent_execution_id", "parent_id", "depth", "entry_type", "role", "content", "idempotency_key", "branch_id"},
		pgx.CopyFromRows(rows))
	require.NoError(b, err)
	return ids[len(rows)-1]
}

// BenchmarkContextCacheHeld measures the heap a worker's context cache
// holds per entry while many executions are mid-conversation, as under
// the bench's concurrent scenario: 100 executions of 9 turns (36 entries
// each, no compaction), every model call of each — at each user message
// and each tool result — made in turn across them, as a worker serving
// them all at once does, each reading its view and messages. Reported as
// held-B/entry: the live heap with the cache over the heap without it,
// after a collection; ns/op is the walk's 1,800 calls.
func BenchmarkContextCacheHeld(b *testing.B) {
	ctx := context.Background()
	es := entrystore.New(pgtest.New(b))
	org, err := es.CreateOrg(ctx, "held", "Held")
	require.NoError(b, err)
	const executions, turns = 100, 9
	s := pgStore{es: es}
	paths := make([][]entrystore.Entry, executions)
	for i := range paths {
		paths[i], err = es.Path(ctx, org.ID, compactedConversation(b, es, org.ID, turns))
		require.NoError(b, err)
	}
	var held, entries float64
	for b.Loop() {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		cache := step.NewCache(0)
		for d := range paths[0] {
			if paths[0][d].Role == "assistant" {
				continue
			}
			for _, p := range paths {
				v, _, err := cache.View(ctx, s, org.ID, p[d].ExecutionID, p[d].ID)
				if err == nil {
					_, err = v.Messages()
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(cache)
		held, entries = float64(after.HeapAlloc)-float64(before.HeapAlloc), float64(executions*len(paths[0]))
	}
	b.ReportMetric(held/entries, "held-B/entry")
}
