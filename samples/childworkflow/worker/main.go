// Command worker runs the triage workflow, its activities and the triage
// agent on one task queue: the plugin registers the agent's workflow and
// activities, and the sample registers its own beside them.
package main

import (
	"log"
	"os"

	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/samples/childworkflow"
	"github.com/agentree/agentree/samples/childworkflow/triage"
	"github.com/agentree/agentree/samples/internal/sampleworker"
)

func main() {
	err := sampleworker.Run(childworkflow.TaskQueue, adapter.Options{
		Agents:    []agentsdk.Agent{react.New(react.Options{})},
		Providers: []agentsdk.Provider{scripted.New(childworkflow.TriageScript())},
		Tools:     []*agentsdk.Tool{childworkflow.LookupCustomer()},
	}, func(r worker.Registry) {
		r.RegisterWorkflowWithOptions(triage.Workflow, workflow.RegisterOptions{Name: childworkflow.TriageWorkflowName})
		r.RegisterActivity(&childworkflow.Activities{Log: os.Stdout})
	})
	if err != nil {
		log.Fatalln(err)
	}
}
