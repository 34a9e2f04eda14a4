package entrystore_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/entrystore"
)

func TestDefinitions(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	d, err := f.store.CreateDefinition(ctx, entrystore.Definition{OrgID: f.org.ID, Name: "Researcher", Slug: "researcher",
		Models: []byte(`["claude"]`), Tools: []string{"search", "fetch"}, Config: []byte(`{"max_steps":10}`)})
	require.NoError(t, err)
	require.Equal(t, entrystore.DefaultKind, d.Kind)
	require.Equal(t, []string{"search", "fetch"}, d.Tools)
	require.Nil(t, d.Metadata)

	_, err = f.store.CreateDefinition(ctx, entrystore.Definition{OrgID: f.org.ID, Name: "Dup", Slug: "researcher"})
	require.ErrorIs(t, err, entrystore.ErrConflict)

	d.Description, d.Tools = "digs", nil
	up, err := f.store.UpdateDefinition(ctx, d)
	require.NoError(t, err)
	require.Equal(t, "digs", up.Description)
	require.Empty(t, up.Tools)
	require.True(t, up.UpdatedAt.After(d.UpdatedAt))
	require.False(t, up.ExposeA2A || up.ExposeMCP, "a definition is served over no standard protocol unless it says so")

	// Opting in to A2A is stored, and the standard endpoints find the
	// definition by its slug (an unknown slug or a malformed org is not
	// found).
	up.ExposeA2A = true
	up, err = f.store.UpdateDefinition(ctx, up)
	require.NoError(t, err)
	bySlug, err := f.store.GetDefinitionBySlug(ctx, f.org.ID, "researcher")
	require.NoError(t, err)
	require.Equal(t, up.ID, bySlug.ID)
	require.True(t, bySlug.ExposeA2A)
	require.False(t, bySlug.ExposeMCP)
	_, err = f.store.GetDefinitionBySlug(ctx, f.org.ID, "nobody")
	require.ErrorIs(t, err, entrystore.ErrNotFound)
	_, err = f.store.GetDefinitionBySlug(ctx, "not-an-id", "researcher")
	require.ErrorIs(t, err, entrystore.ErrNotFound)

	for i := range 4 {
		_, err := f.store.CreateDefinition(ctx, entrystore.Definition{OrgID: f.org.ID, Name: "n", Slug: fmt.Sprintf("s%d", i)})
		require.NoError(t, err)
	}
	page1, next, err := f.store.ListDefinitions(ctx, f.org.ID, entrystore.Page{Limit: 3})
	require.NoError(t, err)
	require.Equal(t, d.ID, page1[0].ID, "oldest first")
	page2, next2, err := f.store.ListDefinitions(ctx, f.org.ID, entrystore.Page{Limit: 3, Cursor: next})
	require.NoError(t, err)
	require.Len(t, page2, 2)
	require.Empty(t, next2)

	require.NoError(t, f.store.DeleteDefinition(ctx, f.org.ID, d.ID))
	require.ErrorIs(t, f.store.DeleteDefinition(ctx, f.org.ID, d.ID), entrystore.ErrNotFound)
	_, err = f.store.GetDefinition(ctx, f.org.ID, d.ID)
	require.ErrorIs(t, err, entrystore.ErrNotFound)
}

func TestContentIsDeduplicated(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	big := make([]byte, 1<<20)
	_, _ = rand.Read(big)
	for _, data := range [][]byte{[]byte("hello"), big, {}} {
		sha, created, err := f.store.PutContent(ctx, f.org.ID, data, "text/plain")
		require.NoError(t, err)
		require.True(t, created)
		sha2, created, err := f.store.PutContent(ctx, f.org.ID, data, "application/other")
		require.NoError(t, err)
		require.False(t, created)
		require.Equal(t, sha, sha2)

		got, mediaType, err := f.store.GetContent(ctx, f.org.ID, sha)
		require.NoError(t, err)
		require.True(t, bytes.Equal(data, got))
		require.Equal(t, "text/plain", mediaType)
		size, err := f.store.ContentSize(ctx, f.org.ID, sha)
		require.NoError(t, err)
		require.Equal(t, int64(len(data)), size)
	}
	var rows int
	require.NoError(t, f.store.Pool().QueryRow(ctx, "SELECT count(*) FROM content").Scan(&rows))
	require.Equal(t, 3, rows)
	_, _, err := f.store.GetContent(ctx, f.org.ID, "zz")
	require.ErrorIs(t, err, entrystore.ErrNotFound)
}

func TestCheckpoints(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	leaf := f.append(t, "", "root")
	cp := func(seq int) (entrystore.Checkpoint, error) {
		return f.store.AppendCheckpoint(ctx, entrystore.Checkpoint{OrgID: f.org.ID, ExecutionID: f.exec.ID,
			Sequence: seq, LeafEntryID: leaf.ID, State: []byte(fmt.Sprintf(`{"turn":%d}`, seq))})
	}
	_, err := f.store.LatestCheckpoint(ctx, f.org.ID, f.exec.ID)
	require.ErrorIs(t, err, entrystore.ErrNotFound)
	for _, seq := range []int{0, 1, 2, 5} {
		c, err := cp(seq)
		require.NoError(t, err)
		require.Equal(t, leaf.ID, c.LeafEntryID)
	}
	for _, seq := range []int{5, 3, 0} {
		_, err := cp(seq)
		require.ErrorIs(t, err, entrystore.ErrConflict, "seq %d", seq)
	}
	// A second sequence 0, while the row still says 0, is a conflict too.
	zero, err := f.store.CreateExecution(ctx, entrystore.Execution{OrgID: f.org.ID, Kind: entrystore.DefaultKind})
	require.NoError(t, err)
	for i, want := range []error{nil, entrystore.ErrConflict} {
		_, err := f.store.AppendCheckpoint(ctx, entrystore.Checkpoint{OrgID: f.org.ID, ExecutionID: zero.ID, Sequence: 0})
		if want == nil {
			require.NoError(t, err)
		} else {
			require.ErrorIs(t, err, want, "attempt %d", i)
		}
	}
	latest, err := f.store.LatestCheckpoint(ctx, f.org.ID, f.exec.ID)
	require.NoError(t, err)
	require.Equal(t, 5, latest.Sequence)
	require.JSONEq(t, `{"turn":5}`, string(latest.State))
	e, err := f.store.GetExecution(ctx, f.org.ID, f.exec.ID)
	require.NoError(t, err)
	require.Equal(t, 5, e.CheckpointSeq)
	two, err := f.store.GetCheckpoint(ctx, f.org.ID, f.exec.ID, 2)
	require.NoError(t, err)
	require.Equal(t, 2, two.Sequence)

	first, next, err := f.store.ListCheckpoints(ctx, f.org.ID, f.exec.ID, entrystore.Page{Limit: 3})
	require.NoError(t, err)
	require.Equal(t, []int{0, 1, 2}, []int{first[0].Sequence, first[1].Sequence, first[2].Sequence})
	rest, next, err := f.store.ListCheckpoints(ctx, f.org.ID, f.exec.ID, entrystore.Page{Limit: 3, Cursor: next})
	require.NoError(t, err)
	require.Len(t, rest, 1)
	require.Empty(t, next)

	other, err := f.store.CreateExecution(ctx, entrystore.Execution{OrgID: f.org.ID, Kind: "k"})
	require.NoError(t, err)
	_, err = f.store.AppendCheckpoint(ctx, entrystore.Checkpoint{OrgID: f.org.ID, ExecutionID: other.ID, Sequence: 1, LeafEntryID: leaf.ID})
	require.ErrorIs(t, err, entrystore.ErrInvalid, "leaf of another execution")
}

func TestConcurrentCheckpointsKeepSequenceIncreasing(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	var wg sync.WaitGroup
	errs := make([]error, 10)
	for seq := range errs {
		wg.Go(func() {
			_, errs[seq] = f.store.AppendCheckpoint(ctx, entrystore.Checkpoint{OrgID: f.org.ID, ExecutionID: f.exec.ID, Sequence: seq})
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			require.ErrorIs(t, err, entrystore.ErrConflict)
		}
	}
	cs, _, err := f.store.ListCheckpoints(ctx, f.org.ID, f.exec.ID, entrystore.Page{})
	require.NoError(t, err)
	require.NotEmpty(t, cs)
	require.Equal(t, 9, cs[len(cs)-1].Sequence, "the highest always lands")
	e, err := f.store.GetExecution(ctx, f.org.ID, f.exec.ID)
	require.NoError(t, err)
	require.Equal(t, cs[len(cs)-1].Sequence, e.CheckpointSeq)
}

func TestSignals(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	root := f.append(t, "", "root")
	var sigs []entrystore.Signal
	for i := range 3 {
		sg, err := f.store.PutSignal(ctx, entrystore.Signal{OrgID: f.org.ID, ExecutionID: f.exec.ID,
			Name: "user_message", Value: []byte(fmt.Sprintf(`{"text":"m%d"}`, i))})
		require.NoError(t, err)
		sigs = append(sigs, sg)
	}
	pending, err := f.store.PendingSignals(ctx, f.org.ID, f.exec.ID)
	require.NoError(t, err)
	require.Equal(t, sigs, pending, "arrival order")

	entry := entrystore.Entry{ParentID: root.ID, Type: "message", Role: "user", Content: sigs[0].Value}
	e1, err := f.store.ConsumeSignal(ctx, f.org.ID, sigs[0].ID, entry)
	require.NoError(t, err)
	e2, err := f.store.ConsumeSignal(ctx, f.org.ID, sigs[0].ID, entry)
	require.NoError(t, err)
	require.Equal(t, e1, e2, "repeat-safe")
	got, err := f.store.GetSignal(ctx, f.org.ID, sigs[0].ID)
	require.NoError(t, err)
	require.True(t, got.Consumed)

	// A failed append leaves the signal unconsumed: one transaction.
	_, err = f.store.ConsumeSignal(ctx, f.org.ID, sigs[1].ID, entrystore.Entry{ParentID: "bad", Type: "message"})
	require.ErrorIs(t, err, entrystore.ErrInvalid)
	got, err = f.store.GetSignal(ctx, f.org.ID, sigs[1].ID)
	require.NoError(t, err)
	require.False(t, got.Consumed)

	require.NoError(t, f.store.MarkSignalsConsumed(ctx, f.org.ID, sigs[1].ID, sigs[2].ID, sigs[2].ID))
	pending, err = f.store.PendingSignals(ctx, f.org.ID, f.exec.ID)
	require.NoError(t, err)
	require.Empty(t, pending)
	require.ErrorIs(t, f.store.MarkSignalsConsumed(ctx, f.org.ID, "5b0d7d8e-7c43-4c49-9d0f-2b6d1b8f0a11"), entrystore.ErrNotFound)
}

func TestToolCalls(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	asst := f.append(t, "", "assistant")
	result := f.append(t, asst.ID, "result")
	running, err := f.store.RecordToolCall(ctx, entrystore.ToolCall{OrgID: f.org.ID, ExecutionID: f.exec.ID,
		MessageID: asst.ID, ToolCallID: "call_1", ToolName: "search", Input: []byte(`{"q":"x"}`), StepNumber: 2})
	require.NoError(t, err)
	require.Equal(t, entrystore.ToolCallRunning, running.Status)

	sha, _, err := f.store.PutContent(ctx, f.org.ID, []byte("full output"), "")
	require.NoError(t, err)
	done, err := f.store.RecordToolCall(ctx, entrystore.ToolCall{OrgID: f.org.ID, ExecutionID: f.exec.ID,
		MessageID: asst.ID, ToolCallID: "call_1", ToolName: "search", Status: entrystore.ToolCallCompleted,
		ResultEntryID: result.ID, Output: []byte(`"ok"`), OutputSHA256: sha, OutputSize: 11, Truncated: true, DurationMs: 40})
	require.NoError(t, err)
	require.Equal(t, running.ID, done.ID)
	require.Equal(t, entrystore.ToolCallCompleted, done.Status)
	require.Equal(t, result.ID, done.ResultEntryID)
	require.Equal(t, sha, done.OutputSHA256)
	require.JSONEq(t, `{"q":"x"}`, string(done.Input))

	// A late "running" (a retried start) does not undo the end.
	again, err := f.store.RecordToolCall(ctx, entrystore.ToolCall{OrgID: f.org.ID, ExecutionID: f.exec.ID,
		MessageID: asst.ID, ToolCallID: "call_1", ToolName: "search", Status: entrystore.ToolCallRunning})
	require.NoError(t, err)
	require.Equal(t, entrystore.ToolCallCompleted, again.Status)

	for i, name := range []string{"fetch", "search", "fetch"} {
		_, err := f.store.RecordToolCall(ctx, entrystore.ToolCall{OrgID: f.org.ID, ExecutionID: f.exec.ID,
			MessageID: asst.ID, ToolCallID: fmt.Sprintf("call_%d", i+2), ToolName: name, Status: entrystore.ToolCallError, StepNumber: i})
		require.NoError(t, err)
	}
	all, _, err := f.store.ListToolCalls(ctx, f.org.ID, f.exec.ID, entrystore.ToolCallFilter{}, entrystore.Page{Limit: 2})
	require.NoError(t, err)
	require.Equal(t, []int{0, 1}, []int{all[0].StepNumber, all[1].StepNumber})
	fetches, next, err := f.store.ListToolCalls(ctx, f.org.ID, f.exec.ID, entrystore.ToolCallFilter{ToolName: "fetch"}, entrystore.Page{Limit: 1})
	require.NoError(t, err)
	require.Len(t, fetches, 1)
	more, next, err := f.store.ListToolCalls(ctx, f.org.ID, f.exec.ID, entrystore.ToolCallFilter{ToolName: "fetch"}, entrystore.Page{Limit: 1, Cursor: next})
	require.NoError(t, err)
	require.Len(t, more, 1)
	require.Equal(t, 2, more[0].StepNumber)
	require.Empty(t, next)
	errs, _, err := f.store.ListToolCalls(ctx, f.org.ID, f.exec.ID, entrystore.ToolCallFilter{Status: entrystore.ToolCallError}, entrystore.Page{})
	require.NoError(t, err)
	require.Len(t, errs, 3)
}

func TestStreamEvents(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	conn, err := pgx.ConnectConfig(ctx, f.store.Pool().Config().ConnConfig)
	require.NoError(t, err)
	defer conn.Close(ctx)
	require.NoError(t, entrystore.ListenStream(ctx, conn))

	// Another schema's event, committed first, must not reach this
	// listener: parallel test packages share the database.
	other := newFixture(t)
	_, err = other.store.AppendStreamEvent(ctx, other.org.ID, other.exec.ID, "token", []byte(`{}`))
	require.NoError(t, err)

	var evs []entrystore.StreamEvent
	for i := range 3 {
		ev, err := f.store.AppendStreamEvent(ctx, f.org.ID, f.exec.ID, "token", []byte(fmt.Sprintf(`{"i":%d}`, i)))
		require.NoError(t, err)
		evs = append(evs, ev)
	}
	waitCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for _, ev := range evs {
		// The channel is the database's, shared with every test running
		// at the same time: skip other executions' notifications.
		var exec string
		var id int64
		for exec != f.exec.ID {
			n, err := conn.WaitForNotification(waitCtx)
			require.NoError(t, err)
			var ok bool
			exec, id, ok = entrystore.ParseStreamNotification(n.Payload)
			require.True(t, ok, "payload %q", n.Payload)
		}
		require.Equal(t, ev.ID, id)
	}
	for _, bad := range []string{"", "x", ":5", "e1:", "e1:x"} {
		_, _, ok := entrystore.ParseStreamNotification(bad)
		require.False(t, ok, "payload %q", bad)
	}
	after, err := f.store.StreamEventsAfter(ctx, f.org.ID, f.exec.ID, evs[0].ID, 10)
	require.NoError(t, err)
	require.Equal(t, evs[1:], after)

	n, err := f.store.PruneStreamEvents(ctx, evs[2].CreatedAt.Add(time.Second))
	require.NoError(t, err)
	require.Equal(t, int64(3), n)
	after, err = f.store.StreamEventsAfter(ctx, f.org.ID, f.exec.ID, 0, 10)
	require.NoError(t, err)
	require.Empty(t, after)
}

func TestAnotherOrgSeesNothing(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	other, err := f.store.CreateOrg(ctx, "other", "Other")
	require.NoError(t, err)
	o := other.ID

	entry := f.append(t, "", "root")
	def, err := f.store.CreateDefinition(ctx, entrystore.Definition{OrgID: f.org.ID, Name: "D", Slug: "d"})
	require.NoError(t, err)
	_, err = f.store.AppendCheckpoint(ctx, entrystore.Checkpoint{OrgID: f.org.ID, ExecutionID: f.exec.ID, Sequence: 1})
	require.NoError(t, err)
	sha, _, err := f.store.PutContent(ctx, f.org.ID, []byte("secret"), "")
	require.NoError(t, err)
	tc, err := f.store.RecordToolCall(ctx, entrystore.ToolCall{OrgID: f.org.ID, ExecutionID: f.exec.ID,
		MessageID: entry.ID, ToolCallID: "c", ToolName: "t"})
	require.NoError(t, err)
	sg, err := f.store.PutSignal(ctx, entrystore.Signal{OrgID: f.org.ID, ExecutionID: f.exec.ID, Name: "s"})
	require.NoError(t, err)

	reads := map[string]func() error{
		"execution":  func() error { _, err := f.store.GetExecution(ctx, o, f.exec.ID); return err },
		"entry":      func() error { _, err := f.store.GetEntry(ctx, o, entry.ID); return err },
		"entry key":  func() error { _, err := f.store.GetEntryByKey(ctx, o, f.exec.ID, "root"); return err },
		"path":       func() error { _, err := f.store.Path(ctx, o, entry.ID); return err },
		"children":   func() error { _, err := f.store.Children(ctx, o, entry.ID); return err },
		"checkpoint": func() error { _, err := f.store.LatestCheckpoint(ctx, o, f.exec.ID); return err },
		"checkpoint seq": func() error {
			_, err := f.store.GetCheckpoint(ctx, o, f.exec.ID, 1)
			return err
		},
		"content":      func() error { _, _, err := f.store.GetContent(ctx, o, sha); return err },
		"content size": func() error { _, err := f.store.ContentSize(ctx, o, sha); return err },
		"tool call":    func() error { _, err := f.store.GetToolCall(ctx, o, tc.ID); return err },
		"signal":       func() error { _, err := f.store.GetSignal(ctx, o, sg.ID); return err },
		"definition":   func() error { _, err := f.store.GetDefinition(ctx, o, def.ID); return err },
		"update status": func() error {
			_, err := f.store.Transition(ctx, o, f.exec.ID, entrystore.Transition{To: entrystore.StatusRunning})
			return err
		},
		"add steps":  func() error { return f.store.AddSteps(ctx, o, f.exec.ID, 1) },
		"delete def": func() error { return f.store.DeleteDefinition(ctx, o, def.ID) },
		"consume signal": func() error {
			_, err := f.store.ConsumeSignal(ctx, o, sg.ID, entrystore.Entry{Type: "message"})
			return err
		},
		"put signal": func() error {
			_, err := f.store.PutSignal(ctx, entrystore.Signal{OrgID: o, ExecutionID: f.exec.ID, Name: "s"})
			return err
		},
		"stream": func() error {
			_, err := f.store.AppendStreamEvent(ctx, o, f.exec.ID, "token", nil)
			return err
		},
	}
	for name, read := range reads {
		err := read()
		require.True(t, errors.Is(err, entrystore.ErrNotFound), "%s: %v", name, err)
	}
	for name, list := range map[string]func() (int, error){
		"entries": func() (int, error) {
			es, _, err := f.store.ListEntries(ctx, o, f.exec.ID, entrystore.Page{})
			return len(es), err
		},
		"checkpoints": func() (int, error) {
			cs, _, err := f.store.ListCheckpoints(ctx, o, f.exec.ID, entrystore.Page{})
			return len(cs), err
		},
		"tool calls": func() (int, error) {
			ts, _, err := f.store.ListToolCalls(ctx, o, f.exec.ID, entrystore.ToolCallFilter{}, entrystore.Page{})
			return len(ts), err
		},
		"signals": func() (int, error) {
			ss, err := f.store.PendingSignals(ctx, o, f.exec.ID)
			return len(ss), err
		},
		"executions": func() (int, error) {
			es, _, err := f.store.ListExecutions(ctx, o, entrystore.ExecutionFilter{}, entrystore.Page{})
			return len(es), err
		},
	} {
		n, err := list()
		require.NoError(t, err, name)
		require.Zero(t, n, name)
	}
	_, _, err = f.store.AppendEntry(ctx, entrystore.Entry{OrgID: o, ExecutionID: f.exec.ID, Type: "m", IdempotencyKey: "x"})
	require.ErrorIs(t, err, entrystore.ErrNotFound)
}

// TestNotifyChannelPerSchema: the channel names the schema, and a schema
// name too long to fit Postgres's 63-byte channel limit is hashed instead.
func TestNotifyChannelPerSchema(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	conn, err := pgx.ConnectConfig(ctx, f.store.Pool().Config().ConnConfig)
	require.NoError(t, err)
	defer conn.Close(ctx)
	var schema string
	require.NoError(t, conn.QueryRow(ctx, "SELECT current_schema()").Scan(&schema))
	channel, err := entrystore.NotifyChannel(ctx, conn)
	require.NoError(t, err)
	require.Equal(t, entrystore.NotifyChannelPrefix+"."+schema, channel)

	long := schema + strings.Repeat("_x", 20) // unique, as its prefix is
	_, err = conn.Exec(ctx, `CREATE SCHEMA `+long)
	require.NoError(t, err)
	defer func() { _, _ = conn.Exec(context.WithoutCancel(ctx), `DROP SCHEMA `+long) }()
	_, err = conn.Exec(ctx, `SET search_path = `+long)
	require.NoError(t, err)
	channel, err = entrystore.NotifyChannel(ctx, conn)
	require.NoError(t, err)
	require.LessOrEqual(t, len(channel), 63)
	require.Regexp(t, `^agentree_stream\.[0-9a-f]{32}$`, channel)
}

// ReplaceCheckpoint rewrites only the latest checkpoint, at its own
// sequence, with a leaf of the execution; the execution's current
// checkpoint stays that sequence.
func TestReplaceCheckpoint(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	a := f.append(t, "", "a")
	b := f.append(t, a.ID, "b")
	for seq := range 2 {
		_, err := f.store.AppendCheckpoint(ctx, entrystore.Checkpoint{OrgID: f.org.ID, ExecutionID: f.exec.ID, Sequence: seq, LeafEntryID: a.ID})
		require.NoError(t, err)
	}
	replace := func(seq int, leaf string) (entrystore.Checkpoint, error) {
		return f.store.ReplaceCheckpoint(ctx, entrystore.Checkpoint{OrgID: f.org.ID, ExecutionID: f.exec.ID,
			Sequence: seq, LeafEntryID: leaf, State: []byte(`{"turn":9}`), Metadata: []byte(`{"reason":"turn"}`)})
	}
	_, err := replace(0, b.ID)
	require.ErrorIs(t, err, entrystore.ErrNotFound, "not the latest")
	other, err := f.store.CreateExecution(ctx, entrystore.Execution{OrgID: f.org.ID, Kind: "k"})
	require.NoError(t, err)
	foreign, _, err := f.store.AppendEntry(ctx, entrystore.Entry{OrgID: f.org.ID, ExecutionID: other.ID, Type: "message", Role: "user",
		Content: []byte(`{"text":"x"}`), IdempotencyKey: "x"})
	require.NoError(t, err)
	_, err = replace(1, foreign.ID)
	require.ErrorIs(t, err, entrystore.ErrNotFound, "a leaf of another execution")

	c, err := replace(1, b.ID)
	require.NoError(t, err)
	require.Equal(t, b.ID, c.LeafEntryID)
	latest, err := f.store.LatestCheckpoint(ctx, f.org.ID, f.exec.ID)
	require.NoError(t, err)
	require.Equal(t, 1, latest.Sequence)
	require.Equal(t, b.ID, latest.LeafEntryID)
	require.JSONEq(t, `{"turn":9}`, string(latest.State))
	zero, err := f.store.GetCheckpoint(ctx, f.org.ID, f.exec.ID, 0)
	require.NoError(t, err)
	require.Equal(t, a.ID, zero.LeafEntryID, "earlier checkpoints stay")
	e, err := f.store.GetExecution(ctx, f.org.ID, f.exec.ID)
	require.NoError(t, err)
	require.Equal(t, 1, e.CheckpointSeq)
}

// A record linked to its result entry keeps no copy of the result's text:
// the column is empty and every read gives the entry's text and error
// flag, as the record had them. Until the link, the record holds them
// (parallel calls' outcomes wait there to be appended).
func TestLinkedToolCallOutputIsReadFromItsEntry(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	asst := f.append(t, "", "assistant")
	text := strings.Repeat("a large tool output ", 50)
	result, _, err := f.store.AppendEntry(ctx, entrystore.Entry{OrgID: f.org.ID, ExecutionID: f.exec.ID, ParentID: asst.ID,
		Type: "message", Role: "tool_result", IdempotencyKey: "result",
		Content: []byte(`{"role":"tool_result","content":[{"type":"text","text":"` + text + `"}],"toolCallId":"call_1","isError":true}`)})
	require.NoError(t, err)
	output := []byte(`{"text":"` + text + `","isError":true}`)
	ended, err := f.store.RecordToolCall(ctx, entrystore.ToolCall{OrgID: f.org.ID, ExecutionID: f.exec.ID,
		MessageID: asst.ID, ToolCallID: "call_1", ToolName: "search", Status: entrystore.ToolCallError, Output: output})
	require.NoError(t, err)
	require.JSONEq(t, string(output), string(ended.Output), "unlinked: the record holds it")

	linked, err := f.store.RecordToolCall(ctx, entrystore.ToolCall{OrgID: f.org.ID, ExecutionID: f.exec.ID,
		MessageID: asst.ID, ToolCallID: "call_1", ToolName: "search", Status: entrystore.ToolCallError, Output: output, ResultEntryID: result.ID})
	require.NoError(t, err)
	require.JSONEq(t, string(output), string(linked.Output))
	var stored *string
	require.NoError(t, f.store.Pool().QueryRow(ctx, `SELECT output::text FROM agent_tool_call WHERE id = $1`, linked.ID).Scan(&stored))
	require.Nil(t, stored, "no second copy")
	got, err := f.store.GetToolCall(ctx, f.org.ID, linked.ID)
	require.NoError(t, err)
	require.JSONEq(t, string(output), string(got.Output))
	list, _, err := f.store.ListToolCalls(ctx, f.org.ID, f.exec.ID, entrystore.ToolCallFilter{}, entrystore.Page{})
	require.NoError(t, err)
	require.JSONEq(t, string(output), string(list[0].Output))

	// An error record without a text (a cancelled call) keeps its own.
	cancelled, err := f.store.RecordToolCall(ctx, entrystore.ToolCall{OrgID: f.org.ID, ExecutionID: f.exec.ID,
		MessageID: asst.ID, ToolCallID: "call_2", ToolName: "search", Status: entrystore.ToolCallCancelled,
		Output: []byte(`{"error":"context canceled"}`), ResultEntryID: result.ID})
	require.NoError(t, err)
	require.JSONEq(t, `{"error":"context canceled"}`, string(cancelled.Output))
}
