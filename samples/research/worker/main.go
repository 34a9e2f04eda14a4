// Command worker runs the research sample's agent: the react-agent, the
// research tools and the scripted model, on the research task queue.
package main

import (
	"log"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/agentsdk/tools/demo"
	"github.com/agentree/agentree/samples/internal/sampleworker"
	"github.com/agentree/agentree/samples/research"
)

func main() {
	err := sampleworker.Run(research.TaskQueue, adapter.Options{
		Agents:    []agentsdk.Agent{react.New(react.Options{})},
		Providers: []agentsdk.Provider{demo.Model()},
		Tools:     demo.Tools(),
	})
	if err != nil {
		log.Fatalln(err)
	}
}
