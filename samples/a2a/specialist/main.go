// Command specialist runs the A2A sample's specialist deployment: the
// react-agent and the specialist's scripted model on a task queue of its
// own, with its REST gateway, which serves the specialist's definition
// over A2A once the starter has created it.
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
	err := sampleworker.Run(a2a.SpecialistTaskQueue, adapter.Options{
		Agents:    []agentsdk.Agent{react.New(react.Options{})},
		Providers: []agentsdk.Provider{scripted.New(a2a.SpecialistScript())},
	})
	if err != nil {
		log.Fatalln(err)
	}
}
