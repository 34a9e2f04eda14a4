// Command worker runs the approval agent: a custom agent registered with
// the plugin like the built-in one, on the custom-agent task queue, and
// the REST API that accepts its approve and reject signals.
package main

import (
	"log"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/samples/customagent"
	"github.com/agentree/agentree/samples/internal/sampleworker"
)

func main() {
	// Each agent in Agents becomes a workflow type named by its Kind.
	err := sampleworker.RunAccepting(customagent.Signals, customagent.TaskQueue, adapter.Options{
		Agents:    []agentsdk.Agent{customagent.New()},
		Providers: []agentsdk.Provider{scripted.New(customagent.DraftScript())},
	})
	if err != nil {
		log.Fatalln(err)
	}
}
