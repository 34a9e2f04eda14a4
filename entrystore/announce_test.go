package entrystore_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/entrystore"
)

// events are the names of the execution's stored stream events, oldest
// first.
func (f *fixture) events(t *testing.T) []string {
	t.Helper()
	evs, err := f.store.StreamEventsAfter(context.Background(), f.org.ID, f.exec.ID, 0, entrystore.MaxPageLimit)
	require.NoError(t, err)
	names := make([]string, len(evs))
	for i, ev := range evs {
		names[i] = ev.Event
	}
	return names
}

func announce(names ...string) []entrystore.NewStreamEvent {
	out := make([]entrystore.NewStreamEvent, len(names))
	for i, n := range names {
		out[i] = entrystore.NewStreamEvent{Event: n, Data: []byte(`{"n":"` + n + `"}`)}
	}
	return out
}

// A tool call's start and end each commit with their events; a start
// that finds the call answered announces nothing, and a write refused, or
// whose events fail, leaves neither.
func TestAnnounceToolCallCommitsTheRecordAndItsEventsTogether(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	asked, _, err := f.store.AppendEntry(ctx, entrystore.Entry{OrgID: f.org.ID, ExecutionID: f.exec.ID, Type: "message", Role: "assistant",
		Content: []byte(`{"role":"assistant","content":[{"type":"tool_call","toolCall":{"id":"a","name":"t","arguments":{}}}]}`), IdempotencyKey: "asked"})
	require.NoError(t, err)
	call := func(status, output string) entrystore.ToolCall {
		tc := entrystore.ToolCall{OrgID: f.org.ID, ExecutionID: f.exec.ID, MessageID: asked.ID, ToolCallID: "a", ToolName: "t", Status: status}
		if output != "" {
			tc.Output = []byte(output)
		}
		return tc
	}

	got, err := f.store.AnnounceToolCall(ctx, call(entrystore.ToolCallRunning, ""), announce("task.started"), true)
	require.NoError(t, err)
	require.Equal(t, entrystore.ToolCallRunning, got.Status)
	require.Equal(t, []string{"task.started"}, f.events(t))

	// An attempt that failed leaves no result: the next start announces.
	_, err = f.store.AnnounceToolCall(ctx, call(entrystore.ToolCallError, `{"error":"flaky"}`), announce("task.failed"), false)
	require.NoError(t, err)
	got, err = f.store.AnnounceToolCall(ctx, call(entrystore.ToolCallRunning, ""), announce("task.started"), true)
	require.NoError(t, err)
	require.Equal(t, entrystore.ToolCallError, got.Status, "a start never moves an ended record back")
	require.Equal(t, []string{"task.started", "task.failed", "task.started"}, f.events(t))

	// Answered: a start finds the record ended and says nothing.
	_, err = f.store.AnnounceToolCall(ctx, call(entrystore.ToolCallCompleted, `{"text":"done"}`), announce("data", "task.completed"), false)
	require.NoError(t, err)
	got, err = f.store.AnnounceToolCall(ctx, call(entrystore.ToolCallRunning, ""), announce("task.started"), true)
	require.NoError(t, err)
	require.Equal(t, entrystore.ToolCallCompleted, got.Status)
	require.Equal(t, []string{"task.started", "task.failed", "task.started", "data", "task.completed"}, f.events(t))

	// Refused (no such message in the execution): no record, no event.
	other := call(entrystore.ToolCallRunning, "")
	other.MessageID, other.ToolCallID = "00000000-0000-0000-0000-0000000000bb", "b"
	_, err = f.store.AnnounceToolCall(ctx, other, announce("task.started"), true)
	require.ErrorIs(t, err, entrystore.ErrInvalid)
	require.Len(t, f.events(t), 5)

	// Events that fail to store roll the record back with them.
	bad := call(entrystore.ToolCallRunning, "")
	bad.ToolCallID = "c"
	_, err = f.store.AnnounceToolCall(ctx, bad, []entrystore.NewStreamEvent{{Event: "task.started", Data: []byte(`{not json`)}}, true)
	require.Error(t, err)
	_, err = f.store.ToolCallOf(ctx, f.org.ID, f.exec.ID, asked.ID, "c")
	require.ErrorIs(t, err, entrystore.ErrNotFound, "the record committed without its events")
	require.Len(t, f.events(t), 5)
}

// A checkpoint announces once: the repeat of a checkpoint recorded is
// refused (ErrConflict) and stores no event.
func TestAppendCheckpointAnnouncedOnlyWhenItInserts(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	leaf := f.append(t, "", "first")
	c := entrystore.Checkpoint{OrgID: f.org.ID, ExecutionID: f.exec.ID, Sequence: 1, LeafEntryID: leaf.ID, State: []byte(`{}`)}
	got, err := f.store.AppendCheckpointAnnounced(ctx, c, announce("agent.checkpoint"))
	require.NoError(t, err)
	require.Equal(t, 1, got.Sequence)
	require.Equal(t, []string{"agent.checkpoint"}, f.events(t))

	_, err = f.store.AppendCheckpointAnnounced(ctx, c, announce("agent.checkpoint"))
	require.ErrorIs(t, err, entrystore.ErrConflict)
	require.Equal(t, []string{"agent.checkpoint"}, f.events(t))

	c.Sequence, c.LeafEntryID = 2, "00000000-0000-0000-0000-0000000000aa"
	_, err = f.store.AppendCheckpointAnnounced(ctx, c, announce("agent.checkpoint"))
	require.ErrorIs(t, err, entrystore.ErrInvalid, "a leaf that is not the execution's")
	require.Equal(t, []string{"agent.checkpoint"}, f.events(t))
}

// A move announces when its one statement makes it; a move to where the
// execution is, or one it may not make, stores nothing.
func TestTransitionAnnouncedOnlyWhenItMoves(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	running := entrystore.Transition{To: entrystore.StatusRunning}
	e, announced, err := f.store.TransitionAnnounced(ctx, f.org.ID, f.exec.ID, running, announce("agent.resumed"))
	require.NoError(t, err)
	require.True(t, announced)
	require.Equal(t, entrystore.StatusRunning, e.Status)
	require.Equal(t, []string{"agent.resumed"}, f.events(t))

	e, announced, err = f.store.TransitionAnnounced(ctx, f.org.ID, f.exec.ID, running, announce("agent.resumed"))
	require.NoError(t, err)
	require.False(t, announced)
	require.Equal(t, entrystore.StatusRunning, e.Status)
	require.Equal(t, []string{"agent.resumed"}, f.events(t))

	_, _, err = f.store.TransitionAnnounced(ctx, f.org.ID, f.exec.ID, entrystore.Transition{To: entrystore.StatusCompleted}, announce("agent.completed"))
	require.NoError(t, err)
	_, announced, err = f.store.TransitionAnnounced(ctx, f.org.ID, f.exec.ID, running, announce("agent.resumed"))
	require.ErrorIs(t, err, entrystore.ErrConflict, "a completed execution does not run again")
	require.False(t, announced)
	require.Equal(t, []string{"agent.resumed", "agent.completed"}, f.events(t))
}

// An answer appended as its parent's continuation commits with its
// events; a repeat, or a fork, stores them first and appends as ever; an
// event that fails to store takes the answer back with it.
func TestAppendEntryAnnouncedCommitsWithItsEvents(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	parent := f.append(t, "", "question")
	entry := func(key string) entrystore.Entry {
		return entrystore.Entry{OrgID: f.org.ID, ExecutionID: f.exec.ID, ParentID: parent.ID, Type: "message", Role: "assistant",
			Content: []byte(`{"text":"` + key + `"}`), IdempotencyKey: key}
	}
	got, err := f.store.AppendEntryAnnounced(ctx, entry("answer"), announce("token", "token"))
	require.NoError(t, err)
	require.Equal(t, parent.Depth+1, got.Depth)
	require.Equal(t, []string{"token", "token"}, f.events(t))

	again, err := f.store.AppendEntryAnnounced(ctx, entry("answer"), announce("token"))
	require.NoError(t, err)
	require.Equal(t, got.ID, again.ID, "a repeat returns the entry stored")
	require.Len(t, f.events(t), 3)

	fork, err := f.store.AppendEntryAnnounced(ctx, entry("another answer"), announce("token"))
	require.NoError(t, err)
	require.NotEqual(t, got.ID, fork.ID, "a second child forks")
	require.Equal(t, parent.ID, fork.ParentID)
	require.Len(t, f.events(t), 4)

	_, err = f.store.AppendEntryAnnounced(ctx, entrystore.Entry{OrgID: f.org.ID, ExecutionID: f.exec.ID, ParentID: got.ID, Type: "message", Role: "user",
		Content: []byte(`{"text":"next"}`), IdempotencyKey: "next"}, []entrystore.NewStreamEvent{{Event: "token", Data: []byte(`{not json`)}})
	require.Error(t, err)
	_, err = f.store.GetEntryByKey(ctx, f.org.ID, f.exec.ID, "next")
	require.ErrorIs(t, err, entrystore.ErrNotFound, "the entry committed without its events")
	require.Len(t, f.events(t), 4)
}

// A segment's start reads the execution as it stood and moves it to
// RUNNING in one round trip, announcing only a move it made for a
// segment not yet gone past.
func TestBeginRunningAnnouncesOnlyItsOwnMove(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	before, moved, err := f.store.BeginRunning(ctx, f.org.ID, f.exec.ID, 0, announce("agent.started"))
	require.NoError(t, err)
	require.True(t, moved)
	require.Equal(t, f.exec.Status, before.Status, "the execution as it stood")
	require.Equal(t, []string{"agent.started"}, f.events(t))

	before, moved, err = f.store.BeginRunning(ctx, f.org.ID, f.exec.ID, 0, announce("agent.started"))
	require.NoError(t, err)
	require.False(t, moved, "running already")
	require.Equal(t, entrystore.StatusRunning, before.Status)
	require.Len(t, f.events(t), 1)

	// Gone past: a checkpoint after the segment's sequence moves it
	// without a word.
	leaf := f.append(t, "", "first")
	_, err = f.store.AppendCheckpoint(ctx, entrystore.Checkpoint{OrgID: f.org.ID, ExecutionID: f.exec.ID, Sequence: 2, LeafEntryID: leaf.ID, State: []byte(`{}`)})
	require.NoError(t, err)
	_, err = f.store.Transition(ctx, f.org.ID, f.exec.ID, entrystore.Transition{To: entrystore.StatusWaiting})
	require.NoError(t, err)
	before, moved, err = f.store.BeginRunning(ctx, f.org.ID, f.exec.ID, 1, announce("agent.resumed"))
	require.NoError(t, err)
	require.True(t, moved)
	require.Equal(t, entrystore.StatusWaiting, before.Status)
	require.Equal(t, 2, before.CheckpointSeq)
	require.Len(t, f.events(t), 1)

	_, err = f.store.Transition(ctx, f.org.ID, f.exec.ID, entrystore.Transition{To: entrystore.StatusCancelled})
	require.NoError(t, err)
	before, moved, err = f.store.BeginRunning(ctx, f.org.ID, f.exec.ID, 2, announce("agent.resumed"))
	require.NoError(t, err)
	require.False(t, moved, "an ended execution stays ended")
	require.Equal(t, entrystore.StatusCancelled, before.Status)
	require.Len(t, f.events(t), 1)

	_, _, err = f.store.BeginRunning(ctx, f.org.ID, "00000000-0000-0000-0000-0000000000cc", 0, announce("agent.started"))
	require.ErrorIs(t, err, entrystore.ErrNotFound)
}

func TestAppendCheckpointAndWaitMovesOnlyWithItsCheckpoint(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	leaf := f.append(t, "", "first")
	_, err := f.store.Transition(ctx, f.org.ID, f.exec.ID, entrystore.Transition{To: entrystore.StatusRunning})
	require.NoError(t, err)
	c := entrystore.Checkpoint{OrgID: f.org.ID, ExecutionID: f.exec.ID, Sequence: 1, LeafEntryID: leaf.ID, State: []byte(`{}`)}

	// The common case: the checkpoint, the move and both events, together.
	e, moved, err := f.store.AppendCheckpointAndWait(ctx, c, announce("agent.checkpoint"), announce("agent.waiting"))
	require.NoError(t, err)
	require.True(t, moved)
	require.Equal(t, entrystore.StatusWaiting, e.Status)
	require.Equal(t, []string{"agent.checkpoint", "agent.waiting"}, f.events(t))
	var xmins int
	require.NoError(t, f.store.Pool().QueryRow(ctx, `SELECT count(DISTINCT xmin::text) FROM agent_stream_event WHERE agent_execution_id = $1`,
		f.exec.ID).Scan(&xmins))
	require.Equal(t, 1, xmins, "one transaction")

	// A repeat finds its checkpoint: nothing moves, nothing is announced.
	_, moved, err = f.store.AppendCheckpointAndWait(ctx, c, announce("agent.checkpoint"), announce("agent.waiting"))
	require.ErrorIs(t, err, entrystore.ErrConflict)
	require.False(t, moved)

	// A new checkpoint of an execution that is WAITING already: the
	// checkpoint is announced, the move (none) is not.
	c.Sequence = 2
	_, moved, err = f.store.AppendCheckpointAndWait(ctx, c, announce("agent.checkpoint"), announce("agent.waiting"))
	require.NoError(t, err)
	require.False(t, moved)
	require.Equal(t, []string{"agent.checkpoint", "agent.waiting", "agent.checkpoint"}, f.events(t))

	// One being cancelled records its checkpoint and stays CANCELLING.
	_, err = f.store.Transition(ctx, f.org.ID, f.exec.ID, entrystore.Transition{To: entrystore.StatusCancelling})
	require.NoError(t, err)
	c.Sequence = 3
	_, moved, err = f.store.AppendCheckpointAndWait(ctx, c, announce("agent.checkpoint"), announce("agent.waiting"))
	require.NoError(t, err)
	require.False(t, moved)
	got, err := f.store.GetExecution(ctx, f.org.ID, f.exec.ID)
	require.NoError(t, err)
	require.Equal(t, entrystore.StatusCancelling, got.Status)
	require.Equal(t, 3, got.CheckpointSeq)
	require.Equal(t, []string{"agent.checkpoint", "agent.waiting", "agent.checkpoint", "agent.checkpoint"}, f.events(t))
}

// A tool call's end goes in as one: its result entry, its record ended
// and linked to the entry, and its events, in one transaction; a repeat
// of the entry's key writes nothing, and events that fail to store leave
// no entry and no end.
func TestAppendToolResultAnnouncedEndsTheCallInOneTransaction(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	asked, _, err := f.store.AppendEntry(ctx, entrystore.Entry{OrgID: f.org.ID, ExecutionID: f.exec.ID, Type: "message", Role: "assistant",
		Content: []byte(`{"role":"assistant","content":[{"type":"tool_call","toolCall":{"id":"a","name":"t","arguments":{}}}]}`), IdempotencyKey: "asked"})
	require.NoError(t, err)
	_, err = f.store.AnnounceToolCall(ctx, entrystore.ToolCall{OrgID: f.org.ID, ExecutionID: f.exec.ID, MessageID: asked.ID,
		ToolCallID: "a", ToolName: "t", Status: entrystore.ToolCallRunning}, announce("task.started"), true)
	require.NoError(t, err)
	result := func(key string) entrystore.Entry {
		return entrystore.Entry{OrgID: f.org.ID, ExecutionID: f.exec.ID, ParentID: asked.ID, Type: "message", Role: "tool_result",
			Content: []byte(`{"role":"tool_result","content":[{"type":"text","text":"done"}]}`), IdempotencyKey: key}
	}
	end := entrystore.ToolCall{OrgID: f.org.ID, ExecutionID: f.exec.ID, MessageID: asked.ID, ToolCallID: "a", ToolName: "t",
		Status: entrystore.ToolCallCompleted, Output: []byte(`{"text":"done"}`)}

	// Events that fail to store: no entry, the record still running.
	_, _, err = f.store.AppendToolResultAnnounced(ctx, result("result/a"), end,
		[]entrystore.NewStreamEvent{{Event: "task.completed", Data: []byte(`{not json`)}})
	require.Error(t, err)
	_, err = f.store.GetEntryByKey(ctx, f.org.ID, f.exec.ID, "result/a")
	require.ErrorIs(t, err, entrystore.ErrNotFound, "the entry committed without its events")
	rec, err := f.store.ToolCallOf(ctx, f.org.ID, f.exec.ID, asked.ID, "a")
	require.NoError(t, err)
	require.Equal(t, entrystore.ToolCallRunning, rec.Status)

	got, appended, err := f.store.AppendToolResultAnnounced(ctx, result("result/a"), end, announce("data", "task.completed"))
	require.NoError(t, err)
	require.True(t, appended)
	require.Equal(t, asked.ID, got.ParentID)
	rec, err = f.store.ToolCallOf(ctx, f.org.ID, f.exec.ID, asked.ID, "a")
	require.NoError(t, err)
	require.Equal(t, entrystore.ToolCallCompleted, rec.Status)
	require.Equal(t, got.ID, rec.ResultEntryID, "the record links the entry")
	require.Equal(t, []string{"task.started", "data", "task.completed"}, f.events(t))
	var xmins int
	require.NoError(t, f.store.Pool().QueryRow(ctx, `SELECT count(DISTINCT x) FROM (
			SELECT xmin::text AS x FROM agent_entry WHERE id = $1
			UNION ALL SELECT xmin::text FROM agent_tool_call WHERE result_entry_id = $1
			UNION ALL SELECT xmin::text FROM agent_stream_event WHERE agent_execution_id = $2 AND event <> 'task.started') t`,
		got.ID, f.exec.ID).Scan(&xmins))
	require.Equal(t, 1, xmins, "one transaction")

	// A repeat of the key writes nothing: the caller takes the usual ways.
	_, appended, err = f.store.AppendToolResultAnnounced(ctx, result("result/a"), end, announce("data", "task.completed"))
	require.NoError(t, err)
	require.False(t, appended)
	require.Len(t, f.events(t), 3)
	// So does a result under a parent continued already (a fork's case).
	_, appended, err = f.store.AppendToolResultAnnounced(ctx, result("result/other"), end, announce("data", "task.completed"))
	require.NoError(t, err)
	require.False(t, appended)
	require.Len(t, f.events(t), 3)
	_, err = f.store.GetEntryByKey(ctx, f.org.ID, f.exec.ID, "result/other")
	require.ErrorIs(t, err, entrystore.ErrNotFound)
}

// An answer's tool results go in with their records' links in one
// transaction, in the model's order; a repeat, or a parent continued
// already, writes nothing.
func TestAppendToolResultsLinksInOneTransaction(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	asked, _, err := f.store.AppendEntry(ctx, entrystore.Entry{OrgID: f.org.ID, ExecutionID: f.exec.ID, Type: "message", Role: "assistant",
		Content:        []byte(`{"role":"assistant","content":[{"type":"tool_call","toolCall":{"id":"a","name":"t","arguments":{}}},{"type":"tool_call","toolCall":{"id":"b","name":"t","arguments":{}}}]}`),
		IdempotencyKey: "asked"})
	require.NoError(t, err)
	ended := func(id string) entrystore.ToolCall {
		return entrystore.ToolCall{OrgID: f.org.ID, ExecutionID: f.exec.ID, MessageID: asked.ID, ToolCallID: id, ToolName: "t",
			Status: entrystore.ToolCallCompleted, Output: []byte(`{"text":"done ` + id + `"}`)}
	}
	for _, id := range []string{"a", "b"} {
		_, err := f.store.RecordToolCall(ctx, ended(id))
		require.NoError(t, err)
	}
	results := func(prefix string) []entrystore.Entry {
		es := make([]entrystore.Entry, 2)
		for i, id := range []string{"a", "b"} {
			parent := entrystore.PrevParent
			if i == 0 {
				parent = asked.ID
			}
			es[i] = entrystore.Entry{OrgID: f.org.ID, ExecutionID: f.exec.ID, ParentID: parent, Type: "message", Role: "tool_result",
				Content: []byte(`{"role":"tool_result","content":[{"type":"text","text":"done ` + id + `"}]}`), IdempotencyKey: prefix + id}
		}
		return es
	}
	calls := []entrystore.ToolCall{ended("a"), ended("b")}

	got, appended, err := f.store.AppendToolResults(ctx, results("result/"), calls)
	require.NoError(t, err)
	require.True(t, appended)
	require.Len(t, got, 2)
	require.Equal(t, asked.ID, got[0].ParentID)
	require.Equal(t, got[0].ID, got[1].ParentID, "in the model's order")
	for i, id := range []string{"a", "b"} {
		rec, err := f.store.ToolCallOf(ctx, f.org.ID, f.exec.ID, asked.ID, id)
		require.NoError(t, err)
		require.Equal(t, got[i].ID, rec.ResultEntryID)
	}
	var xmins int
	require.NoError(t, f.store.Pool().QueryRow(ctx, `SELECT count(DISTINCT x) FROM (
			SELECT xmin::text AS x FROM agent_entry WHERE id = ANY($1::uuid[])
			UNION ALL SELECT xmin::text FROM agent_tool_call WHERE result_entry_id = ANY($1::uuid[])) t`,
		[]string{got[0].ID, got[1].ID}).Scan(&xmins))
	require.Equal(t, 1, xmins, "one transaction")

	count := func() int {
		var n int
		require.NoError(t, f.store.Pool().QueryRow(ctx, `SELECT count(*) FROM agent_entry WHERE agent_execution_id = $1`, f.exec.ID).Scan(&n))
		return n
	}
	_, appended, err = f.store.AppendToolResults(ctx, results("result/"), calls)
	require.NoError(t, err)
	require.False(t, appended, "a repeat")
	_, appended, err = f.store.AppendToolResults(ctx, results("other/"), calls)
	require.NoError(t, err)
	require.False(t, appended, "the assistant entry was continued already")
	require.Equal(t, 3, count(), "nothing more written")
	rec, err := f.store.ToolCallOf(ctx, f.org.ID, f.exec.ID, asked.ID, "a")
	require.NoError(t, err)
	require.Equal(t, got[0].ID, rec.ResultEntryID, "the links stand")
}
