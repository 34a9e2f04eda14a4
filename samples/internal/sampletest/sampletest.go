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
	aclient "github.com/agentree/agentree/adapter/client"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/pgtest"
	"github.com/agentree/agentree/internal/temporaltest"
	"github.com/agentree/agentree/samples/internal/sampleenv"
)

// Timeout bounds each wait of a sample's test: generous for a shared
// machine, far above what a scripted run needs.
const Timeout = time.Minute

// Env is one test's Agentree.
type Env struct {
	T         *testing.T
	Store     *entrystore.Store
	Org       entrystore.Org
	Temporal  client.Client
	Agentree  *aclient.Client
	TaskQueue string
}

// New starts a worker with the plugin built from opts (its Store is set
// here). register, if given, registers the sample's own workflows and
// activities on the worker before it starts.
func New(t *testing.T, opts adapter.Options, register ...func(worker.Registry)) *Env {
	t.Helper()
	addr := temporaltest.Address(t)
	store := entrystore.New(pgtest.New(t))
	org, err := store.CreateOrg(context.Background(), "sample-"+uuid.NewString()[:8], "sample test")
	require.NoError(t, err)
	opts.Store = store
	plugin, err := adapter.NewPlugin(opts)
	require.NoError(t, err)
	tc, err := client.Dial(client.Options{HostPort: addr, Plugins: []client.Plugin{plugin}, Logger: temporaltest.Logger{}})
	require.NoError(t, err)
	t.Cleanup(tc.Close)
	e := &Env{T: t, Store: store, Org: org, Temporal: tc, TaskQueue: "sample-test-" + uuid.NewString()[:8]}
	e.Agentree = aclient.NewClient(tc, store, e.TaskQueue)
	w := worker.New(tc, e.TaskQueue, worker.Options{})
	for _, r := range register {
		r(w)
	}
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	return e
}

// Context is a context that ends after Timeout or with the test.
func (e *Env) Context() context.Context {
	ctx, cancel := context.WithTimeout(e.T.Context(), Timeout)
	e.T.Cleanup(cancel)
	return ctx
}

// Start starts an execution of the kind in the test's organization.
func (e *Env) Start(kind string, cfg agentsdk.Config, prompt string) entrystore.Execution {
	e.T.Helper()
	ex, err := e.Agentree.Start(e.Context(), aclient.StartRequest{OrgID: e.Org.ID, Kind: kind, Config: cfg, UserPrompt: prompt})
	require.NoError(e.T, err)
	return ex
}

// Follow follows the execution until until holds, failing the test if it
// ends otherwise or takes longer than Timeout, and returns what it printed.
func (e *Env) Follow(id string, until sampleenv.Until) (entrystore.Execution, string) {
	e.T.Helper()
	var out strings.Builder
	ex, err := sampleenv.Follow(e.Context(), e.Store, e.Org.ID, id, &out, until)
	require.NoError(e.T, err)
	return ex, out.String()
}

// Conversation is the execution's conversation up to the leaf it has
// reached (see sampleenv.Leaf).
func (e *Env) Conversation(ex entrystore.Execution) []agentsdk.Message {
	e.T.Helper()
	msgs, err := sampleenv.ConversationOf(e.Context(), e.Store, ex)
	require.NoError(e.T, err)
	return msgs
}

// Texts is each message as "role: text", tool calls and empty texts left
// out: the shape a test compares a conversation with.
func Texts(msgs []agentsdk.Message) []string {
	var out []string
	for _, m := range msgs {
		if t := m.Text(); t != "" {
			out = append(out, string(m.Role)+": "+t)
		}
	}
	return out
}
