package adapter_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/entrystore"
)

// reconciling are plugin options whose workers reconcile at once: no
// grace, a pass every 100 ms.
func reconciling(opts adapter.Options) adapter.Options {
	opts.ReconcileInterval = 100 * time.Millisecond
	opts.ReconcileGrace = time.Millisecond
	return opts
}

// orphan writes what a gateway killed before starting the workflow leaves:
// the execution row, and with firstEntry its first user entry too.
func orphan(t *testing.T, h *harness, prompt string, firstEntry bool) entrystore.Execution {
	t.Helper()
	cfg, err := json.Marshal(agentsdk.Config{Models: []agentsdk.ModelRef{scripted.Model("")}})
	require.NoError(t, err)
	input, err := json.Marshal(map[string]string{"userPrompt": prompt})
	require.NoError(t, err)
	ex, err := h.es.CreateExecution(context.Background(), entrystore.Execution{
		OrgID: h.org.ID, Kind: react.Kind, Config: cfg, Input: input, Queue: h.taskQueue,
	})
	require.NoError(t, err)
	if firstEntry {
		msg := agentsdk.TextMessage(agentsdk.RoleUser, prompt)
		content, _ := json.Marshal(msg)
		_, _, err := h.es.AppendEntry(context.Background(), entrystore.Entry{OrgID: h.org.ID, ExecutionID: ex.ID,
			Type: string(agentsdk.EntryMessage), Role: string(agentsdk.RoleUser), Content: content, IdempotencyKey: ex.ID + "/input"})
		require.NoError(t, err)
	}
	return ex
}

// TestReconcilerStartsOrphanedExecutions leaves two executions PENDING
// with no workflow, one without even its first entry; the workers'
// reconcilers (two workers, one lock) start each exactly once.
func TestReconcilerStartsOrphanedExecutions(t *testing.T) {
	model := scripted.New(func(_ int, req agentsdk.ModelRequest) scripted.Turn {
		return scripted.Turn{Text: "answer to " + lastUserTexts(req)}
	})
	h := newHarness(t, reconciling(adapter.Options{Providers: []agentsdk.Provider{model}}), true)
	a := orphan(t, h, "row only", false)
	b := orphan(t, h, "row and entry", true)
	for range 2 {
		w := worker.New(h.tc, h.taskQueue, worker.Options{})
		require.NoError(t, w.Start())
		t.Cleanup(w.Stop)
	}

	for _, c := range []struct {
		ex     entrystore.Execution
		prompt string
	}{{a, "row only"}, {b, "row and entry"}} {
		row := h.waitStatus(c.ex.ID, entrystore.StatusCompleted, time.Minute)
		res := h.wait(c.ex.ID, time.Minute)
		require.Equal(t, "answer to "+c.prompt, res.Text)
		require.JSONEq(t, `{"text":"answer to `+c.prompt+`","entryId":"`+res.LeafID+`"}`, string(row.Output))
		entries, _, err := h.es.ListEntries(context.Background(), h.org.ID, c.ex.ID, entrystore.Page{Limit: 100})
		require.NoError(t, err)
		require.Len(t, entries, 2, "one user entry, one answer")
		require.Len(t, h.runs(c.ex.ID), 1, "started once")
	}
	require.Equal(t, 2, model.Calls())
}

// TestReconcilerDeliversUnsignalledInboxRows stores a user message in the
// inbox of a waiting execution without sending its Temporal signal (a
// gateway killed in between); the reconciler sends it and the message is
// answered exactly once.
func TestReconcilerDeliversUnsignalledInboxRows(t *testing.T) {
	model := scripted.New(func(_ int, req agentsdk.ModelRequest) scripted.Turn {
		return scripted.Turn{Text: "answer to " + lastUserTexts(req)}
	})
	h := newHarness(t, reconciling(adapter.Options{Providers: []agentsdk.Provider{model}}), false)
	ex := h.start(agentsdk.Config{Mode: agentsdk.ModeMultiTurn}, "m1")
	h.waitStatus(ex.ID, entrystore.StatusWaiting, time.Minute)
	sg, err := h.es.PutSignal(context.Background(), entrystore.Signal{OrgID: h.org.ID, ExecutionID: ex.ID,
		Name: agentsdk.SignalUserMessage, Value: []byte(`{"text":"m2"}`)})
	require.NoError(t, err)

	var texts []string
	require.Eventually(t, func() bool {
		got, err := h.es.GetSignal(context.Background(), h.org.ID, sg.ID)
		require.NoError(t, err)
		row, err := h.es.GetExecution(context.Background(), h.org.ID, ex.ID)
		require.NoError(t, err)
		cp, err := h.es.LatestCheckpoint(context.Background(), h.org.ID, ex.ID)
		if !got.Consumed || row.Status != entrystore.StatusWaiting || err != nil {
			return false
		}
		texts = texts[:0]
		for _, m := range h.path(cp.LeafEntryID) {
			texts = append(texts, m.Text())
		}
		return texts[len(texts)-1] == "answer to m2"
	}, time.Minute, 20*time.Millisecond, "the stored message was never delivered")
	require.Equal(t, []string{"m1", "answer to m1", "m2", "answer to m2"}, texts)
	entries, _, err := h.es.ListEntries(context.Background(), h.org.ID, ex.ID, entrystore.Page{Limit: 100})
	require.NoError(t, err)
	require.Len(t, entries, 4, "4 messages: answered once")
	require.Equal(t, 2, model.Calls())
}
