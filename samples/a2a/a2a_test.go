package a2a_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/agentsdk/scripted"
	agentreev1 "github.com/agentree/agentree/proto/agentree/v1"
	"github.com/agentree/agentree/samples/a2a"
	"github.com/agentree/agentree/samples/internal/sampleenv"
	"github.com/agentree/agentree/samples/internal/sampletest"
)

// TestLeadAsksSpecialistOverA2A runs the sample on the dev server as two
// deployments, each with its own schema, organization, task queue, worker
// and gateway: the specialist's exposes its definition over A2A, the
// lead's worker has it as a remote agent, and the lead answers from what
// the specialist said. The specialist ran one execution, started over
// A2A, and the lead's tool result names it as the remote task.
func TestLeadAsksSpecialistOverA2A(t *testing.T) {
	specialist := sampletest.New(t, adapter.Options{
		Agents:    []agentsdk.Agent{react.New(react.Options{})},
		Providers: []agentsdk.Provider{scripted.New(a2a.SpecialistScript())},
	})
	lead := sampletest.NewGateway(t)
	lead.StartWorker(adapter.Options{
		Agents:       []agentsdk.Agent{react.New(react.Options{})},
		Providers:    []agentsdk.Provider{scripted.New(a2a.LeadScript())},
		Tools:        []*agentsdk.Tool{agentsdk.SpawnAgentsTool()},
		RemoteAgents: []agentsdk.RemoteAgent{a2a.Remote(a2a.SpecialistURL(specialist.Gateway), specialist.Gateway.Key)},
	})

	var out strings.Builder
	ex, err := a2a.Run(lead.Context(), specialist.API, lead.API, &out)
	require.NoError(t, err, out.String())
	require.Equal(t, "The specialist says: "+a2a.SpecialistAnswer, sampleenv.OutputText(ex))
	require.Contains(t, out.String(), "→ spawn_agents")
	require.Contains(t, out.String(), "The specialist says: ")

	page := &agentreev1.ListAgentExecutionsResponse{}
	require.NoError(t, specialist.API.Do(specialist.Context(), http.MethodGet, "/agent-executions?pageSize=50", nil, page))
	require.Len(t, page.GetAgentExecutions(), 1, "one execution on the specialist's side")
	task := page.GetAgentExecutions()[0]
	require.Equal(t, "COMPLETED", task.GetStatus())
	require.Equal(t, a2a.SpecialistAnswer, sampleenv.OutputText(task))
	msgs := lead.Conversation(ex.GetId())
	var result string
	for _, m := range msgs {
		if m.GetRole() == string(agentsdk.RoleToolResult) {
			result = sampleenv.Text(m)
		}
	}
	require.Contains(t, result, "## storage (COMPLETED, remote agent specialist, task "+task.GetId()+")")

	// A second run keeps the definition the first exposed.
	require.NoError(t, a2a.Expose(specialist.Context(), specialist.API))
}
