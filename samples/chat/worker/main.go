// Command worker runs the chat sample's agent: the react-agent and the
// scripted chat model, on the chat task queue.
package main

import (
	"log"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/samples/chat"
	"github.com/agentree/agentree/samples/internal/sampleworker"
)

func main() {
	err := sampleworker.Run(chat.TaskQueue, adapter.Options{
		Agents:    []agentsdk.Agent{react.New(react.Options{})},
		Providers: []agentsdk.Provider{scripted.New(chat.Script())},
	})
	if err != nil {
		log.Fatalln(err)
	}
}
