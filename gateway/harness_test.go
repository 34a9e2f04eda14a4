package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/agentree/agentree/adapter"
	aclient "github.com/agentree/agentree/adapter/client"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/gateway"
	"github.com/agentree/agentree/internal/pgtest"
	"github.com/agentree/agentree/internal/telemetry"
	"github.com/agentree/agentree/internal/temporaltest"
)

// testBodyLimit is the gateway's body limit in these tests.
const testBodyLimit = 64 << 10

// env is one test's Agentree as separate pieces sharing only Postgres and
// the Temporal server: a worker (its own pool and Temporal client, with the
// plugin) and a gateway (its own pool and client) on a real listener.
type env struct {
	t      testing.TB
	queue  string            // the workers' shared task queue
	es     *entrystore.Store // the test's own view of the database
	base   string            // the gateway's URL
	orgA   entrystore.Org
	orgB   entrystore.Org
	keyA   string
	keyB   string
	dbURL  string
	gwPool *pgxpool.Pool
	gwApp  string // the gateway's application_name
	// grpcAddr is the gateway's gRPC address when envOptions.grpc.
	grpcAddr string
	// metricsBase is the URL of the gateway's metrics listener when
	// envOptions.tel is set.
	metricsBase string
	// stopGateway shuts the gateway down (once; cleanup calls it too).
	stopGateway func()
}

type envOptions struct {
	providers []agentsdk.Provider // nil: no worker
	// noWorker starts none even with providers (the test starts its own).
	noWorker  bool
	tools     []*agentsdk.Tool
	heartbeat time.Duration
	grpc      bool
	// noTemporal runs the gateway without a Temporal client (it can then
	// stream and read, not start executions).
	noTemporal bool
	// workerTracer, when set, sees every statement of the worker's pool.
	workerTracer pgx.QueryTracer
	// gatewayTracer, when set, sees every statement of the gateway's pool.
	gatewayTracer pgx.QueryTracer
	// gateway, when set, adjusts the gateway's options (limits).
	gateway func(*gateway.Options)
	// windows extends the worker's and the gateway's context windows.
	windows agentsdk.ContextWindows
	// tel, when set, traces and measures the worker and the gateway: their
	// Temporal clients, pools, requests, model and tool calls; the gateway
	// serves its metrics at /metrics on a listener of its own.
	tel *telemetry.Telemetry
	// runEvents is the worker's adapter.Options.RunEvents.
	runEvents int
	// toolPolicy is the worker's adapter.Options.ToolPolicy.
	toolPolicy agentsdk.Policies
	// orgTools, when set, gives the worker's adapter.Options.OrgTools
	// (the test's organizations exist by then).
	orgTools func(*env) map[string]agentsdk.OrgTools
	// workspaces is the worker's adapter.Options.Workspaces.
	workspaces adapter.WorkspaceSnapshots
}

// instrumentClient adds tel's Temporal interceptor and metrics handler.
func instrumentClient(t testing.TB, tel *telemetry.Telemetry, co *client.Options) {
	if tel != nil {
		require.NoError(t, tel.Instrument(co))
	}
}

// newPoolWith is newPool whose statements tel and tracer trace, when set.
func newPoolWith(t testing.TB, url string, tel *telemetry.Telemetry, tracer pgx.QueryTracer) *pgxpool.Pool {
	if tel == nil && tracer == nil {
		return newPool(t, url)
	}
	cfg, err := pgxpool.ParseConfig(url)
	require.NoError(t, err)
	if tel != nil {
		tel.InstrumentPool(cfg)
	}
	if tracer != nil {
		cfg.ConnConfig.Tracer = tracer
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	return pool
}

func newPool(t testing.TB, url string) *pgxpool.Pool {
	pool, err := pgxpool.New(context.Background(), url)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	return pool
}

func newEnv(t testing.TB, o envOptions) *env {
	t.Helper()
	ctx := context.Background()
	e := &env{t: t, dbURL: pgtest.URL(t)}
	e.es = entrystore.New(newPool(t, e.dbURL))
	var err error
	for _, org := range []*entrystore.Org{&e.orgA, &e.orgB} {
		*org, err = e.es.CreateOrg(ctx, "org-"+uuid.NewString()[:8], "test")
		require.NoError(t, err)
	}
	e.keyA, _, err = e.es.CreateAPIKey(ctx, e.orgA.ID, "a")
	require.NoError(t, err)
	e.keyB, _, err = e.es.CreateAPIKey(ctx, e.orgB.ID, "b")
	require.NoError(t, err)

	queue := "gateway-test-" + uuid.NewString()[:8]
	e.queue = queue
	// The worker records its capabilities as it starts; the gateway
	// validates creates against them.
	if o.providers != nil && !o.noWorker {
		e.startWorker(queue, o)
	}

	// The gateway's connections carry a name of their own, so a test can
	// find its LISTEN connection among parallel tests'.
	e.gwApp = "agentree-gw-" + uuid.NewString()[:8]
	gwURL, err := url.Parse(e.dbURL)
	require.NoError(t, err)
	q := gwURL.Query()
	q.Set("application_name", e.gwApp)
	gwURL.RawQuery = q.Encode()
	e.gwPool = newPoolWith(t, gwURL.String(), o.tel, o.gatewayTracer)
	gwStore := entrystore.New(e.gwPool)
	var tc client.Client
	if !o.noTemporal {
		co := client.Options{HostPort: temporaltest.Address(t), Logger: temporaltest.Logger{}}
		instrumentClient(t, o.tel, &co)
		tc, err = client.Dial(co)
		require.NoError(t, err)
		t.Cleanup(tc.Close)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	e.base = "http://" + ln.Addr().String()
	var gln net.Listener
	if o.grpc {
		gln, err = net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		e.grpcAddr = gln.Addr().String()
	}
	gctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	gopts := gateway.Options{
		HTTPListener: ln, GRPCListener: gln, Store: gwStore, Temporal: tc, TaskQueue: queue,
		Executions: aclient.NewClient(tc, gwStore, queue),
		BodyLimit:  testBodyLimit,
		Heartbeat:  o.heartbeat, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		ContextWindows: o.windows,
		// Tests poll every 5 ms with one key, twice the default bucket,
		// and try revoked and unknown keys from the one address they all
		// share (an unknown key spends its address's whole bucket); the
		// limit tests set their own. Floods of junk are answered at once
		// (the tarpit would hold 10,000 refusals a second each).
		KeyRate: 1e6, AnonRate: 1e6, AnonBurst: 1 << 20, Tarpit: -1,
	}
	if o.tel != nil {
		gopts.TracerProvider, gopts.MeterProvider, gopts.Propagator = o.tel.TracerProvider, o.tel.MeterProvider, o.tel.Propagator
		gopts.MetricsHandler = o.tel.MetricsHandler()
		mln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		gopts.MetricsListener = mln
		e.metricsBase = "http://" + mln.Addr().String()
	}
	if o.gateway != nil {
		o.gateway(&gopts)
	}
	go func() { done <- gateway.Run(gctx, gopts) }()
	var stopOnce sync.Once
	e.stopGateway = func() {
		stopOnce.Do(func() {
			cancel()
			require.NoError(t, <-done)
		})
	}
	t.Cleanup(e.stopGateway)
	poll(t, 10*time.Second, func() bool {
		resp, err := http.Get(e.base + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, "the gateway never became healthy")
	return e
}

// startWorker runs a worker with the adapter plugin on its own pool.
func (e *env) startWorker(queue string, o envOptions) {
	cfg, err := pgxpool.ParseConfig(e.dbURL)
	require.NoError(e.t, err)
	if o.workerTracer != nil {
		cfg.ConnConfig.Tracer = o.workerTracer
	} else if o.tel != nil {
		o.tel.InstrumentPool(cfg)
	}
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	require.NoError(e.t, err)
	e.t.Cleanup(pool.Close)
	opts := adapter.Options{
		Store: entrystore.New(pool), Agents: []agentsdk.Agent{react.New(react.Options{})},
		Providers: o.providers, Tools: o.tools, RunEvents: o.runEvents, ContextWindows: o.windows,
		ToolPolicy: o.toolPolicy, Workspaces: o.workspaces,
	}
	if o.orgTools != nil {
		opts.OrgTools = o.orgTools(e)
	}
	if o.tel != nil {
		opts.TracerProvider, opts.MeterProvider = o.tel.TracerProvider, o.tel.MeterProvider
	}
	plugin, err := adapter.NewPlugin(opts)
	require.NoError(e.t, err)
	co := client.Options{HostPort: temporaltest.Address(e.t), Plugins: []client.Plugin{plugin}, Logger: temporaltest.Logger{}}
	instrumentClient(e.t, o.tel, &co)
	wc, err := client.Dial(co)
	require.NoError(e.t, err)
	e.t.Cleanup(wc.Close)
	w := worker.New(wc, queue, worker.Options{})
	require.NoError(e.t, w.Start())
	e.t.Cleanup(w.Stop)
}

// response is a decoded JSON response.
type response struct {
	Status int
	Header http.Header
	Body   map[string]any
	Raw    []byte
}

// do sends a JSON request with the key (none when key is "").
func (e *env) do(key, method, path string, body any) response {
	e.t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	case []byte:
		r = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		require.NoError(e.t, err)
		r = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, e.base+path, r)
	require.NoError(e.t, err)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(e.t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(e.t, err)
	out := response{Status: resp.StatusCode, Header: resp.Header, Raw: raw}
	if len(raw) > 0 {
		require.NoError(e.t, json.Unmarshal(raw, &out.Body), "%s %s answered non-JSON: %s", method, path, raw)
	}
	return out
}

// ok sends a request that must succeed.
func (e *env) ok(key, method, path string, body any) map[string]any {
	e.t.Helper()
	r := e.do(key, method, path, body)
	require.Equal(e.t, http.StatusOK, r.Status, "%s %s: %s", method, path, r.Raw)
	return r.Body
}

// fails sends a request that must fail with status and the error body.
func (e *env) fails(key, method, path string, body any, status int, code string) response {
	e.t.Helper()
	r := e.do(key, method, path, body)
	require.Equal(e.t, status, r.Status, "%s %s: %s", method, path, r.Raw)
	require.Len(e.t, r.Body, 2, "an error body is exactly {code, message}: %s", r.Raw)
	require.Equal(e.t, code, r.Body["code"], "%s", r.Raw)
	require.NotEmpty(e.t, r.Body["message"], "%s", r.Raw)
	return r
}

func (e *env) execPath(org entrystore.Org, id string) string {
	return fmt.Sprintf("/api/orgs/%s/agent-executions/%s", org.Slug, id)
}

// waitStatus polls the REST API until the execution has status.
func (e *env) waitStatus(id, status string, timeout time.Duration) map[string]any {
	e.t.Helper()
	var ex map[string]any
	poll(e.t, timeout, func() bool {
		ex = e.ok(e.keyA, http.MethodGet, e.execPath(e.orgA, id), nil)
		return ex["status"] == status
	}, "execution %s never became %s", id, status)
	return ex
}

// poll checks cond every few milliseconds, in the test's goroutine, until
// it holds or timeout passes.
func poll(t testing.TB, timeout time.Duration, cond func() bool, msgAndArgs ...any) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			require.Fail(t, "condition not met in time", msgAndArgs...)
		}
		<-tick.C
	}
}
