package storetest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/event"
	"github.com/agentree/agentree/internal/step"
)

// Fixture is a store holding one execution of one organization, made for
// one subtest.
type Fixture struct {
	Store       step.Store
	OrgID       string
	ExecutionID string
	// Config is the execution's frozen configuration as it was created.
	Config agentsdk.Config
}

// Contract runs the store contract; open makes a fresh fixture per
// subtest, whose configuration has a SystemPrompt and a MaxTurns set.
func Contract(t *testing.T, open func(t *testing.T) Fixture) {
	for _, c := range []struct {
		name string
		run  func(t *testing.T, f Fixture)
	}{
		{"ExecutionConfig", frozenConfig},
		{"AppendAndPath", appendAndPath},
		{"IdempotentAppend", idempotentAppend},
		{"Branches", branches},
		{"Missing", missing},
		{"Content", content},
		{"ToolCalls", toolCalls},
		{"Publish", publish},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, open(t)) })
	}
}

func msg(f Fixture, parent string, role agentsdk.Role, text, key string) agentsdk.Entry {
	raw, _ := json.Marshal(agentsdk.TextMessage(role, text))
	return agentsdk.Entry{ExecutionID: f.ExecutionID, ParentID: parent, Type: agentsdk.EntryMessage, Role: role, Content: raw, IdempotencyKey: key}
}

func frozenConfig(t *testing.T, f Fixture) {
	cfg, err := f.Store.ExecutionConfig(context.Background(), f.OrgID, f.ExecutionID)
	require.NoError(t, err)
	require.Equal(t, f.Config.SystemPrompt, cfg.SystemPrompt)
	require.Equal(t, f.Config.MaxTurns, cfg.MaxTurns)
}

// appendAndPath: one append of three entries, the later two parented by
// PrevEntry, makes a chain; the path to its leaf is the chain root first
// with depths, and each entry reads back as written.
func appendAndPath(t *testing.T, f Fixture) {
	ctx := context.Background()
	in := []agentsdk.Entry{
		msg(f, "", agentsdk.RoleUser, "hello", uuid.NewString()),
		msg(f, agentsdk.PrevEntry, agentsdk.RoleAssistant, "hi", uuid.NewString()),
		msg(f, agentsdk.PrevEntry, agentsdk.RoleUser, "again", uuid.NewString()),
	}
	out, err := f.Store.AppendEntries(ctx, f.OrgID, in)
	require.NoError(t, err)
	require.Len(t, out, 3)
	seen := map[string]bool{}
	for i, e := range out {
		require.NotEmpty(t, e.ID)
		require.False(t, seen[e.ID], "entry IDs are distinct")
		seen[e.ID] = true
		if i > 0 {
			require.Equal(t, out[i-1].ID, e.ParentID, "PrevEntry is the entry before")
		}
	}
	require.Empty(t, out[0].ParentID)

	path, err := f.Store.Path(ctx, f.OrgID, out[2].ID)
	require.NoError(t, err)
	require.Len(t, path, 3)
	for i, e := range path {
		require.Equal(t, out[i].ID, e.ID, "root first")
		require.Equal(t, i, e.Depth)
		require.Equal(t, agentsdk.EntryMessage, e.Type)
		require.Equal(t, in[i].Role, e.Role)
		require.JSONEq(t, string(in[i].Content), string(e.Content))
	}
	ctxPath, err := f.Store.ContextPath(ctx, f.OrgID, out[2].ID)
	require.NoError(t, err)
	require.NotEmpty(t, ctxPath)
	require.Equal(t, out[2].ID, ctxPath[len(ctxPath)-1].ID, "a context path ends at its leaf")
	require.Equal(t, path[len(path)-len(ctxPath):], ctxPath, "and is a tail of the path, with depths")

	got, err := f.Store.GetEntry(ctx, f.OrgID, out[1].ID)
	require.NoError(t, err)
	require.Equal(t, out[1].ID, got.ID)
	require.Equal(t, out[0].ID, got.ParentID)
	require.JSONEq(t, string(in[1].Content), string(got.Content))
}

// idempotentAppend: appending an existing key writes nothing and answers
// the first entry, alone or inside a batch whose other entries are new.
func idempotentAppend(t *testing.T, f Fixture) {
	ctx := context.Background()
	key := uuid.NewString()
	first, err := f.Store.AppendEntries(ctx, f.OrgID, []agentsdk.Entry{msg(f, "", agentsdk.RoleUser, "once", key)})
	require.NoError(t, err)
	again, err := f.Store.AppendEntries(ctx, f.OrgID, []agentsdk.Entry{msg(f, "", agentsdk.RoleUser, "once", key)})
	require.NoError(t, err)
	require.Equal(t, first[0].ID, again[0].ID)

	batch, err := f.Store.AppendEntries(ctx, f.OrgID, []agentsdk.Entry{
		msg(f, "", agentsdk.RoleUser, "once", key),
		msg(f, agentsdk.PrevEntry, agentsdk.RoleAssistant, "new", uuid.NewString()),
	})
	require.NoError(t, err)
	require.Equal(t, first[0].ID, batch[0].ID)
	require.Equal(t, first[0].ID, batch[1].ParentID, "PrevEntry after a repeated key is the existing entry")

	byKey, err := f.Store.EntryByKey(ctx, f.OrgID, f.ExecutionID, key)
	require.NoError(t, err)
	require.Equal(t, first[0].ID, byKey.ID)
	_, err = f.Store.EntryByKey(ctx, f.OrgID, f.ExecutionID, uuid.NewString())
	require.ErrorIs(t, err, agentsdk.ErrNotFound)
}

// branches: two children of one entry are two paths that share the root.
func branches(t *testing.T, f Fixture) {
	ctx := context.Background()
	root, err := f.Store.AppendEntries(ctx, f.OrgID, []agentsdk.Entry{msg(f, "", agentsdk.RoleUser, "root", uuid.NewString())})
	require.NoError(t, err)
	var leaves []string
	for _, text := range []string{"left", "right"} {
		out, err := f.Store.AppendEntries(ctx, f.OrgID, []agentsdk.Entry{msg(f, root[0].ID, agentsdk.RoleAssistant, text, uuid.NewString())})
		require.NoError(t, err)
		leaves = append(leaves, out[0].ID)
	}
	require.NotEqual(t, leaves[0], leaves[1])
	for i, leaf := range leaves {
		path, err := f.Store.Path(ctx, f.OrgID, leaf)
		require.NoError(t, err)
		require.Len(t, path, 2, "branch %d", i)
		require.Equal(t, root[0].ID, path[0].ID)
		require.Equal(t, leaf, path[1].ID)
	}
}

// missing: what is not there is agentsdk.ErrNotFound, never an empty
// answer.
func missing(t *testing.T, f Fixture) {
	ctx := context.Background()
	_, err := f.Store.GetEntry(ctx, f.OrgID, uuid.NewString())
	require.ErrorIs(t, err, agentsdk.ErrNotFound)
	_, err = f.Store.Path(ctx, f.OrgID, uuid.NewString())
	require.ErrorIs(t, err, agentsdk.ErrNotFound)
	_, err = f.Store.ToolCall(ctx, f.OrgID, f.ExecutionID, uuid.NewString(), "call_1")
	require.ErrorIs(t, err, agentsdk.ErrNotFound)
}

// content: content is addressed by its sha256 in hex and stored once.
func content(t *testing.T, f Fixture) {
	ctx := context.Background()
	data := []byte("a tool's whole output")
	sum := sha256.Sum256(data)
	sha, err := f.Store.PutContent(ctx, f.OrgID, f.ExecutionID, data, "text/plain")
	require.NoError(t, err)
	require.Equal(t, hex.EncodeToString(sum[:]), sha)
	again, err := f.Store.PutContent(ctx, f.OrgID, f.ExecutionID, data, "text/plain")
	require.NoError(t, err)
	require.Equal(t, sha, again)
	other, err := f.Store.PutContent(ctx, f.OrgID, f.ExecutionID, []byte("another"), "text/plain")
	require.NoError(t, err)
	require.NotEqual(t, sha, other)
}

// toolCalls: a record is upserted by (assistant entry, tool call ID) under
// agentsdk.ToolCallRecord.Merge's rules: it reads back merged, and an
// ended call does not go back to running.
func toolCalls(t *testing.T, f Fixture) {
	ctx := context.Background()
	asked, err := f.Store.AppendEntries(ctx, f.OrgID, []agentsdk.Entry{
		msg(f, "", agentsdk.RoleUser, "look it up", uuid.NewString()),
		msg(f, agentsdk.PrevEntry, agentsdk.RoleAssistant, "calling", uuid.NewString()),
	})
	require.NoError(t, err)
	rec := agentsdk.ToolCallRecord{
		OrgID: f.OrgID, ExecutionID: f.ExecutionID, MessageID: asked[1].ID, ToolCallID: "call_1",
		ToolName: "lookup", Status: agentsdk.ToolRunning, Input: json.RawMessage(`{"q":"x"}`), StepNumber: 1,
	}
	require.NoError(t, f.Store.RecordToolCall(ctx, rec))
	got, err := f.Store.ToolCall(ctx, f.OrgID, f.ExecutionID, asked[1].ID, "call_1")
	require.NoError(t, err)
	require.Equal(t, agentsdk.ToolRunning, got.Status)
	require.Equal(t, "lookup", got.ToolName)
	require.JSONEq(t, `{"q":"x"}`, string(got.Input))

	done := rec
	done.Status, done.Output, done.DurationMs = agentsdk.ToolCompleted, json.RawMessage(`"found"`), 12
	require.NoError(t, f.Store.RecordToolCall(ctx, done))
	late := rec // a retry's stale "running" write after the end
	require.NoError(t, f.Store.RecordToolCall(ctx, late))
	got, err = f.Store.ToolCall(ctx, f.OrgID, f.ExecutionID, asked[1].ID, "call_1")
	require.NoError(t, err)
	require.Equal(t, agentsdk.ToolCompleted, got.Status, "an ended call stays ended")
	require.JSONEq(t, `"found"`, string(got.Output))
	require.JSONEq(t, `{"q":"x"}`, string(got.Input), "fields the later write lacks are kept")
	require.EqualValues(t, 12, got.DurationMs)

	// A start recorded after the end (a re-run beside the run that ended
	// the call) finds the call ended, with its outcome, and so does not
	// run it again.
	starter, ok := f.Store.(step.ToolStarter)
	require.True(t, ok, "the store says what a call's start finds (step.ToolStarter)")
	stood, err := starter.StartToolCall(ctx, late)
	require.NoError(t, err)
	require.Equal(t, agentsdk.ToolCompleted, stood.Status, "a start after the end finds the call ended")
	require.JSONEq(t, `"found"`, string(stood.Output))
	first := rec
	first.ToolCallID = "call_2"
	stood, err = starter.StartToolCall(ctx, first)
	require.NoError(t, err)
	require.Equal(t, agentsdk.ToolRunning, stood.Status, "a first start records the call running")
}

// publish: events are accepted one at a time and as a batch.
func publish(t *testing.T, f Fixture) {
	ctx := context.Background()
	tok := func(s string) event.Event {
		return event.Token{AgentExecutionID: f.ExecutionID, TaskExecutionID: "m1", Data: s}
	}
	require.NoError(t, f.Store.Publish(ctx, f.OrgID, f.ExecutionID, tok("a")))
	require.NoError(t, f.Store.PublishBatch(ctx, f.OrgID, f.ExecutionID, []event.Event{tok("b"), tok("c")}))
}
