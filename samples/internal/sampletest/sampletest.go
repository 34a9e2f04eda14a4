package sampletest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/apiclient"
	"github.com/agentree/agentree/gateway"
	"github.com/agentree/agentree/internal/pgtest"
	"github.com/agentree/agentree/internal/temporaltest"
	agentreev1 "github.com/agentree/agentree/proto/agentree/v1"
	"github.com/agentree/agentree/samples/internal/sampleenv"
	"github.com/agentree/agentree/samples/internal/sampleworker"
)

// Timeout bounds each wait of a sample's test: generous for a shared
// machine, far above what a scripted run needs.
const Timeout = time.Minute

// Env is one test's Agentree.
type Env struct {
	T *testing.T
	// API is the REST client a starter would have.
	API *apiclient.Client
	// Gateway is the gateway's URL and API key, for a client other than
	// apiclient (an OpenAI SDK).
	Gateway sampleenv.Gateway
	// Temporal is the worker's client, for samples that start workflows
	// of their own (nil with NewGateway).
	Temporal  client.Client
	OrgID     string
	TaskQueue string
	// DatabaseURL is the test's Postgres schema, for workers the test
	// runs as processes of their own (RunWorker).
	DatabaseURL string
}

// New starts a worker with the plugin built from opts (its Store is set
// here) and the gateway for it. register, if given, registers the
// sample's own workflows and activities on the worker before it starts.
func New(t *testing.T, opts adapter.Options, register ...func(worker.Registry)) *Env {
	return NewAccepting(t, nil, opts, register...)
}

// NewAccepting is New for a sample whose agent waits for signals of its
// own: the gateway accepts those names (sampleworker.RunAccepting).
func NewAccepting(t *testing.T, signals []string, opts adapter.Options, register ...func(worker.Registry)) *Env {
	t.Helper()
	e := &Env{T: t, TaskQueue: "sample-test-" + uuid.NewString()[:8], DatabaseURL: pgtest.URL(t)}
	w, err := newWorker(t.Context(), e.DatabaseURL, temporaltest.Address(t), e.TaskQueue, opts)
	require.NoError(t, err)
	t.Cleanup(w.stop)
	for _, r := range register {
		r(w)
	}
	require.NoError(t, w.Start())
	e.Temporal = w.tc
	o := w.gateway
	o.Signals = signals
	e.serve(o)
	return e
}

// NewGateway starts the gateway for a task queue of its own and no
// worker: the test starts them, in its process (StartWorker) or as
// processes it may kill (RunWorker on DatabaseURL and TaskQueue).
func NewGateway(t *testing.T) *Env {
	t.Helper()
	e := &Env{T: t, TaskQueue: "sample-test-" + uuid.NewString()[:8], DatabaseURL: pgtest.URL(t)}
	store, err := adapter.OpenStore(t.Context(), e.DatabaseURL)
	require.NoError(t, err)
	t.Cleanup(store.Pool().Close)
	tc, err := client.Dial(client.Options{HostPort: temporaltest.Address(t), Logger: temporaltest.Logger{}})
	require.NoError(t, err)
	t.Cleanup(tc.Close)
	e.serve(gateway.Options{Store: store, Temporal: tc})
	return e
}

// StartWorker runs a worker with the plugin built from opts on the
// test's queue, in the test's process, until the test ends.
func (e *Env) StartWorker(opts adapter.Options) {
	e.T.Helper()
	w, err := newWorker(e.T.Context(), e.DatabaseURL, temporaltest.Address(e.T), e.TaskQueue, opts)
	require.NoError(e.T, err)
	require.NoError(e.T, w.Start())
	e.T.Cleanup(w.stop)
}

// RunWorker runs a worker with the plugin built from opts on queue, with
// the store at dbURL and the Temporal server at temporalAddr, until the
// process is interrupted: the body of a test binary started as a worker
// process, which a test can SIGKILL.
func RunWorker(dbURL, temporalAddr, queue string, opts adapter.Options) error {
	w, err := newWorker(context.Background(), dbURL, temporalAddr, queue, opts)
	if err != nil {
		return err
	}
	defer w.stop()
	return w.Run(worker.InterruptCh())
}

// sampleWorker is a Temporal worker with the plugin, and what it holds.
type sampleWorker struct {
	worker.Worker
	tc client.Client
	// gateway has the worker's store and client, for a gateway beside it
	// (this package names no store type).
	gateway    gateway.Options
	closeStore func()
}

func (w *sampleWorker) stop() {
	w.Stop()
	w.tc.Close()
	w.closeStore()
}

// newWorker builds (and does not start) a worker with the plugin built
// from opts, its Store opened at dbURL.
func newWorker(ctx context.Context, dbURL, temporalAddr, queue string, opts adapter.Options) (*sampleWorker, error) {
	store, err := adapter.OpenStore(ctx, dbURL)
	if err != nil {
		return nil, fmt.Errorf("sampletest: store: %w", err)
	}
	opts.Store = store
	plugin, err := adapter.NewPlugin(opts)
	if err != nil {
		store.Pool().Close()
		return nil, fmt.Errorf("sampletest: plugin: %w", err)
	}
	tc, err := client.Dial(client.Options{HostPort: temporalAddr, Plugins: []client.Plugin{plugin}, Logger: temporaltest.Logger{}})
	if err != nil {
		store.Pool().Close()
		return nil, fmt.Errorf("sampletest: Temporal: %w", err)
	}
	return &sampleWorker{Worker: worker.New(tc, queue, worker.Options{}), tc: tc,
		gateway: gateway.Options{Store: store, Temporal: tc}, closeStore: store.Pool().Close}, nil
}

// serve starts the gateway o describes (Store, Temporal, Signals) for
// e's queue, with an API key of an organization of the test's own, until
// the test ends.
func (e *Env) serve(o gateway.Options) {
	t := e.T
	org := "sample-" + uuid.NewString()[:8]
	o.TaskQueue = e.TaskQueue
	gw, err := sampleworker.Listen(t.Context(), o, org, "127.0.0.1:0")
	require.NoError(t, err)
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- gw.Serve(ctx) }()
	t.Cleanup(func() {
		stop()
		require.NoError(t, <-served)
	})
	e.API, err = apiclient.New(gw.URL, gw.Org, gw.Key)
	require.NoError(t, err)
	e.Gateway, e.OrgID = gw.Gateway, gw.OrgID
}

// Context is a context that ends after Timeout or with the test.
func (e *Env) Context() context.Context {
	ctx, cancel := context.WithTimeout(e.T.Context(), Timeout)
	e.T.Cleanup(cancel)
	return ctx
}

// Start starts an execution of the kind through the REST API.
func (e *Env) Start(kind string, cfg agentsdk.Config, prompt string) *agentreev1.AgentExecution {
	e.T.Helper()
	ex, err := sampleenv.Create(e.Context(), e.API, kind, cfg, prompt)
	require.NoError(e.T, err)
	return ex
}

// Follow follows the execution until until holds, failing the test if it
// ends otherwise or takes longer than Timeout, and returns what it printed.
func (e *Env) Follow(id string, until sampleenv.Until) (*agentreev1.AgentExecution, string) {
	e.T.Helper()
	var out strings.Builder
	ex, err := sampleenv.Follow(e.Context(), e.API, id, &out, until)
	require.NoError(e.T, err)
	return ex, out.String()
}

// Conversation is the execution's conversation as the API lists it.
func (e *Env) Conversation(id string) []*agentreev1.Message {
	e.T.Helper()
	msgs, err := sampleenv.Conversation(e.Context(), e.API, id)
	require.NoError(e.T, err)
	return msgs
}

// Texts is each message of an in-memory run (agenttest) as "role: text",
// tool calls and empty texts left out: the shape sampleenv.Texts gives
// the API's messages, so a test compares both runtimes with one list.
func Texts(msgs []agentsdk.Message) []string {
	var out []string
	for _, m := range msgs {
		if t := m.Text(); t != "" {
			out = append(out, string(m.Role)+": "+t)
		}
	}
	return out
}
