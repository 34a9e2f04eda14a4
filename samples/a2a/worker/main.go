// Command worker runs the A2A sample's lead deployment: the react-agent
// with spawn_agents, the lead's scripted model, and the specialist of
// the other deployment as a remote A2A agent (its URL and API key from
// SPECIALIST_A2A_URL and SPECIALIST_API_KEY, or from the specialist's
// running worker), with the REST gateway for the lead's task queue.
package main

import (
	"log"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/samples/a2a"
	"github.com/agentree/agentree/samples/internal/sampleworker"
)

func main() {
	remote, err := a2a.RemoteFromEnv()
	if err != nil {
		log.Fatalln(err)
	}
	err = sampleworker.Run(a2a.TaskQueue, adapter.Options{
		Agents:       []agentsdk.Agent{react.New(react.Options{})},
		Providers:    []agentsdk.Provider{scripted.New(a2a.LeadScript())},
		Tools:        []*agentsdk.Tool{agentsdk.SpawnAgentsTool()},
		RemoteAgents: []agentsdk.RemoteAgent{remote},
	})
	if err != nil {
		log.Fatalln(err)
	}
}
