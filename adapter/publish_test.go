package adapter

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/anthropic"
	"github.com/agentree/agentree/agentsdk/event"
	"github.com/agentree/agentree/agentsdk/providertest"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/pgtest"
	"github.com/agentree/agentree/internal/step"
)

// These tests run the model step's publishing against Postgres through
// pgStore, the path a worker's model-call activity takes.

const pubModel = "claude-sonnet-4-5-20250929"

// pubCall is one model call ready to run: an execution with a user
// message, and its step input.
type pubCall struct {
	es *entrystore.Store
	in step.ModelInput
}

func newPubCall(t *testing.T, es *entrystore.Store) pubCall {
	t.Helper()
	ctx := context.Background()
	org, err := es.CreateOrg(ctx, "pub-"+uuid.NewString()[:8], "Pub")
	require.NoError(t, err)
	ex, err := es.CreateExecution(ctx, entrystore.Execution{OrgID: org.ID, Kind: entrystore.DefaultKind, Config: json.RawMessage(`{}`)})
	require.NoError(t, err)
	msg, err := json.Marshal(agentsdk.TextMessage(agentsdk.RoleUser, "Count."))
	require.NoError(t, err)
	user, err := es.AppendEntries(ctx, []entrystore.Entry{{OrgID: org.ID, ExecutionID: ex.ID, Type: string(agentsdk.EntryMessage),
		Role: string(agentsdk.RoleUser), Content: msg, IdempotencyKey: "user"}})
	require.NoError(t, err)
	return pubCall{es: es, in: step.ModelInput{
		OrgID: org.ID, ExecutionID: ex.ID, LeafID: user[0].ID, Key: "call-1",
		Model: agentsdk.ModelRef{Provider: "anthropic", ModelID: pubModel},
	}}
}

func (c pubCall) deps(t *testing.T, p agentsdk.Provider, o step.PublishOptions) step.Deps {
	t.Helper()
	eps, err := agentsdk.NewEndpoints(p)
	require.NoError(t, err)
	tools, err := agentsdk.NewTools()
	require.NoError(t, err)
	return step.Deps{Store: pgStore{es: c.es}, Endpoints: eps, Tools: tools, Publish: o}
}

// events are the execution's stream events in the table, oldest first.
func (c pubCall) events(t *testing.T) []entrystore.StreamEvent {
	t.Helper()
	var out []entrystore.StreamEvent
	for {
		var after int64
		if len(out) > 0 {
			after = out[len(out)-1].ID
		}
		page, err := c.es.StreamEventsAfter(context.Background(), c.in.OrgID, c.in.ExecutionID, after, entrystore.MaxPageLimit)
		require.NoError(t, err)
		out = append(out, page...)
		if len(page) < entrystore.MaxPageLimit {
			return out
		}
	}
}

func anthropicAt(t *testing.T, url string) *anthropic.Provider {
	t.Helper()
	p, err := anthropic.New(anthropic.Options{BaseURL: url, APIKey: "sk-ant-test"})
	require.NoError(t, err)
	return p
}

func numbered(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d ", prefix, i)
	}
	return out
}

// tokenText joins the token events' text and checks every one is of the
// call and says where in its text it starts (Offset, merged tokens too),
// so a reader can skip what a retry streams again.
func tokenText(t *testing.T, evs []entrystore.StreamEvent, task string) string {
	t.Helper()
	var b strings.Builder
	for _, ev := range evs {
		if ev.Event != event.NameToken {
			continue
		}
		d, err := event.Decode(ev.Event, ev.Data)
		require.NoError(t, err)
		tok := d.(*event.Token)
		require.Equal(t, task, tok.TaskExecutionID)
		require.Equal(t, b.Len(), tok.Offset, "a token's offset")
		b.WriteString(tok.Data)
	}
	return b.String()
}

// Several model calls stream at once, each batched by its own writer
// while its provider keeps calling back; each execution's stream is its
// tokens in order, then its tool call's deltas ending with tool_call_end,
// then what the engine publishes after the step returned.
func TestModelDeltasKeepTheirOrderUnderConcurrency(t *testing.T) {
	es := entrystore.New(pgtest.New(t))
	const calls = 4
	var wg sync.WaitGroup
	errs := make(chan error, calls)
	results := make([]pubCall, calls)
	texts := make([]string, calls)
	for i := range calls {
		c := newPubCall(t, es)
		results[i] = c
		tokens := numbered(fmt.Sprintf("c%d-t", i), 300)
		texts[i] = strings.Join(tokens, "")
		srv := providertest.NewServer(t, providertest.Reply{Body: providertest.NewAnthropicStream(pubModel, providertest.AnthropicUsage{Input: 5}).
			Text(tokens...).ToolUse("toolu_01", "echo", `{"te`, `xt":"`, `hi"}`).End("tool_use", 300)})
		d := c.deps(t, anthropicAt(t, srv.URL), step.PublishOptions{Size: 8, Limit: 16})
		wg.Go(func() {
			ctx := context.Background()
			_, err := step.CallModel(ctx, d, c.in)
			if err == nil {
				// The engine's next event, published once the step returned.
				err = pgStore{es: es}.Publish(ctx, c.in.OrgID, c.in.ExecutionID, event.Checkpoint{AgentExecutionID: c.in.ExecutionID, Sequence: 1})
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}

	for i, c := range results {
		evs := c.events(t)
		require.Equal(t, texts[i], tokenText(t, evs, c.in.Key), "call %d: every token, once, in order", i)
		var kinds []string
		for _, ev := range evs {
			k := ev.Event
			if k == event.NameData {
				d, err := event.Decode(ev.Event, ev.Data)
				require.NoError(t, err)
				k = d.(*event.Data).Data.Type
			}
			if k == event.NameToken && len(kinds) > 0 && kinds[len(kinds)-1] == k {
				continue
			}
			kinds = append(kinds, k)
		}
		require.GreaterOrEqual(t, len(kinds), 5, "call %d: %v", i, kinds)
		require.Equal(t, []string{event.NameToken, event.TypeToolCallStart}, kinds[:2], "call %d: tokens first: %v", i, kinds)
		for _, k := range kinds[2 : len(kinds)-2] {
			require.Equal(t, event.TypeToolCallDelta, k, "call %d: %v", i, kinds)
		}
		require.Equal(t, []string{event.TypeToolCallEnd, event.NameCheckpoint}, kinds[len(kinds)-2:],
			"call %d: tool_call_end after the last delta, the engine's event after the call's last: %v", i, kinds)
	}
}

// A model call cancelled mid-answer returns only once what it streamed
// is in the table.
func TestCancelledModelCallStoresItsStreamedTokens(t *testing.T) {
	es := entrystore.New(pgtest.New(t))
	c := newPubCall(t, es)
	tokens := numbered("t", 10)
	partial := providertest.NewAnthropicStream(pubModel, providertest.AnthropicUsage{Input: 5}).Text(tokens...).String()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, partial)
		w.(http.Flusher).Flush()
		<-r.Context().Done() // thinking on, until the call is cancelled
	}))
	t.Cleanup(srv.Close)
	model := &watchedProvider{Provider: anthropicAt(t, srv.URL), after: len(tokens), reached: make(chan struct{})}
	// A long Every: past the first batch, nothing is written before the
	// cancel but by close.
	d := c.deps(t, model, step.PublishOptions{Every: time.Hour, Size: 1000})

	ctx, cancel := context.WithCancel(context.Background())
	// Cleanups run last first: a failed check cannot leave the model's
	// handler waiting, and so the server's Close, for ever.
	t.Cleanup(cancel)
	done := make(chan error, 1)
	go func() {
		_, err := step.CallModel(ctx, d, c.in)
		done <- err
	}()
	select {
	case <-model.reached:
	case <-time.After(30 * time.Second):
		t.Fatal("the model's tokens never reached the step")
	}
	// The first batch is written at once (what was queued when the writer
	// woke); the rest wait for Every — here, for close.
	require.True(t, strings.HasPrefix(strings.Join(tokens, ""), tokenText(t, c.events(t), c.in.Key)), "what is written is the first tokens")
	cancel()
	err := <-done
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, strings.Join(tokens, ""), tokenText(t, c.events(t), c.in.Key), "the cancelled call's tokens are stored")
}

// While the database makes every stream write wait (another session
// holds the execution's advisory lock), the provider still streams its
// whole answer: the callback never waits for a write. Past the buffer's
// limit tokens are merged, none dropped.
func TestFullBufferNeverBlocksTheProviderCallback(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.New(t)
	es := entrystore.New(pool)
	c := newPubCall(t, es)
	tokens := numbered("t", 3000)
	srv := providertest.NewServer(t, providertest.Reply{Body: providertest.NewAnthropicStream(pubModel, providertest.AnthropicUsage{Input: 5}).
		Text(tokens...).End("end_turn", 3000)})
	model := &watchedProvider{Provider: anthropicAt(t, srv.URL), returned: make(chan struct{})}
	const limit = 16
	d := c.deps(t, model, step.PublishOptions{Size: 8, Limit: limit, FlushTimeout: time.Minute})

	lock, err := pool.Acquire(ctx)
	require.NoError(t, err)
	defer lock.Release()
	_, err = lock.Exec(ctx, `SELECT pg_advisory_lock(hashtextextended($1::uuid::text, 0))`, c.in.ExecutionID)
	require.NoError(t, err)

	done := make(chan error, 1)
	go func() {
		_, err := step.CallModel(ctx, d, c.in)
		done <- err
	}()
	select {
	case <-model.returned:
	case <-time.After(30 * time.Second):
		t.Fatal("the provider's callback blocked on the database")
	}
	require.Empty(t, c.events(t), "the writes are still waiting for the lock")
	_, err = lock.Exec(ctx, `SELECT pg_advisory_unlock(hashtextextended($1::uuid::text, 0))`, c.in.ExecutionID)
	require.NoError(t, err)
	require.NoError(t, <-done)

	evs := c.events(t)
	require.Equal(t, strings.Join(tokens, ""), tokenText(t, evs, c.in.Key), "every token, once, in order")
	require.LessOrEqual(t, len(evs), 2*limit, "one write waiting for the lock, then the buffer, merged")
}

// watchedProvider tells when its provider has handed over the first
// after deltas, and when its Stream returned.
type watchedProvider struct {
	*anthropic.Provider
	after    int
	seen     atomic.Int64
	reached  chan struct{}
	returned chan struct{}
}

func (p *watchedProvider) Stream(ctx context.Context, req agentsdk.ModelRequest, onEvent agentsdk.StreamFunc) (agentsdk.ModelResponse, error) {
	resp, err := p.Provider.Stream(ctx, req, func(ev agentsdk.StreamEvent) {
		onEvent(ev)
		if p.seen.Add(1) == int64(p.after) && p.reached != nil {
			close(p.reached)
		}
	})
	if p.returned != nil {
		close(p.returned)
	}
	return resp, err
}

// A model server that sends part of its answer and then nothing, without
// closing the stream (issue 42's hung model server): with
// ModelIdleTimeout the call is given up as a retryable model failure —
// made again, not waited on for ModelTimeout — and the tokens it sent
// are stored.
func TestIdleModelStreamIsGivenUpAsRetryable(t *testing.T) {
	es := entrystore.New(pgtest.New(t))
	c := newPubCall(t, es)
	tokens := numbered("t", 3)
	partial := providertest.NewAnthropicStream(pubModel, providertest.AnthropicUsage{Input: 5}).Text(tokens...).String()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, partial)
		w.(http.Flusher).Flush()
		<-r.Context().Done() // hung: nothing more, the connection open
	}))
	t.Cleanup(srv.Close)
	d := c.deps(t, anthropicAt(t, srv.URL), step.PublishOptions{})
	d.ModelIdleTimeout = 300 * time.Millisecond

	done := make(chan error, 1)
	go func() {
		_, err := step.CallModel(context.Background(), d, c.in)
		done <- err
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the hung call was never given up")
	}
	me, ok := agentsdk.AsModelError(err)
	require.True(t, ok, "a model failure, counted against the model's attempts: %v", err)
	require.True(t, me.Retryable, "made again")
	require.Contains(t, me.Message, "sent nothing for 300ms")
	require.Equal(t, strings.Join(tokens, ""), tokenText(t, c.events(t), c.in.Key), "the tokens sent before the hang are stored")
}

// A call that answered stores the deltas still queued with its answer, in
// one transaction: the answer's row and the last tokens' rows were written
// by the same transaction (xmin), and every token is stored, in order.
// Without a Postgres store to do that (agenttest), close writes them.
func TestAnswerCommitsWithItsLastDeltas(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.New(t)
	es := entrystore.New(pool)
	c := newPubCall(t, es)
	tokens := numbered("t", 40)
	srv := providertest.NewServer(t, providertest.Reply{Body: providertest.NewAnthropicStream(pubModel, providertest.AnthropicUsage{Input: 5}).
		Text(tokens...).End("end_turn", 40)})
	// A long Every: past the first batch, every token waits for the end.
	d := c.deps(t, anthropicAt(t, srv.URL), step.PublishOptions{Every: time.Hour, Size: 1000})
	res, err := step.CallModel(ctx, d, c.in)
	require.NoError(t, err)
	require.Equal(t, strings.Join(tokens, ""), tokenText(t, c.events(t), c.in.Key), "every token is stored, in order")

	var answerTx, lastTx uint32
	var batches int
	require.NoError(t, pool.QueryRow(ctx, `SELECT xmin::text::bigint FROM agent_entry WHERE id = $1`, res.LLMCallID).Scan(&answerTx))
	require.NoError(t, pool.QueryRow(ctx, `SELECT xmin::text::bigint FROM agent_stream_event WHERE agent_execution_id = $1 AND event = 'token'
		ORDER BY id DESC LIMIT 1`, c.in.ExecutionID).Scan(&lastTx))
	require.NoError(t, pool.QueryRow(ctx, `SELECT count(DISTINCT xmin::text) FROM agent_stream_event WHERE agent_execution_id = $1`,
		c.in.ExecutionID).Scan(&batches))
	require.Equal(t, answerTx, lastTx, "the last tokens commit with the answer")
	require.LessOrEqual(t, batches, 2, "the first token at once, the rest with the answer")
}
