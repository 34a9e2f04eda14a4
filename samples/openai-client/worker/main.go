// Command worker runs the openai-client sample's agent (the react-agent
// and its scripted model) on the sample's task queue, with the gateway
// whose /v1 the starter's OpenAI SDK talks to.
package main

import (
	"log"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/samples/internal/sampleworker"
	openaiclient "github.com/agentree/agentree/samples/openai-client"
)

func main() {
	err := sampleworker.Run(openaiclient.TaskQueue, adapter.Options{
		Agents:    []agentsdk.Agent{react.New(react.Options{})},
		Providers: []agentsdk.Provider{scripted.New(openaiclient.Script())},
	})
	if err != nil {
		log.Fatalln(err)
	}
}
