package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/anthropic"
	"github.com/agentree/agentree/agentsdk/event"
	"github.com/agentree/agentree/agentsdk/providertest"
)

// benchTokens is how many tokens one model answer of BenchmarkTokenPublish
// streams.
const benchTokens = 1000

// BenchmarkTokenPublish measures a streamed token's whole way: a real
// execution whose model (the Anthropic SDK against a fake server speaking
// its wire protocol) streams 1,000 tokens, the worker's model step
// publishing them into Postgres, the gateway's LISTEN hub and an SSE
// client on a real TCP connection. It reports
//
//   - writes/1000tok: INSERT statements into agent_stream_event on the
//     worker's pool (every stream event of the execution, lifecycle ones
//     included) per 1,000 tokens — target ≤ 50;
//   - p50-ms, p99-ms: token → SSE client latency, from the moment the
//     provider hands a token to the model step's publisher to the moment
//     the client reads it — target p99 ≤ 100.
//
// The fake model holds its answer until the client's stream is open, so
// no token waits for the client to connect. It streams flat out, as fast
// as the SDK parses: the worst case for the database.
func BenchmarkTokenPublish(b *testing.B) {
	inserts := &insertCounter{}
	srv := &gatedModel{body: tokenStream(benchTokens)}
	hs := httptest.NewServer(srv)
	b.Cleanup(hs.Close)
	ap, err := anthropic.New(anthropic.Options{BaseURL: hs.URL, APIKey: "sk-ant-bench"})
	require.NoError(b, err)
	model := &stampedProvider{Provider: ap}
	e := newEnv(b, envOptions{providers: []agentsdk.Provider{model}, workerTracer: inserts})
	base := "/api/orgs/" + e.orgA.Slug + "/agent-executions"

	var lat []time.Duration
	var writes, tokens int64
	b.ResetTimer()
	for range b.N {
		gate := make(chan struct{})
		srv.gate.Store(&gate)
		model.reset()
		before := inserts.n.Load()

		ex := e.ok(e.keyA, http.MethodPost, base, map[string]any{
			"kind": "react-agent", "userPrompt": "Count.",
			"models": []any{map[string]any{"provider": "anthropic", "modelId": "claude-sonnet-4-5-20250929"}},
		})
		id := ex["id"].(string)
		s := e.openStream(b, e.keyA, base+"/"+id+"/stream/consolidated", "")
		close(gate)

		got := map[int]time.Time{}
		for {
			ev, ok := s.next(b, time.Minute)
			at := time.Now()
			require.True(b, ok, "the stream ended before the execution did")
			if ev.Event == event.NameToken {
				var tok event.Token
				require.NoError(b, json.Unmarshal([]byte(ev.Data), &tok))
				for _, i := range tokenIndexes(b, tok.Data) {
					got[i] = at
				}
			}
			if event.Terminal(ev.Event) {
				require.Equal(b, event.NameCompleted, ev.Event, ev.Data)
				break
			}
		}
		s.close()
		require.Len(b, got, benchTokens, "every token reaches the client")
		sent := model.stamps()
		for i, at := range got {
			lat = append(lat, at.Sub(sent[i]))
		}
		writes += inserts.n.Load() - before
		tokens += benchTokens
	}
	b.StopTimer()
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[int(p*float64(len(lat)-1))]) / float64(time.Millisecond)
	}
	b.ReportMetric(float64(writes)*1000/float64(tokens), "writes/1000tok")
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}

// tokenStream is an Anthropic answer streaming n tokens "t0000 ", "t0001 "…
func tokenStream(n int) string {
	deltas := make([]string, n)
	for i := range deltas {
		deltas[i] = fmt.Sprintf("t%04d ", i)
	}
	return providertest.NewAnthropicStream("claude-sonnet-4-5-20250929", providertest.AnthropicUsage{Input: 10}).
		Text(deltas...).End("end_turn", int64(n))
}

// tokenIndexes are the numbers of the tokens in a token event's text,
// which may hold several joined.
func tokenIndexes(t testing.TB, text string) []int {
	var out []int
	for _, f := range strings.Fields(text) {
		i, err := strconv.Atoi(strings.TrimPrefix(f, "t"))
		require.NoError(t, err, "token %q", f)
		out = append(out, i)
	}
	return out
}

// insertCounter counts the statements that insert stream events.
type insertCounter struct{ n atomic.Int64 }

func (c *insertCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if strings.Contains(d.SQL, "INSERT INTO agent_stream_event") {
		c.n.Add(1)
	}
	return ctx
}

func (c *insertCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// gatedModel is a fake Anthropic endpoint answering every request with
// body once its gate (if any) is open.
type gatedModel struct {
	body string
	gate atomic.Pointer[chan struct{}]
}

func (m *gatedModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	if g := m.gate.Load(); g != nil {
		select {
		case <-*g:
		case <-r.Context().Done():
			return
		}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, m.body)
}

// stampedProvider records when each token is handed to the publisher.
type stampedProvider struct {
	*anthropic.Provider
	mu   sync.Mutex
	sent map[int]time.Time
}

func (p *stampedProvider) Stream(ctx context.Context, req agentsdk.ModelRequest, onEvent agentsdk.StreamFunc) (agentsdk.ModelResponse, error) {
	return p.Provider.Stream(ctx, req, func(ev agentsdk.StreamEvent) {
		if ev.Type == agentsdk.StreamText {
			now := time.Now()
			p.mu.Lock()
			for _, f := range strings.Fields(ev.Text) {
				if i, err := strconv.Atoi(strings.TrimPrefix(f, "t")); err == nil {
					p.sent[i] = now
				}
			}
			p.mu.Unlock()
		}
		onEvent(ev)
	})
}

func (p *stampedProvider) reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sent = map[int]time.Time{}
}

func (p *stampedProvider) stamps() map[int]time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sent
}
