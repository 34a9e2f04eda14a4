package adapter_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
)

// TestFiftyToolCallsInOneTurnStayWithinBudget: one answer asks for fifty
// tool calls. They run at once, as many per segment as the run's history
// has room for; every run stays within 100 events and 64 KiB, and the
// results are on the path in the model's order.
func TestFiftyToolCallsInOneTurnStayWithinBudget(t *testing.T) {
	const n = 50
	var calls []agentsdk.ToolCall
	for i := range n {
		calls = append(calls, echoCall(fmt.Sprintf("call_%02d", i), fmt.Sprint(i)))
	}
	model := scripted.New(scripted.Turns(scripted.Turn{Text: "Fifty at once.", ToolCalls: calls}, scripted.Turn{Text: "All fifty done."}))
	h := newHarness(t, adapter.Options{Providers: []agentsdk.Provider{model}, Tools: []*agentsdk.Tool{echoTool()}, ReconcileInterval: -1}, false)
	ex := h.start(agentsdk.Config{Tools: []string{"echo"}, MaxParallelTools: 8}, "fifty tools")
	res := h.wait(ex.ID, 2*time.Minute)
	require.Equal(t, "COMPLETED", res.Status, res.Error)
	require.Equal(t, "All fifty done.", res.Text)

	msgs := h.path(res.LeafID)
	require.Len(t, msgs, n+3, "prompt, the answer with its calls, fifty results, the final answer")
	for i, m := range msgs[2 : 2+n] {
		require.Equal(t, agentsdk.RoleToolResult, m.Role)
		require.Equal(t, fmt.Sprintf("call_%02d", i), m.ToolCallID, "results in the model's order")
		require.Equal(t, fmt.Sprintf("echo: %d", i), m.Text())
	}
	runs := h.runs(ex.ID)
	require.Greater(t, len(runs), 1, "fifty calls do not fit one run")
	for _, r := range runs {
		require.LessOrEqual(t, r.Events, int64(100), "run %s", r.RunID)
		require.LessOrEqual(t, r.Bytes, int64(64<<10), "run %s", r.RunID)
	}
	t.Logf("%d runs: %+v", len(runs), runs)
	require.Equal(t, 2, model.Calls(), "the model was asked twice: the calls, then the answer")
}

// TestToolCallsOfOneAnswerRunAtOnce: the calls of one answer overlap in
// time (each waits until all have started), up to MaxParallelTools.
func TestToolCallsOfOneAnswerRunAtOnce(t *testing.T) {
	const n = 4
	var running, peak atomic.Int32
	all := make(chan struct{})
	var started atomic.Int32
	wait := agentsdk.NewTool("rendezvous", "Waits for its siblings.",
		func(ctx context.Context, _ agentsdk.ToolInvocation, _ struct {
			N int `json:"n"`
		}) (string, error) {
			now := running.Add(1)
			defer running.Add(-1)
			for p := peak.Load(); now > p && !peak.CompareAndSwap(p, now); p = peak.Load() {
			}
			if started.Add(1) == n {
				close(all)
			}
			select {
			case <-all:
				return "met", nil
			case <-ctx.Done():
				return "", ctx.Err()
			}
		})
	var calls []agentsdk.ToolCall
	for i := range n {
		// Different arguments: the same call n times in a row would be a loop.
		calls = append(calls, agentsdk.ToolCall{ID: fmt.Sprintf("call_r%d", i), Name: "rendezvous", Arguments: fmt.Appendf(nil, `{"n":%d}`, i)})
	}
	model := scripted.New(scripted.Turns(scripted.Turn{ToolCalls: calls}, scripted.Turn{Text: "They met."}))
	h := newHarness(t, adapter.Options{Providers: []agentsdk.Provider{model}, Tools: []*agentsdk.Tool{wait}, ReconcileInterval: -1}, false)
	ex := h.start(agentsdk.Config{Tools: []string{"rendezvous"}, MaxParallelTools: n}, "meet")
	res := h.wait(ex.ID, time.Minute)
	require.Equal(t, "COMPLETED", res.Status, res.Error)
	require.Equal(t, int32(n), peak.Load(), "all calls ran at the same time")
}

// BenchmarkTenSlowToolCalls is the wall time of a turn whose answer asks
// for ten tool calls of 200 ms each, one at a time and all at once:
//
//	go test ./adapter/ -run '^$' -bench TenSlowToolCalls -benchtime 3x
func BenchmarkTenSlowToolCalls(b *testing.B) {
	const n = 10
	slow := agentsdk.NewTool("slow", "Takes 200 ms.",
		func(ctx context.Context, _ agentsdk.ToolInvocation, a struct {
			N int `json:"n"`
		}) (string, error) {
			select {
			case <-time.After(200 * time.Millisecond):
				return fmt.Sprint("slept ", a.N), nil
			case <-ctx.Done():
				return "", ctx.Err()
			}
		})
	var calls []agentsdk.ToolCall
	for i := range n {
		calls = append(calls, agentsdk.ToolCall{ID: fmt.Sprintf("call_s%d", i), Name: "slow", Arguments: fmt.Appendf(nil, `{"n":%d}`, i)})
	}
	for _, par := range []int{1, n} {
		b.Run(fmt.Sprintf("parallel=%d", par), func(b *testing.B) {
			model := scripted.New(scripted.Turns(scripted.Turn{ToolCalls: calls}, scripted.Turn{Text: "done"}))
			h := newHarness(b, adapter.Options{Providers: []agentsdk.Provider{model}, Tools: []*agentsdk.Tool{slow}, ReconcileInterval: -1}, false)
			b.ResetTimer()
			for range b.N {
				ex := h.start(agentsdk.Config{Tools: []string{"slow"}, MaxParallelTools: par}, "ten slow tools")
				res := h.wait(ex.ID, time.Minute)
				require.Equal(b, "COMPLETED", res.Status, res.Error)
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/turn")
		})
	}
}
