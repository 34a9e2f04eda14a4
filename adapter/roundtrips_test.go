package adapter_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/pgtest"
)

// TestStoreStatementsPerModelCall counts the round trips the worker makes to
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
	counter := &pgtest.RoundTrips{}
	h := newHarnessVia(t, adapter.Options{Providers: []agentsdk.Provider{model}, Tools: []*agentsdk.Tool{echoTool()}, ReconcileInterval: -1,
		CapabilityInterval: time.Hour}, false, func(url string) string { return url },
		func(c *pgxpool.Config) { c.ConnConfig.Tracer = counter })
	ex := h.start(agentsdk.Config{Tools: []string{"echo"}, MaxTurns: calls + 1, LoopThreshold: -1}, "go")
	res := h.wait(ex.ID, time.Minute)
	require.Equal(t, "COMPLETED", res.Status)
	require.Equal(t, calls, model.Calls())
	per := float64(counter.Trips.Load()) / calls
	t.Logf("%d round trips for %d model calls (each with a tool call): %.1f per call; %d statements sent in batches", counter.Trips.Load(), calls, per, counter.Batched.Load())
	// The variant's overlay (issue 40) and the retry check of the call's
	// key are read with the call's budgets, in one statement
	// (entrystore.CallGate).
	// A tool call's start and end each commit with their events, as do a
	// checkpoint and an answer with its last deltas: one round trip each
	// (entrystore's announced writes).
	require.Less(t, per, 7.5, "round trips per model call (13.6 with variants' overlay read on its own, 11.4 with it and the key's check read with the budgets, 7.6 with writes and their events sent together, 7.4 with a checkpoint that waits and its move in one, 6.4 with a tool call's result entry and its record's end in one)")
}

// TestStoreStatementsPerUserTurn counts the round trips the worker makes to
// Postgres for each user turn of a multi-turn conversation — the message
// consumed, a model call asking for a tool call, the tool, the answer, the
// checkpoints and the wait — from one wait to the next: what a chat
// costs the store per message. The bound catches a change that adds round
// trips to every turn.
func TestStoreStatementsPerUserTurn(t *testing.T) {
	const turns = 8
	var mu sync.Mutex
	var last agentsdk.ModelRequest
	model := scripted.New(func(turn int, req agentsdk.ModelRequest) scripted.Turn {
		mu.Lock()
		last = req
		mu.Unlock()
		if turn%2 == 0 {
			return scripted.Turn{Text: "Looking.", ToolCalls: []agentsdk.ToolCall{echoCall(fmt.Sprintf("c%d", turn), "x")}}
		}
		return scripted.Turn{Text: fmt.Sprintf("answer %d", turn/2+1)}
	})
	counter := &pgtest.RoundTrips{}
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
	before := counter.Trips.Load()
	for i := 2; i <= turns+1; i++ {
		_, err := h.ac.Signal(context.Background(), h.org.ID, ex.ID, agentsdk.SignalUserMessage, []byte(fmt.Sprintf(`{"text":"message %d"}`, i)))
		require.NoError(t, err)
		row = waited(row.CheckpointSeq)
	}
	require.Equal(t, 2*(turns+1), model.Calls())
	// Each consumed message reached the model: the context the worker's
	// cache holds (a consumption's entry added to it) is the path.
	var said []string
	mu.Lock()
	for _, m := range last.Messages {
		if m.Role == agentsdk.RoleUser {
			said = append(said, m.Text())
		}
	}
	mu.Unlock()
	want := []string{}
	for i := 1; i <= turns+1; i++ {
		want = append(want, fmt.Sprintf("message %d", i))
	}
	require.Equal(t, want, said)
	per := float64(counter.Trips.Load()-before) / turns
	t.Logf("%d round trips for %d user turns (a model call asking for a tool call, the tool, the answer): %.1f per turn",
		counter.Trips.Load()-before, turns, per)
	// The model call's reads of its variant's overlay (issue 40) and of
	// its key go with its budget read (entrystore.CallGate); a signal is
	// locked and marked consumed in one statement.
	// The turn's start (RUNNING and agent.resumed), its tool call's start
	// and end, its answers and its checkpoint and wait each commit with
	// their events.
	require.Less(t, per, 15.0, "round trips per user turn (30.6 at commit 9dcace0, 34.4 before issue 33's cuts, 32.6-33.4 with variants' overlay read on its own, 27.6 with the model call's reads folded and the consumption's lock and mark in one statement, 20.8 with writes and their events sent together, 19.8 with Begin's read in the round trip of its move, 19.0 with a checkpoint that waits and its move in one, 17.6-18.5 with a tool call's result entry and its record's end in one, 14.9 with a fresh signal's consumption in one round trip, 13.8 with its entry added to the context cache: the count moves with how the deltas batch, so the bound leaves room)")
}
