package entrystore_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/pgtest"
)

// pruneWorld is a store with executions in every state, each holding a
// little of everything an execution writes.
type pruneWorld struct {
	t     testing.TB
	store *entrystore.Store
	org   entrystore.Org
}

func newPruneWorld(t testing.TB) *pruneWorld {
	t.Helper()
	s := entrystore.New(pgtest.New(t))
	org, err := s.CreateOrg(context.Background(), "acme", "Acme")
	require.NoError(t, err)
	return &pruneWorld{t: t, store: s, org: org}
}

// execution writes an execution with two entries, a checkpoint, a signal,
// a stream event and a tool call whose whole output is the content
// output (when not nil); status it ends in (or keeps, when live), ended
// age ago.
func (w *pruneWorld) execution(status entrystore.Status, age time.Duration, output []byte) entrystore.Execution {
	w.t.Helper()
	ctx := context.Background()
	s := w.store
	ex, err := s.CreateExecution(ctx, entrystore.Execution{OrgID: w.org.ID, Kind: entrystore.DefaultKind})
	require.NoError(w.t, err)
	user, _, err := s.AppendEntry(ctx, entrystore.Entry{OrgID: w.org.ID, ExecutionID: ex.ID, Type: "message", Role: "user",
		Content: json.RawMessage(`{"text":"hello"}`), IdempotencyKey: "u"})
	require.NoError(w.t, err)
	answer, _, err := s.AppendEntry(ctx, entrystore.Entry{OrgID: w.org.ID, ExecutionID: ex.ID, ParentID: user.ID, Type: "message",
		Role: "assistant", Content: json.RawMessage(`{"text":"hi"}`), IdempotencyKey: "a"})
	require.NoError(w.t, err)
	tc := entrystore.ToolCall{OrgID: w.org.ID, ExecutionID: ex.ID, MessageID: answer.ID, ToolCallID: "c1", ToolName: "t",
		Status: "completed", Output: json.RawMessage(`{"text":"out"}`)}
	if output != nil {
		tc.OutputSHA256, _, err = s.PutContent(ctx, w.org.ID, output, "text/plain")
		require.NoError(w.t, err)
		tc.Truncated = true
	}
	_, err = s.RecordToolCall(ctx, tc)
	require.NoError(w.t, err)
	_, err = s.AppendCheckpoint(ctx, entrystore.Checkpoint{OrgID: w.org.ID, ExecutionID: ex.ID, Sequence: 1,
		LeafEntryID: answer.ID, State: json.RawMessage(`{"turn":1}`)})
	require.NoError(w.t, err)
	_, err = s.PutSignal(ctx, entrystore.Signal{OrgID: w.org.ID, ExecutionID: ex.ID, Name: "userMessage", Value: json.RawMessage(`{"text":"x"}`)})
	require.NoError(w.t, err)
	_, err = s.AppendStreamEvent(ctx, w.org.ID, ex.ID, "agent.started", json.RawMessage(`{"status":"RUNNING"}`))
	require.NoError(w.t, err)
	if status != entrystore.StatusPending {
		_, err = s.Transition(ctx, w.org.ID, ex.ID, entrystore.Transition{To: entrystore.StatusRunning})
		require.NoError(w.t, err)
	}
	if status.Terminal() {
		_, err = s.Transition(ctx, w.org.ID, ex.ID, entrystore.Transition{To: status})
		require.NoError(w.t, err)
	}
	w.age(ex.ID, age)
	return ex
}

// age moves an execution's end (or, live, its creation) back, and its
// content's last put with it.
func (w *pruneWorld) age(id string, age time.Duration) {
	w.t.Helper()
	_, err := w.store.Pool().Exec(context.Background(), `
		UPDATE agent_execution SET completed_at = completed_at - make_interval(secs => $2),
			created_at = created_at - make_interval(secs => $2) WHERE id = $1`, id, age.Seconds())
	require.NoError(w.t, err)
	_, err = w.store.Pool().Exec(context.Background(), `UPDATE content SET touched_at = now() - make_interval(secs => $1)`, age.Seconds())
	require.NoError(w.t, err)
}

// rows counts the rows of every table an execution writes to.
func (w *pruneWorld) rows() map[string]int {
	w.t.Helper()
	out := map[string]int{}
	for _, table := range []string{"agent_execution", "agent_entry", "agent_checkpoint", "agent_tool_call", "agent_signal", "agent_stream_event", "content"} {
		var n int
		require.NoError(w.t, w.store.Pool().QueryRow(context.Background(), "SELECT count(*) FROM "+table).Scan(&n))
		out[table] = n
	}
	return out
}

func (w *pruneWorld) exists(id string) bool {
	_, err := w.store.GetExecution(context.Background(), w.org.ID, id)
	return err == nil
}

const day = 24 * time.Hour

func sha256hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// TestPruneKeepsSharedContent: pruning execution A, whose tool output B
// stored too (content is shared by hash), keeps that content for B; A's
// own content goes.
func TestPruneKeepsSharedContent(t *testing.T) {
	w := newPruneWorld(t)
	ctx := context.Background()
	shared, own := []byte("the same long output"), []byte("output only A stored")
	a := w.execution(entrystore.StatusCompleted, 40*day, shared)
	_, _, err := w.store.PutContent(ctx, w.org.ID, own, "text/plain")
	require.NoError(t, err)
	// A second call of A holds its own content.
	ownSHA, _, err := w.store.PutContent(ctx, w.org.ID, own, "text/plain")
	require.NoError(t, err)
	ans, _, err := w.store.ListEntries(ctx, w.org.ID, a.ID, entrystore.Page{Limit: 10})
	require.NoError(t, err)
	_, err = w.store.RecordToolCall(ctx, entrystore.ToolCall{OrgID: w.org.ID, ExecutionID: a.ID, MessageID: ans[1].ID,
		ToolCallID: "c2", ToolName: "t", Status: "completed", OutputSHA256: ownSHA})
	require.NoError(t, err)
	b := w.execution(entrystore.StatusCompleted, time.Hour, shared)
	// Every put was long ago, but for the content of C, old itself, whose
	// bytes another writer has just put again (a put racing the prune).
	_, err = w.store.Pool().Exec(ctx, `UPDATE content SET touched_at = now() - interval '2 days'`)
	require.NoError(t, err)
	racing := []byte("put again just now")
	c := w.execution(entrystore.StatusCompleted, 40*day, racing)
	_, err = w.store.Pool().Exec(ctx, `UPDATE content SET touched_at = now() WHERE size = $1`, len(racing))
	require.NoError(t, err)

	stats, err := w.store.Prune(ctx, entrystore.PruneOptions{})
	require.NoError(t, err)
	require.EqualValues(t, 2, stats.Executions)
	require.ElementsMatch(t, []string{a.ID, c.ID}, stats.ExecutionIDs)
	require.EqualValues(t, 1, stats.Contents, "A's own content only: B holds the shared one, C's was put within the grace")
	racingSHA := sha256hex(racing)
	_, _, err = w.store.GetContent(ctx, w.org.ID, racingSHA)
	require.NoError(t, err, "content put within the grace period stays")
	require.False(t, w.exists(a.ID))
	require.True(t, w.exists(b.ID))

	bCalls, _, err := w.store.ListToolCalls(ctx, w.org.ID, b.ID, entrystore.ToolCallFilter{}, entrystore.Page{Limit: 10})
	require.NoError(t, err)
	data, _, err := w.store.GetContent(ctx, w.org.ID, bCalls[0].OutputSHA256)
	require.NoError(t, err, "B's content survived A's prune")
	require.Equal(t, shared, data)
	_, _, err = w.store.GetContent(ctx, w.org.ID, ownSHA)
	require.ErrorIs(t, err, entrystore.ErrNotFound, "A's own content went")
}

// TestPruneNeverTouchesRunningExecutions: live executions stay whatever
// their age; ended ones go by their organization's policy (failed ones
// kept longer), and one a kept execution resumes stays with it.
func TestPruneNeverTouchesRunningExecutions(t *testing.T) {
	w := newPruneWorld(t)
	ctx := context.Background()
	live := map[string]entrystore.Execution{}
	for _, st := range []entrystore.Status{entrystore.StatusPending, entrystore.StatusRunning, entrystore.StatusWaiting} {
		live[string(st)] = w.execution(st, 400*day, nil)
	}
	cancelling := w.execution(entrystore.StatusRunning, 400*day, nil)
	_, err := w.store.Transition(ctx, w.org.ID, cancelling.ID, entrystore.Transition{To: entrystore.StatusCancelling})
	require.NoError(t, err)
	oldDone := w.execution(entrystore.StatusCompleted, 20*day, nil)
	oldFailed := w.execution(entrystore.StatusFailed, 20*day, nil)
	veryOldFailed := w.execution(entrystore.StatusFailed, 60*day, nil)
	recent := w.execution(entrystore.StatusCompleted, 9*day, nil)
	pausedAndResumed := w.execution(entrystore.StatusPaused, 60*day, nil)
	_, err = w.store.CreateExecution(ctx, entrystore.Execution{OrgID: w.org.ID, Kind: entrystore.DefaultKind, ResumedFrom: pausedAndResumed.ID})
	require.NoError(t, err)

	_, err = w.store.SetRetention(ctx, entrystore.RetentionPolicy{OrgID: w.org.ID, KeepDays: 10, KeepFailedDays: 30})
	require.NoError(t, err)
	stats, err := w.store.Prune(ctx, entrystore.PruneOptions{Batch: 1})
	require.NoError(t, err)
	require.ElementsMatch(t, []string{oldDone.ID, veryOldFailed.ID}, stats.ExecutionIDs)
	for _, ex := range []entrystore.Execution{live["PENDING"], live["RUNNING"], live["WAITING"], cancelling, oldFailed, recent, pausedAndResumed} {
		require.True(t, w.exists(ex.ID), "%s was pruned", ex.ID)
		entries, _, err := w.store.ListEntries(ctx, w.org.ID, ex.ID, entrystore.Page{Limit: 10})
		require.NoError(t, err)
		require.Len(t, entries, 2, "its entries are all there")
	}

	// --older-than overrides the policies, never the liveness rule.
	stats, err = w.store.Prune(ctx, entrystore.PruneOptions{OlderThan: time.Hour})
	require.NoError(t, err)
	require.ElementsMatch(t, []string{oldFailed.ID, recent.ID}, stats.ExecutionIDs, "the paused one is still resumed by a kept one")
	require.True(t, w.exists(live["RUNNING"].ID))
}

// TestPruneDryRunChangesNothing: a dry run counts exactly what the real
// prune then removes, and changes no row.
func TestPruneDryRunChangesNothing(t *testing.T) {
	w := newPruneWorld(t)
	ctx := context.Background()
	for i := range 3 {
		w.execution(entrystore.StatusCompleted, 40*day, fmt.Appendf(nil, "output %d", i))
	}
	w.execution(entrystore.StatusRunning, 40*day, nil)
	before := w.rows()
	dry, err := w.store.Prune(ctx, entrystore.PruneOptions{DryRun: true})
	require.NoError(t, err)
	require.Equal(t, before, w.rows(), "a dry run changes nothing")
	require.EqualValues(t, 3, dry.Executions)
	require.EqualValues(t, 6, dry.Entries)
	require.EqualValues(t, 3, dry.Checkpoints)
	require.EqualValues(t, 3, dry.ToolCalls)
	require.EqualValues(t, 3, dry.Signals)
	require.EqualValues(t, 3, dry.StreamEvents)
	require.EqualValues(t, 3, dry.Contents)
	require.Positive(t, dry.Bytes)

	real, err := w.store.Prune(ctx, entrystore.PruneOptions{})
	require.NoError(t, err)
	dry.ExecutionIDs, real.ExecutionIDs = nil, nil
	require.Equal(t, dry, real, "the dry run's counts are what the prune removed")
	after := w.rows()
	for table, n := range before {
		if table == "agent_execution" {
			require.Equal(t, n-3, after[table])
			continue
		}
		require.Less(t, after[table], n, table)
	}
}
