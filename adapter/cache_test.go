package adapter

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/pgtest"
	"github.com/agentree/agentree/internal/step"
)

// countingStore is pgStore counting its path reads and the entries they
// return.
type countingStore struct {
	pgStore
	whole, after, rows atomic.Int64
}

func (s *countingStore) ContextPath(ctx context.Context, orgID, leafID string) ([]agentsdk.Entry, error) {
	s.whole.Add(1)
	es, err := s.pgStore.ContextPath(ctx, orgID, leafID)
	s.rows.Add(int64(len(es)))
	return es, err
}

func (s *countingStore) PathAfter(ctx context.Context, orgID, executionID, leafID string, afterDepth int) ([]agentsdk.Entry, bool, error) {
	s.after.Add(1)
	es, ok, err := s.pgStore.PathAfter(ctx, orgID, executionID, leafID, afterDepth)
	s.rows.Add(int64(len(es)))
	return es, ok, err
}

// TestContextCacheReadsOnlyWhatIsNew walks a 40-turn conversation that
// compacts every 10 turns the way model calls do — each call's leaf a few
// entries below the last — and checks that after the first call each
// reads only the new entries, and that every request is the one a fresh
// read of the context makes: across compactions, on a fork, and for
// another organization, which gets nothing.
func TestContextCacheReadsOnlyWhatIsNew(t *testing.T) {
	ctx := context.Background()
	es := entrystore.New(pgtest.New(t))
	org, err := es.CreateOrg(ctx, "cache", "Cache")
	require.NoError(t, err)
	leaf := compactedConversation(t, es, org.ID, 40)
	full, err := es.Path(ctx, org.ID, leaf)
	require.NoError(t, err)
	execution := full[0].ExecutionID
	model := agentsdk.ModelRef{Provider: "scripted", ModelID: "scripted-1"}
	cfg := agentsdk.Config{}.WithDefaults()

	s := &countingStore{pgStore: pgStore{es: es}}
	cache := step.NewCache(0)
	// want is the request a model call at leaf sends, read fresh.
	want := func(leaf string) []agentsdk.Message {
		path, err := pgStore{es: es}.ContextPath(ctx, org.ID, leaf)
		require.NoError(t, err)
		req, err := step.Request(cfg, model, path, nil)
		require.NoError(t, err)
		return req.Messages
	}
	// handed are the requests handed out, by leaf: the record grows in
	// place after them, and none may change.
	handed := map[string][]agentsdk.Message{}
	check := func(leaf string) {
		t.Helper()
		v, _, err := cache.View(ctx, s, org.ID, execution, leaf)
		require.NoError(t, err)
		got, err := v.Messages()
		require.NoError(t, err)
		require.Equal(t, want(leaf), got)
		handed[leaf] = got
	}

	// Calls from depth 20 on, three entries apart (a tool call's answer,
	// its result, the next answer): 50 calls, over three compactions.
	calls, last := 0, ""
	for d := 20; d < len(full); d += 3 {
		last = full[d].ID
		check(last)
		calls++
	}
	require.EqualValues(t, 1, s.whole.Load(), "only the first call reads the context whole")
	require.EqualValues(t, calls-1, s.after.Load())
	require.LessOrEqual(t, s.rows.Load(), int64(len(full)), "each entry is read about once")
	for leaf, msgs := range handed {
		require.Equal(t, want(leaf), msgs, "a request handed out before the record grew")
	}

	// Calls of one execution at once, at leaves along the path (a lost
	// task's re-run beside its successor): each gets its own leaf's
	// request, and nothing races (go test -race).
	concurrent := step.NewCache(0)
	wants := map[string][]agentsdk.Message{}
	for d := 20; d < len(full); d += 2 {
		wants[full[d].ID] = want(full[d].ID)
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(wants))
	for leaf := range wants {
		wg.Add(1)
		go func(leaf string) {
			defer wg.Done()
			v, _, err := concurrent.View(ctx, s, org.ID, execution, leaf)
			if err == nil {
				var got []agentsdk.Message
				if got, err = v.Messages(); err == nil && !reflect.DeepEqual(got, wants[leaf]) {
					err = fmt.Errorf("leaf %s: not the request a fresh read makes", leaf)
				}
			}
			errs <- err
		}(leaf)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}

	// The same leaf again (a retried call) reads nothing.
	rows := s.rows.Load()
	check(last)
	require.Equal(t, rows, s.rows.Load())

	// A fork: a user message edited ten entries up. Its leaf does not
	// extend the cached one, so the context is read whole.
	forked, _, err := es.AppendEntry(ctx, entrystore.Entry{OrgID: org.ID, ExecutionID: execution, ParentID: full[len(full)-10].ID,
		Type: "message", Role: "user", Content: mustJSON(t, agentsdk.TextMessage(agentsdk.RoleUser, "Actually, something else.")), IdempotencyKey: "fork"})
	require.NoError(t, err)
	whole := s.whole.Load()
	check(forked.ID)
	require.Equal(t, whole+1, s.whole.Load())

	// Another organization naming the execution gets not found, not the
	// cached context.
	other, err := es.CreateOrg(ctx, "other", "Other")
	require.NoError(t, err)
	_, _, err = cache.View(ctx, s, other.ID, execution, forked.ID)
	require.ErrorIs(t, err, agentsdk.ErrNotFound)

	// A cache too small for two executions evicts the older: its next
	// call reads whole again.
	small := step.NewCache(1)
	second := compactedConversation(t, es, org.ID, 3)
	s.whole.Store(0)
	_, _, err = small.View(ctx, s, org.ID, execution, forked.ID)
	require.NoError(t, err)
	secondPath, err := es.Path(ctx, org.ID, second)
	require.NoError(t, err)
	_, _, err = small.View(ctx, s, org.ID, secondPath[0].ExecutionID, second)
	require.NoError(t, err)
	_, _, err = small.View(ctx, s, org.ID, execution, forked.ID)
	require.NoError(t, err)
	require.EqualValues(t, 3, s.whole.Load())
}

// TestContextCacheSharesAPathNoCompactionCut walks a conversation whose
// cached path its view shares (no compaction has cut it: every entry is
// sent) through an entry that is not sent (an llm_call) and then a
// compaction, and checks that every request and its token count are the
// ones a fresh read makes, and that none handed out changes as the
// record grows past it.
func TestContextCacheSharesAPathNoCompactionCut(t *testing.T) {
	ctx := context.Background()
	es := entrystore.New(pgtest.New(t))
	org, err := es.CreateOrg(ctx, "shared", "Shared")
	require.NoError(t, err)
	s := pgStore{es: es}
	cfg := agentsdk.Config{}.WithDefaults()
	cache := step.NewCache(0)
	handed := map[string][]agentsdk.Message{}
	fresh := func(leaf string) ([]agentsdk.Message, int, []agentsdk.Entry) {
		path, err := s.ContextPath(ctx, org.ID, leaf)
		require.NoError(t, err)
		v, err := step.ViewOf(path)
		require.NoError(t, err)
		msgs, err := v.Messages()
		require.NoError(t, err)
		return msgs, v.Tokens(cfg.SystemPrompt, nil), path
	}
	check := func(execution, leaf string) {
		t.Helper()
		v, path, err := cache.View(ctx, s, org.ID, execution, leaf)
		require.NoError(t, err)
		got, err := v.Messages()
		require.NoError(t, err)
		want, tokens, wantPath := fresh(leaf)
		require.Equal(t, want, got)
		require.Equal(t, tokens, v.Tokens(cfg.SystemPrompt, nil))
		require.Equal(t, wantPath, path)
		handed[leaf] = got
	}
	// Twelve turns: a compaction after the tenth.
	leaf := compactedConversation(t, es, org.ID, 12)
	full, err := es.Path(ctx, org.ID, leaf)
	require.NoError(t, err)
	execution := full[0].ExecutionID
	compacted := slices.IndexFunc(full, func(e entrystore.Entry) bool { return e.Type == string(agentsdk.EntryCompaction) })
	require.Positive(t, compacted)

	// Up to the compaction's parent, with an entry that is not sent (an
	// llm_call, as a compaction's summary call leaves) and a user message
	// under it on a branch of the fifth turn.
	for d := range full[:compacted] {
		if full[d].Role != "assistant" {
			check(execution, full[d].ID)
		}
		if d == 20 {
			call, _, err := es.AppendEntry(ctx, entrystore.Entry{OrgID: org.ID, ExecutionID: execution, ParentID: full[d].ID,
				Type: string(agentsdk.EntryLLMCall), Content: json.RawMessage(`{}`), IdempotencyKey: "side-llm"})
			require.NoError(t, err)
			user, _, err := es.AppendEntry(ctx, entrystore.Entry{OrgID: org.ID, ExecutionID: execution, ParentID: call.ID,
				Type: "message", Role: "user", Content: mustJSON(t, agentsdk.TextMessage(agentsdk.RoleUser, "A side question.")), IdempotencyKey: "side-user"})
			require.NoError(t, err)
			check(execution, user.ID)
			// Back on the main line: the cached path no longer leads there.
			check(execution, full[d].ID)
		}
	}
	// Across the compaction and on.
	for d := compacted; d < len(full); d++ {
		check(execution, full[d].ID)
	}
	// Past heldMessagesFrom entries, on a path no compaction cut (a view
	// that holds its messages decoded) and on the compacted one.
	ex2, err := es.CreateExecution(ctx, entrystore.Execution{OrgID: org.ID, Kind: entrystore.DefaultKind})
	require.NoError(t, err)
	long := map[string]string{ex2.ID: "", execution: full[len(full)-1].ID}
	for i := range 80 {
		for ex, parent := range long {
			role, text := agentsdk.RoleUser, fmt.Sprintf("Question %d.", i)
			if i%2 == 1 {
				role, text = agentsdk.RoleAssistant, fmt.Sprintf("Answer %d.", i)
			}
			e, _, err := es.AppendEntry(ctx, entrystore.Entry{OrgID: org.ID, ExecutionID: ex, ParentID: parent, Type: "message", Role: string(role),
				Content: mustJSON(t, agentsdk.TextMessage(role, text)), IdempotencyKey: fmt.Sprintf("long-%d", i)})
			require.NoError(t, err)
			long[ex] = e.ID
			check(ex, e.ID)
		}
	}
	for leaf, msgs := range handed {
		want, _, _ := fresh(leaf)
		require.Equal(t, want, msgs, "a request handed out before the record grew")
	}
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}
