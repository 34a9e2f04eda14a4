// Command worker runs the sub-agents sample: the react-agent with
// spawn_agents and the demo's note tools, and the scripted model of the
// lead and its team, on the sample's task queue.
package main

import (
	"log"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/samples/internal/sampleworker"
	"github.com/agentree/agentree/samples/subagents"
)

func main() {
	err := sampleworker.Run(subagents.TaskQueue, adapter.Options{
		Agents:    []agentsdk.Agent{react.New(react.Options{})},
		Providers: []agentsdk.Provider{scripted.New(subagents.Script())},
		Tools:     subagents.WorkerTools(),
	})
	if err != nil {
		log.Fatalln(err)
	}
}
