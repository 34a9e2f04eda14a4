// Command worker runs the coding sample's agent: the react-agent with the
// built-in tools in a sandbox and the scripted model, on the coding task queue.
package main

import (
	"flag"
	"log"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/samples/coding"
	"github.com/agentree/agentree/samples/internal/sampleworker"
)

func main() {
	dir := flag.String("dir", coding.DefaultDir(), "the sandbox: each execution gets a workspace under it")
	flag.Parse()
	log.Println("workspaces under", *dir)
	tools, err := coding.Tools(*dir)
	if err != nil {
		log.Fatalln(err)
	}
	err = sampleworker.Run(coding.TaskQueue, adapter.Options{
		Agents:    []agentsdk.Agent{react.New(react.Options{})},
		Providers: []agentsdk.Provider{scripted.New(coding.Script())},
		Tools:     tools,
	})
	if err != nil {
		log.Fatalln(err)
	}
}
