package gateway_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/gateway"
	"github.com/agentree/agentree/internal/telemetry"
)

// queryCounter is a pgx tracer that counts the statements a pool sends.
type queryCounter struct{ n atomic.Int64 }

func (c *queryCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	return ctx
}

func (c *queryCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// clientFrom is an HTTP client whose connections leave from local, a
// loopback address of its own (every 127/8 address is loopback on Linux),
// so the gateway sees it as another client.
func clientFrom(local string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 64}}
}

// get sends GET path with key from c and returns the status, the
// Retry-After header and the body.
func get(t *testing.T, c *http.Client, base, path, key string) (int, string, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base+path, nil)
	require.NoError(t, err)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header.Get("Retry-After"), body
}

// flood sends every key to path from c on 16 connections and counts the
// answers by status.
func flood(t *testing.T, c *http.Client, base, path string, keys []string) map[int]int {
	t.Helper()
	var mu sync.Mutex
	got := map[int]int{}
	next := atomic.Int64{}
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < int64(len(keys)); i = next.Add(1) - 1 {
				status, _, _ := get(t, c, base, path, keys[i])
				mu.Lock()
				got[status]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return got
}

func randomKey() string {
	var b [36]byte
	_, _ = rand.Read(b[:])
	return "agt_" + hex.EncodeToString(b[:4]) + "_" + hex.EncodeToString(b[4:])
}

// TestJunkKeysNeverReachPostgres: 10,000 tokens not shaped like a key cost
// no query at all, and 10,000 distinct well-formed unknown keys from one
// address cost at most the address's bucket (burst, then its rate) — every
// one answered 401 or 429. A valid client on another address meanwhile
// gets its 200s.
func TestJunkKeysNeverReachPostgres(t *testing.T) {
	var queries queryCounter
	e := newEnv(t, envOptions{noTemporal: true, gatewayTracer: &queries, gateway: func(o *gateway.Options) {
		o.AnonRate, o.AnonBurst = gateway.DefaultAnonRate, gateway.DefaultAnonBurst // the product's defaults
	}})
	path := "/api/orgs/" + e.orgA.Slug + "/agent-executions"
	valid := clientFrom("127.0.0.2")
	status, _, body := get(t, valid, e.base, path, e.keyA)
	require.Equal(t, http.StatusOK, status, "%s", body)

	malformed := make([]string, 10_000)
	for i := range malformed {
		malformed[i] = []string{"junk", "agt_", randomKey() + "x", "AGT_" + randomKey()[4:], randomKey()[:20]}[i%5] + strconv.Itoa(i)
	}
	before := queries.n.Load()
	junk := clientFrom("127.0.0.1")
	got := flood(t, junk, e.base, path, malformed)
	require.Equal(t, 10_000, got[http.StatusUnauthorized]+got[http.StatusTooManyRequests], "%v", got)
	require.Positive(t, got[http.StatusTooManyRequests], "the address's bucket ran out: %v", got)
	require.Zero(t, queries.n.Load()-before, "a malformed key reached Postgres")

	unknown := make([]string, 10_000)
	for i := range unknown {
		unknown[i] = randomKey()
	}
	before = queries.n.Load()
	start := time.Now()
	got = flood(t, junk, e.base, path, unknown)
	elapsed := time.Since(start)
	spent := queries.n.Load() - before
	require.Equal(t, 10_000, got[http.StatusUnauthorized]+got[http.StatusTooManyRequests], "%v", got)
	// At most one lookup per token of the address's bucket: a burst and
	// then DefaultAnonRate a second.
	limit := int64(gateway.DefaultAnonBurst) + int64(gateway.DefaultAnonRate*elapsed.Seconds()) + 1
	require.LessOrEqual(t, spent, limit, "%d queries for 10,000 unknown keys in %s", spent, elapsed)
	t.Logf("10,000 unknown keys in %s: %d queries, %v", elapsed, spent, got)

	status, _, body = get(t, valid, e.base, path, e.keyA)
	require.Equal(t, http.StatusOK, status, "the valid client after the flood: %s", body)
}

// TestRateLimitAnswers429: past its bucket a key is answered 429 with
// Retry-After and the usual {code, message}; so is an address past its
// bucket of unknown keys (an unknown key spends all of it), after the
// tarpit's hold, while the valid key from another address is not.
func TestRateLimitAnswers429(t *testing.T) {
	const tarpit = 200 * time.Millisecond
	e := newEnv(t, envOptions{noTemporal: true, gateway: func(o *gateway.Options) {
		o.KeyRate, o.KeyBurst = 0.5, 3
		o.AnonRate, o.AnonBurst = 0.5, 2
		o.Tarpit = tarpit
	}})
	path := "/api/orgs/" + e.orgA.Slug + "/agent-executions"
	isLimited := func(status int, retryAfter string, body []byte) {
		t.Helper()
		require.Equal(t, http.StatusTooManyRequests, status, "%s", body)
		secs, err := strconv.Atoi(retryAfter)
		require.NoError(t, err, "Retry-After %q", retryAfter)
		require.GreaterOrEqual(t, secs, 1)
		var eb struct{ Code, Message string }
		require.NoError(t, json.Unmarshal(body, &eb))
		require.Equal(t, "rate_limited", eb.Code)
		require.NotEmpty(t, eb.Message)
	}

	valid := clientFrom("127.0.0.2")
	// The first request looks the key up (one token of the address's
	// bucket); the next three spend the key's.
	for i := range 4 {
		status, _, body := get(t, valid, e.base, path, e.keyA)
		require.Equal(t, http.StatusOK, status, "request %d: %s", i, body)
	}
	isLimited(get(t, valid, e.base, path, e.keyA))
	// Another key has a bucket of its own.
	status, _, body := get(t, valid, e.base, "/api/orgs/"+e.orgB.Slug+"/agent-executions", e.keyB)
	require.Equal(t, http.StatusOK, status, "%s", body)

	// An unknown key costs its address the whole bucket (unknownKeyCost):
	// the next lookup from there waits for it to refill. The refusal is
	// held by the tarpit first.
	junk := clientFrom("127.0.0.3")
	status, _, body = get(t, junk, e.base, path, randomKey())
	require.Equal(t, http.StatusUnauthorized, status, "%s", body)
	start := time.Now()
	isLimited(get(t, junk, e.base, path, randomKey()))
	require.GreaterOrEqual(t, time.Since(start), tarpit/2, "the address's refusal is held at least half the tarpit")
	isLimited(get(t, junk, e.base, path, "not-a-key"))
}

// TestMetricsAreNotPublic: /metrics is served on the metrics listener
// only; the public port answers it 404, and the default metrics address is
// loopback.
func TestMetricsAreNotPublic(t *testing.T) {
	tel, err := telemetry.New(context.Background(), telemetry.Config{Metrics: true})
	require.NoError(t, err)
	e := newEnv(t, envOptions{noTemporal: true, tel: tel})
	// A request, so the metrics have something to show.
	status, _, body := get(t, http.DefaultClient, e.base, "/api/orgs/"+e.orgA.Slug+"/agent-executions", e.keyA)
	require.Equal(t, http.StatusOK, status, "%s", body)

	status, _, body = get(t, http.DefaultClient, e.base, "/metrics", "")
	require.Equal(t, http.StatusNotFound, status, "%s", body)
	status, _, body = get(t, http.DefaultClient, e.base, "/metrics", e.keyA)
	require.Equal(t, http.StatusNotFound, status, "%s", body)
	require.NotContains(t, string(body), "http_server")

	status, _, body = get(t, http.DefaultClient, e.metricsBase, "/metrics", "")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, string(body), "http_server_request")

	host, _, err := net.SplitHostPort(gateway.DefaultMetricsAddr)
	require.NoError(t, err)
	require.True(t, net.ParseIP(host).IsLoopback(), gateway.DefaultMetricsAddr)
}
