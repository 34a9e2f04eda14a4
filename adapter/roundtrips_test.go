package adapter_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/entrystore"
)

// statementCounter is a pgx tracer counting the statements a pool sends.
type statementCounter struct{ n atomic.Int64 }

func (c *statementCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	return ctx
}
func (c *statementCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TestStoreStatementsPerModelCall counts the statements the worker sends
// Postgres for a conversation of model calls that each ask for a tool
// call: the store's share of a model turn, which docs/capacity.md scales
// up. The bound catches a change that adds round trips to every call.
func TestStoreStatementsPerModelCall(t *testing.T) {
	const calls = 30
	model := scripted.New(func(turn int, _ agentsdk.ModelRequest) scripted.Turn {
		if turn < calls-1 {
			return scripted.Turn{Text: "Looking.", ToolCalls: []agentsdk.ToolCall{echoCall(fmt.Sprintf("c%d", turn), "x")}}
		}
		return scripted.Turn{Text: "Done."}
	})
	counter := &statementCounter{}
	h := newHarnessVia(t, adapter.Options{Providers: []agentsdk.Provider{model}, Tools: []*agentsdk.Tool{echoTool()}, ReconcileInterval: -1,
		CapabilityInterval: time.Hour}, false, func(url string) string { return url },
		func(c *pgxpool.Config) { c.ConnConfig.Tracer = counter })
	ex := h.start(agentsdk.Config{Tools: []string{"echo"}, MaxTurns: calls + 1, LoopThreshold: -1}, "go")
	res := h.wait(ex.ID, time.Minute)
	require.Equal(t, "COMPLETED", res.Status)
	require.Equal(t, calls, model.Calls())
	per := float64(counter.n.Load()) / calls
	t.Logf("%d statements for %d model calls (each with a tool call): %.1f per call", counter.n.Load(), calls, per)
	// The variant's overlay (issue 40) and the retry check of the call's
	// key are read with the call's budgets, in one statement
	// (entrystore.CallGate).
	require.Less(t, per, 12.5, "statements per model call (13.6 with variants' overlay read on its own, 11.4 with it and the key's check read with the budgets)")
}

// TestStoreStatementsPerUserTurn counts the statements the worker sends
// Postgres for each user turn of a multi-turn conversation — the message
// consumed, a model call asking for a tool call, the tool, the answer, the
// checkpoints and the wait — from one wait to the next: what a chat
// costs the store per message. The bound catches a change that adds round
// trips to every turn.
func TestStoreStatementsPerUserTurn(t *testing.T) {
	const turns = 8
	model := scripted.New(func(turn int, _ agentsdk.ModelRequest) scripted.Turn {
		if turn%2 == 0 {
			return scripted.Turn{Text: "Looking.", ToolCalls: []agentsdk.ToolCall{echoCall(fmt.Sprintf("c%d", turn), "x")}}
		}
		return scripted.Turn{Text: fmt.Sprintf("answer %d", turn/2+1)}
	})
	counter := &statementCounter{}
	h := newHarnessVia(t, adapter.Options{Providers: []agentsdk.Provider{model}, Tools: []*agentsdk.Tool{echoTool()}, ReconcileInterval: -1,
		CapabilityInterval: time.Hour}, false, func(url string) string { return url },
		func(c *pgxpool.Config) { c.ConnConfig.Tracer = counter })
	ex := h.start(agentsdk.Config{Mode: agentsdk.ModeMultiTurn, Tools: []string{"echo"}, LoopThreshold: -1}, "message 1")
	waited := func(after int) entrystore.Execution {
		return h.waitRow(ex.ID, time.Minute, func(e entrystore.Execution) bool {
			return e.Status == entrystore.StatusWaiting && e.CheckpointSeq > after
		}, "the turn's wait")
	}
	row := waited(0)
	before := counter.n.Load()
	for i := 2; i <= turns+1; i++ {
		_, err := h.ac.Signal(context.Background(), h.org.ID, ex.ID, agentsdk.SignalUserMessage, []byte(fmt.Sprintf(`{"text":"message %d"}`, i)))
		require.NoError(t, err)
		row = waited(row.CheckpointSeq)
	}
	require.Equal(t, 2*(turns+1), model.Calls())
	per := float64(counter.n.Load()-before) / turns
	t.Logf("%d statements for %d user turns (a model call asking for a tool call, the tool, the answer): %.1f per turn",
		counter.n.Load()-before, turns, per)
	// The model call's reads of its variant's overlay (issue 40) and of
	// its key go with its budget read (entrystore.CallGate); a signal is
	// locked and marked consumed in one statement.
	require.Less(t, per, 30.0, "statements per user turn (30.6 at commit 9dcace0, 34.4 before issue 33's cuts, 32.6-33.4 with variants' overlay read on its own, 27.6 with the model call's reads folded and the consumption's lock and mark in one statement)")
}
