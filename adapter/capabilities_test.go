package adapter_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/temporaltest"
)

// namedEndpoint is a provider that knows which endpoint it serves.
type namedEndpoint struct{ *scripted.Provider }

func (namedEndpoint) Endpoint() agentsdk.EndpointInfo {
	return agentsdk.EndpointInfo{Name: "local-vllm", Provider: scripted.Name, Models: []string{"m1", "m2"}}
}

// TestWorkerRecordsCapabilities: a worker records its identity, kinds,
// tools with their schemas and model endpoints (a provider's own
// EndpointInfo, else one named after it allowing any model) as it starts.
// Two workers of one process with the same identity and queue share a row,
// which goes only when the last of them stops.
func TestWorkerRecordsCapabilities(t *testing.T) {
	h := newHarness(t, adapter.Options{}, true)
	ctx := context.Background()
	plugin, err := adapter.NewPlugin(adapter.Options{
		Store: h.es, Agents: []agentsdk.Agent{react.New(react.Options{})}, Version: "v-test",
		Providers: []agentsdk.Provider{namedEndpoint{scripted.New(scripted.Turns())}, scripted.New(scripted.Turns())},
		Tools:     []*agentsdk.Tool{echoTool()},
	})
	require.NoError(t, err)
	tc, err := client.Dial(client.Options{HostPort: temporaltest.Address(t), Plugins: []client.Plugin{plugin}, Logger: temporaltest.Logger{}})
	require.NoError(t, err)
	t.Cleanup(tc.Close)
	queue, identity := "caps-"+uuid.NewString()[:8], "worker-"+uuid.NewString()[:8]
	w1 := worker.New(tc, queue, worker.Options{Identity: identity})
	require.NoError(t, w1.Start())
	t.Cleanup(w1.Stop)

	rows, err := h.es.LiveCapabilities(ctx)
	require.NoError(t, err)
	require.Len(t, rows, 1, "recorded before Start returns")
	r := rows[0]
	require.Equal(t, identity, r.Identity)
	require.Equal(t, queue, r.TaskQueue)
	require.Equal(t, client.DefaultNamespace, r.Namespace)
	require.Equal(t, "v-test", r.Version)
	require.Equal(t, []string{react.Kind}, r.Kinds)
	require.Len(t, r.Tools, 1)
	require.Equal(t, "echo", r.Tools[0].Name)
	var schema map[string]any
	require.NoError(t, json.Unmarshal(r.Tools[0].Parameters, &schema))
	require.Equal(t, []any{"text"}, schema["required"])
	require.Equal(t, []entrystore.CapabilityModels{
		{Name: "local-vllm", Provider: scripted.Name, Models: []string{"m1", "m2"}},
		{Name: scripted.Name, Provider: scripted.Name, Models: []string{"*"}},
	}, r.Models)

	w2 := worker.New(tc, queue, worker.Options{Identity: identity})
	require.NoError(t, w2.Start())
	w2.Stop()
	rows, err = h.es.LiveCapabilities(ctx)
	require.NoError(t, err)
	require.Len(t, rows, 1, "the other worker with that identity and queue still runs")
	w1.Stop()
	rows, err = h.es.LiveCapabilities(ctx)
	require.NoError(t, err)
	require.Empty(t, rows, "the last one to stop deregisters")
}
