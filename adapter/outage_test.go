package adapter_test

import (
	"context"
	"net"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/netfault"
)

// outageLength is longer than the ~7 s of retries after which a model or
// tool call used to fail its execution.
const outageLength = 13 * time.Second

// proxied returns a function that rewrites a database URL to go through a
// fault proxy in front of its server, and the proxy.
func proxied(t *testing.T) (func(string) string, func() *netfault.Proxy) {
	var p *netfault.Proxy
	rewrite := func(dbURL string) string {
		u, err := url.Parse(dbURL)
		require.NoError(t, err, "DATABASE_URL must be a URL for this test")
		host := u.Host
		if _, _, err := net.SplitHostPort(host); err != nil {
			host = net.JoinHostPort(host, "5432")
		}
		p, err = netfault.Listen(host)
		require.NoError(t, err)
		t.Cleanup(func() { _ = p.Close() })
		u.Host = p.Addr()
		return u.String()
	}
	return rewrite, func() *netfault.Proxy { return p }
}

// waitOutage keeps the store cut for outageLength and until the pending
// activity has been retried on the store being unavailable, then restores
// it. Polling, not sleeping: the outage ends when both are observed.
func waitOutage(t *testing.T, h *harness, exID string, p *netfault.Proxy, cutAt time.Time) {
	t.Helper()
	require.Eventually(t, func() bool {
		if time.Since(cutAt) < outageLength {
			return false
		}
		d, err := h.tc.DescribeWorkflowExecution(context.Background(), exID, "")
		require.NoError(t, err)
		for _, pa := range d.PendingActivities {
			if pa.Attempt >= 3 && pa.LastFailure.GetApplicationFailureInfo().GetType() == adapter.ErrTypeStoreUnavailable {
				return true
			}
		}
		return false
	}, time.Minute, 100*time.Millisecond, "no activity retried on the store being unavailable")
	p.Restore()
}

// TestOutageDoesNotFailTheExecution cuts the worker off Postgres three
// times, each for longer than the retry budget the engine had: while a
// model call is in flight, while a tool runs (13 s each), and for 32 s
// while the workflow's own store writes run; user messages arrive
// (acknowledged) during each. The execution must go on once the
// store is back, answer every message exactly once, and never fall back
// to another model because of the store.
func TestOutageDoesNotFailTheExecution(t *testing.T) {
	inModel, inTool := newGate(), newGate()
	primary := scripted.New(func(turn int, req agentsdk.ModelRequest) scripted.Turn {
		last := req.Messages[len(req.Messages)-1]
		switch {
		case turn == 0:
			inModel.pass()
			return scripted.Turn{ToolCalls: []agentsdk.ToolCall{{ID: "g1", Name: "gate"}}}
		case last.Role == agentsdk.RoleToolResult:
			return scripted.Turn{Text: "tool done"} // not reached: m2 and m3 come first
		}
		return scripted.Turn{Text: "answer to " + lastUserTexts(req)}
	})
	fallback := scripted.New(scripted.Turns(scripted.Turn{Text: "fallback"})).Named("fallback")
	gateTool := agentsdk.NewTool("gate", "Waits for the test.", func(context.Context, agentsdk.ToolInvocation, struct{}) (string, error) {
		inTool.pass()
		return "gated", nil
	})
	rewrite, proxy := proxied(t)
	h := newHarnessVia(t, adapter.Options{
		Providers: []agentsdk.Provider{primary, fallback}, Tools: []*agentsdk.Tool{gateTool},
		// One run holds the whole test, so outage 3 finds the store write
		// retrying in the run it described (not in a run continued as new).
		ReconcileInterval: -1, RunEvents: 95,
	}, false, rewrite)
	models := []agentsdk.ModelRef{scripted.Model(""), {Provider: "fallback", ModelID: "fallback-1"}}
	ex := h.start(agentsdk.Config{Mode: agentsdk.ModeMultiTurn, Models: models, Tools: []string{"gate"}}, "m1")
	signal := func(text string) {
		_, err := h.ac.Signal(context.Background(), h.org.ID, ex.ID, agentsdk.SignalUserMessage, []byte(`{"text":"`+text+`"}`))
		require.NoError(t, err, "the gateway's store is up: %s is acknowledged", text)
	}

	// Outage 1: the model is answering when the store goes.
	inModel.waitReached(t)
	proxy().Cut()
	cutAt := time.Now()
	signal("m2")
	close(inModel.release)
	waitOutage(t, h, ex.ID, proxy(), cutAt)

	// Outage 2: the tool is running when the store goes.
	inTool.waitReached(t)
	proxy().Cut()
	cutAt = time.Now()
	signal("m3")
	close(inTool.release)
	waitOutage(t, h, ex.ID, proxy(), cutAt)

	leaf := waitAnswered(t, h, ex.ID, "answer to m2+m3")

	var texts []string
	for _, m := range h.path(leaf) {
		texts = append(texts, m.Text())
	}
	require.Equal(t, []string{"m1", "", "gated", "m2", "m3", "answer to m2+m3"}, texts, "the messages that arrived during the turn are taken before the next model call")
	entries, _, err := h.es.ListEntries(context.Background(), h.org.ID, ex.ID, entrystore.Page{Limit: 500})
	require.NoError(t, err)
	require.Len(t, entries, 6, "6 messages; nothing twice, nothing off the path")
	pending, err := h.es.PendingSignals(context.Background(), h.org.ID, ex.ID)
	require.NoError(t, err)
	require.Empty(t, pending, "every acknowledged message consumed")
	require.Zero(t, fallback.Calls(), "the store being down never falls back to another model")

	// Outage 3: the execution waits when the store goes, and a message
	// wakes it: the workflow's own store writes (local activities) retry
	// past the 30 seconds after which a local activity used to give up.
	// The workflow task heartbeats while they retry, so the history grows.
	d, err := h.tc.DescribeWorkflowExecution(context.Background(), ex.ID, "")
	require.NoError(t, err)
	proxy().Cut()
	cutAt = time.Now()
	signal("m4")
	require.Eventually(t, func() bool {
		if time.Since(cutAt) < 32*time.Second {
			return false
		}
		now, err := h.tc.DescribeWorkflowExecution(context.Background(), ex.ID, "")
		require.NoError(t, err)
		require.Equal(t, d.WorkflowExecutionInfo.Execution.RunId, now.WorkflowExecutionInfo.Execution.RunId)
		return now.WorkflowExecutionInfo.HistoryLength >= d.WorkflowExecutionInfo.HistoryLength+6
	}, time.Minute, 100*time.Millisecond, "the workflow's store write did not keep retrying")
	proxy().Restore()
	waitAnswered(t, h, ex.ID, "answer to m4")
	d, err = h.tc.DescribeWorkflowExecution(context.Background(), ex.ID, "")
	require.NoError(t, err)
	require.Equal(t, "Running", d.WorkflowExecutionInfo.Status.String())
}

// waitAnswered waits until the execution is WAITING at a checkpoint whose
// leaf says answer, failing at once if it FAILED, and returns that leaf.
func waitAnswered(t *testing.T, h *harness, exID, answer string) string {
	t.Helper()
	var leaf string
	require.Eventually(t, func() bool {
		row, err := h.es.GetExecution(context.Background(), h.org.ID, exID)
		require.NoError(t, err)
		require.NotEqual(t, entrystore.StatusFailed, row.Status, "the outage failed the execution: %s", row.Error)
		cp, err := h.es.LatestCheckpoint(context.Background(), h.org.ID, exID)
		if err != nil || row.Status != entrystore.StatusWaiting {
			return false
		}
		leaf = cp.LeafEntryID
		msgs := h.path(leaf)
		return msgs[len(msgs)-1].Text() == answer
	}, time.Minute, 50*time.Millisecond, "%q never came", answer)
	return leaf
}
