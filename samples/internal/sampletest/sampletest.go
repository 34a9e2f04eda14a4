package sampletest

import (
	"context"
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
	// Temporal is the worker's client, for samples that start workflows
	// of their own.
	Temporal  client.Client
	OrgID     string
	TaskQueue string
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
	addr := temporaltest.Address(t)
	store, err := adapter.OpenStore(t.Context(), pgtest.URL(t))
	require.NoError(t, err)
	t.Cleanup(store.Pool().Close)
	opts.Store = store
	plugin, err := adapter.NewPlugin(opts)
	require.NoError(t, err)
	tc, err := client.Dial(client.Options{HostPort: addr, Plugins: []client.Plugin{plugin}, Logger: temporaltest.Logger{}})
	require.NoError(t, err)
	t.Cleanup(tc.Close)
	e := &Env{T: t, Temporal: tc, TaskQueue: "sample-test-" + uuid.NewString()[:8]}
	w := worker.New(tc, e.TaskQueue, worker.Options{})
	for _, r := range register {
		r(w)
	}
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)

	org := "sample-" + uuid.NewString()[:8]
	gw, err := sampleworker.Listen(t.Context(), gateway.Options{Store: store, Temporal: tc, TaskQueue: e.TaskQueue, Signals: signals}, org, "127.0.0.1:0")
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
	e.OrgID = gw.OrgID
	return e
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
