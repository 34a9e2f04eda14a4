package entrystore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/pgtest"
)

// TestWorkerCapabilities: a record is live until its lease runs out,
// re-recording replaces it and keeps its start, a delete removes it, and
// bad records are refused.
func TestWorkerCapabilities(t *testing.T) {
	ctx := context.Background()
	s := entrystore.New(pgtest.New(t))
	w := entrystore.WorkerCapability{
		Identity: "1@host@", TaskQueue: "q1", Namespace: "default", Version: "v1", Kinds: []string{"react-agent"},
		Tools:  []entrystore.CapabilityTool{{Name: "echo", Description: "Echoes.", Parameters: json.RawMessage(`{"type":"object"}`)}},
		Models: []entrystore.CapabilityModels{{Name: "scripted", Provider: "scripted", Models: []string{"*"}}},
	}
	require.NoError(t, s.RecordCapability(ctx, w, time.Hour))
	short := w
	short.TaskQueue, short.Tools, short.Models = "q2", nil, nil
	require.NoError(t, s.RecordCapability(ctx, short, 50*time.Millisecond))

	live, err := s.LiveCapabilities(ctx)
	require.NoError(t, err)
	require.Len(t, live, 2)
	first := live[0]
	require.Equal(t, "q1", first.TaskQueue)
	require.Len(t, first.Tools, 1)
	require.Equal(t, "echo", first.Tools[0].Name)
	require.JSONEq(t, `{"type":"object"}`, string(first.Tools[0].Parameters))
	require.Equal(t, w.Models, first.Models)
	require.Equal(t, []entrystore.CapabilityTool{}, live[1].Tools, "none is an empty list, not null")

	// q2's lease runs out; q1's does not.
	require.Eventually(t, func() bool {
		live, err = s.LiveCapabilities(ctx)
		require.NoError(t, err)
		return len(live) == 1
	}, 10*time.Second, 10*time.Millisecond)
	require.Equal(t, "q1", live[0].TaskQueue)

	// Re-recording replaces what the worker serves and keeps when it
	// started.
	w.Version, w.Tools = "v2", nil
	require.NoError(t, s.RecordCapability(ctx, w, time.Hour))
	live, err = s.LiveCapabilities(ctx)
	require.NoError(t, err)
	require.Len(t, live, 1)
	require.Equal(t, "v2", live[0].Version)
	require.Empty(t, live[0].Tools)
	require.True(t, live[0].StartedAt.Equal(first.StartedAt))
	require.False(t, live[0].LastSeen.Before(first.LastSeen))

	require.NoError(t, s.DeleteCapability(ctx, w.Identity, w.TaskQueue))
	live, err = s.LiveCapabilities(ctx)
	require.NoError(t, err)
	require.Empty(t, live)

	require.ErrorIs(t, s.RecordCapability(ctx, entrystore.WorkerCapability{TaskQueue: "q"}, time.Hour), entrystore.ErrInvalid)
	require.ErrorIs(t, s.RecordCapability(ctx, w, 0), entrystore.ErrInvalid)
}

// BenchmarkLiveCapabilities lists 20 live workers with 10 tools each: the
// query a gateway runs at most once per cache period (1 s by default), not
// per create.
func BenchmarkLiveCapabilities(b *testing.B) {
	ctx := context.Background()
	s := entrystore.New(pgtest.New(b))
	tools := make([]entrystore.CapabilityTool, 10)
	for i := range tools {
		tools[i] = entrystore.CapabilityTool{Name: fmt.Sprintf("tool_%d", i), Description: "Does a thing.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)}
	}
	for i := range 20 {
		require.NoError(b, s.RecordCapability(ctx, entrystore.WorkerCapability{
			Identity: fmt.Sprintf("%d@host@", i), TaskQueue: fmt.Sprintf("q%d", i%4), Kinds: []string{"react-agent"}, Tools: tools,
			Models: []entrystore.CapabilityModels{{Name: "anthropic", Provider: "anthropic", Models: []string{"*"}}},
		}, time.Hour))
	}
	for b.Loop() {
		live, err := s.LiveCapabilities(ctx)
		if err != nil || len(live) != 20 {
			b.Fatalf("%d live, %v", len(live), err)
		}
	}
}
