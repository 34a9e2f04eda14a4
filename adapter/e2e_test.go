package adapter_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/adapter/client"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/entrystore"
)

func echoTool() *agentsdk.Tool {
	return agentsdk.NewTool("echo", "Echoes its text.",
		func(_ context.Context, _ agentsdk.ToolInvocation, a echoArgs) (string, error) {
			return "echo: " + a.Text, nil
		})
}

type echoArgs struct {
	Text string `json:"text"`
}

func echoCall(id, text string) agentsdk.ToolCall {
	return agentsdk.ToolCall{ID: id, Name: "echo", Arguments: []byte(`{"text":"` + text + `"}`)}
}

func TestOneShotWithThreeToolCalls(t *testing.T) {
	model := scripted.New(scripted.Turns(
		scripted.Turn{Text: "Let me check.", ToolCalls: []agentsdk.ToolCall{echoCall("a", "1")}},
		scripted.Turn{ToolCalls: []agentsdk.ToolCall{echoCall("b", "2"), echoCall("c", "3")}},
		scripted.Turn{Text: "All three done."},
	))
	h := newHarness(t, adapter.Options{Providers: []agentsdk.Provider{model}, Tools: []*agentsdk.Tool{echoTool()}}, false)
	ex := h.start(agentsdk.Config{Tools: []string{"echo"}}, "run three tools")
	res := h.wait(ex.ID, time.Minute)
	require.Equal(t, "COMPLETED", res.Status)
	require.Equal(t, "All three done.", res.Text)

	msgs := h.path(res.LeafID)
	require.Equal(t, "user,assistant,tool_result,assistant,tool_result,tool_result,assistant", roleList(msgs))
	require.Equal(t, "echo: 1", msgs[2].Text())
	require.Equal(t, "echo: 3", msgs[5].Text())

	row := h.waitStatus(ex.ID, entrystore.StatusCompleted, time.Second)
	require.NotNil(t, row.StartedAt)
	require.NotNil(t, row.CompletedAt)
	require.Equal(t, 3, row.StepCount)
	require.JSONEq(t, fmt.Sprintf(`{"text":"All three done.","entryId":%q}`, res.LeafID), string(row.Output))

	calls, _, err := h.es.ListToolCalls(context.Background(), h.org.ID, ex.ID, entrystore.ToolCallFilter{}, entrystore.Page{})
	require.NoError(t, err)
	require.Len(t, calls, 3)
	for i, c := range calls {
		require.Equal(t, "completed", c.Status)
		require.Equal(t, []int{1, 2, 2}[i], c.StepNumber, "the step of the answer that asked for it")
		require.NotEmpty(t, c.ResultEntryID)
	}
	cps, _, err := h.es.ListCheckpoints(context.Background(), h.org.ID, ex.ID, entrystore.Page{})
	require.NoError(t, err)
	require.Len(t, cps, 3, "a checkpoint after each turn with tools, and one with the final answer")
	latest, err := h.es.LatestCheckpoint(context.Background(), h.org.ID, ex.ID)
	require.NoError(t, err)
	require.Equal(t, res.LeafID, latest.LeafEntryID, "an ended execution's latest checkpoint is at its leaf")
	require.Equal(t, 3, model.Calls())
}

func TestMultiTurnWithThreeUserMessages(t *testing.T) {
	model := scripted.New(func(turn int, _ agentsdk.ModelRequest) scripted.Turn {
		return scripted.Turn{Text: fmt.Sprintf("answer %d", turn+1)}
	})
	h := newHarness(t, adapter.Options{Providers: []agentsdk.Provider{model}}, false)
	ex := h.start(agentsdk.Config{Mode: agentsdk.ModeMultiTurn}, "message 1")
	for i := 2; i <= 3; i++ {
		h.waitStatus(ex.ID, entrystore.StatusWaiting, 30*time.Second)
		_, err := h.ac.Signal(context.Background(), h.org.ID, ex.ID, agentsdk.SignalUserMessage, []byte(fmt.Sprintf(`{"text":"message %d"}`, i)))
		require.NoError(t, err)
		h.waitStatus(ex.ID, entrystore.StatusRunning, 30*time.Second)
	}
	h.waitStatus(ex.ID, entrystore.StatusWaiting, 30*time.Second)
	cp, err := h.es.LatestCheckpoint(context.Background(), h.org.ID, ex.ID)
	require.NoError(t, err)
	var texts []string
	for _, m := range h.path(cp.LeafEntryID) {
		texts = append(texts, m.Text())
	}
	require.Equal(t, []string{"message 1", "answer 1", "message 2", "answer 2", "message 3", "answer 3"}, texts)

	_, err = h.ac.Cancel(context.Background(), h.org.ID, ex.ID)
	require.NoError(t, err)
	h.waitStatus(ex.ID, entrystore.StatusCancelled, 30*time.Second)
	_, err = h.ac.Signal(context.Background(), h.org.ID, ex.ID, agentsdk.SignalUserMessage, []byte(`{"text":"late"}`))
	require.ErrorIs(t, err, client.ErrTerminal)
}

func TestCancelWhileToolRuns(t *testing.T) {
	started := make(chan struct{})
	var toolCtxErr atomic.Value
	block := agentsdk.NewTool("block", "Blocks until cancelled.",
		func(ctx context.Context, _ agentsdk.ToolInvocation, _ struct{}) (string, error) {
			close(started)
			<-ctx.Done()
			toolCtxErr.Store(ctx.Err())
			return "", ctx.Err()
		})
	model := scripted.New(scripted.Turns(scripted.Turn{ToolCalls: []agentsdk.ToolCall{{ID: "b", Name: "block"}}}))
	h := newHarness(t, adapter.Options{Providers: []agentsdk.Provider{model}, Tools: []*agentsdk.Tool{block}, ToolHeartbeatTimeout: 2 * time.Second}, false)
	ex := h.start(agentsdk.Config{Tools: []string{"block"}}, "block please")
	select {
	case <-started:
	case <-time.After(30 * time.Second):
		t.Fatal("the tool never started")
	}
	_, err := h.ac.Cancel(context.Background(), h.org.ID, ex.ID)
	require.NoError(t, err)
	h.waitStatus(ex.ID, entrystore.StatusCancelled, 30*time.Second)
	require.ErrorIs(t, toolCtxErr.Load().(error), context.Canceled, "the tool's context was cancelled")
	calls, _, err := h.es.ListToolCalls(context.Background(), h.org.ID, ex.ID, entrystore.ToolCallFilter{}, entrystore.Page{})
	require.NoError(t, err)
	require.Len(t, calls, 1)
	require.Equal(t, "cancelled", calls[0].Status)
}

// TestHistoryStaysSmall is the product's claim: 200 model turns, each with
// a 1 MB tool output, and every run's history stays within 100 events and
// 64 KiB while Postgres holds the whole conversation.
func TestHistoryStaysSmall(t *testing.T) {
	const turns = 200
	big := agentsdk.NewTool("dump", "Returns 1 MB.",
		func(_ context.Context, _ agentsdk.ToolInvocation, a struct {
			N int `json:"n"`
		}) (string, error) {
			return fmt.Sprintf("output %d\n", a.N) + strings.Repeat("x", 1<<20), nil
		})
	model := scripted.New(func(turn int, _ agentsdk.ModelRequest) scripted.Turn {
		if turn >= turns-1 {
			return scripted.Turn{Text: "finished"}
		}
		return scripted.Turn{ToolCalls: []agentsdk.ToolCall{{ID: fmt.Sprintf("d%d", turn), Name: "dump", Arguments: []byte(fmt.Sprintf(`{"n":%d}`, turn))}}}
	})
	h := newHarness(t, adapter.Options{Providers: []agentsdk.Provider{model}, Tools: []*agentsdk.Tool{big}}, false)
	// 200 outputs cut to 16 KiB each pass any window: compaction is off,
	// so the model sees — and the store holds — the whole conversation.
	off := false
	ex := h.start(agentsdk.Config{Tools: []string{"dump"}, MaxTurns: turns + 1, LoopThreshold: -1,
		Compaction: &agentsdk.Compaction{Enabled: &off}}, "dump a lot")
	res := h.wait(ex.ID, 10*time.Minute)
	require.Equal(t, "COMPLETED", res.Status)

	msgs := h.path(res.LeafID)
	require.Len(t, msgs, 1+2*(turns-1)+1)
	for i := 0; i < turns-1; i++ {
		out := msgs[2+2*i]
		require.Equal(t, agentsdk.RoleToolResult, out.Role)
		require.True(t, strings.HasPrefix(out.Text(), fmt.Sprintf("output %d\n", i)), "tool result %d in order", i)
		require.Contains(t, out.Text(), "omitted")
	}
	runs := h.runs(ex.ID)
	// Local calls' turns are short (markers only), so a run holds more of
	// them than activities' would; it still fills and continues as new.
	require.Greater(t, len(runs), 1, "the execution continued as new as its runs filled")
	var maxEvents, maxBytes int64
	for _, r := range runs {
		maxEvents = max(maxEvents, r.Events)
		maxBytes = max(maxBytes, r.Bytes)
		require.LessOrEqual(t, r.Events, int64(100), "run %s", r.RunID)
		require.LessOrEqual(t, r.Bytes, int64(64<<10), "run %s", r.RunID)
	}
	t.Logf("%d runs; largest history %d events, %d bytes", len(runs), maxEvents, maxBytes)
}

// TestSignalsSurviveContinueAsNew sends 50 user messages as fast as possible
// while the agent checkpoints every turn: every one becomes a user entry,
// in order, none twice.
func TestSignalsSurviveContinueAsNew(t *testing.T) {
	const n = 50
	model := scripted.New(func(turn int, req agentsdk.ModelRequest) scripted.Turn {
		return scripted.Turn{Text: fmt.Sprintf("reply %d", turn)}
	})
	h := newHarness(t, adapter.Options{Providers: []agentsdk.Provider{model}}, false)
	ex := h.start(agentsdk.Config{Mode: agentsdk.ModeMultiTurn, MaxTurns: 1000}, "message 0")
	for i := 1; i <= n; i++ {
		_, err := h.ac.Signal(context.Background(), h.org.ID, ex.ID, agentsdk.SignalUserMessage, []byte(fmt.Sprintf(`{"text":"message %d"}`, i)))
		require.NoError(t, err)
	}
	var users []string
	require.Eventually(t, func() bool {
		ex, err := h.es.GetExecution(context.Background(), h.org.ID, ex.ID)
		require.NoError(t, err)
		if ex.Status != entrystore.StatusWaiting {
			return false
		}
		cp, err := h.es.LatestCheckpoint(context.Background(), h.org.ID, ex.ID)
		require.NoError(t, err)
		users = users[:0]
		for _, m := range h.path(cp.LeafEntryID) {
			if m.Role == agentsdk.RoleUser {
				users = append(users, m.Text())
			}
		}
		return len(users) >= n+1
	}, 2*time.Minute, 20*time.Millisecond)
	require.Len(t, users, n+1)
	for i, u := range users {
		require.Equal(t, fmt.Sprintf("message %d", i), u)
	}
	pending, err := h.es.PendingSignals(context.Background(), h.org.ID, ex.ID)
	require.NoError(t, err)
	require.Empty(t, pending)
}

// TestLargePayloadsGoToPostgres: a result bigger than the threshold travels
// through Temporal as a claim on the Postgres content store.
func TestLargePayloadsGoToPostgres(t *testing.T) {
	answer := strings.Repeat("a long answer. ", 4000) // 60 KB
	model := scripted.New(scripted.Turns(scripted.Turn{Text: answer}))
	h := newHarness(t, adapter.Options{Providers: []agentsdk.Provider{model}}, false)
	ex := h.start(agentsdk.Config{}, "say a lot")
	res := h.wait(ex.ID, time.Minute)
	require.Equal(t, answer, res.Text, "the result came back whole")
	runs := h.runs(ex.ID)
	require.Len(t, runs, 1)
	require.Less(t, runs[0].Bytes, int64(32<<10), "the 60 KB result is not in history")
	var n int
	require.NoError(t, h.es.Pool().QueryRow(context.Background(),
		`SELECT count(*) FROM content WHERE org_id = $1 AND size > 60000`, adapter.SystemOrgID).Scan(&n))
	require.GreaterOrEqual(t, n, 1)
}
