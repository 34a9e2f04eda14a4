// Command starter starts one research execution through the REST API and
// streams it: the model's tokens as they arrive and each tool call as it
// runs.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/agentsdk/tools/demo"
	"github.com/agentree/agentree/samples/internal/sampleenv"
	"github.com/agentree/agentree/samples/research"
)

func main() {
	prompt := flag.String("prompt", demo.Prompt, "the question to research")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// The REST client of the gateway the sample's worker serves.
	api, err := sampleenv.Connect(ctx, research.TaskQueue)
	if err != nil {
		log.Fatalln(err)
	}

	// POST …/agent-executions writes the execution row and the first user
	// entry to Postgres, then starts the workflow: its ID is the
	// execution ID.
	ex, err := sampleenv.Create(ctx, api, react.Kind, demo.Config(), *prompt)
	if err != nil {
		log.Fatalln("Unable to start the execution", err)
	}
	fmt.Printf("execution %s\nuser: %s\n\n", ex.GetId(), *prompt)

	// The execution's stream (SSE), followed to its end across every
	// continue-as-new of the execution.
	ex, err = sampleenv.Follow(ctx, api, ex.GetId(), os.Stdout, sampleenv.Ended)
	if err != nil {
		log.Fatalln(err)
	}
	fmt.Printf("\n%s (%s); the answer is entry %s\n", ex.GetStatus(), ex.GetStopReason(), ex.GetOutput().GetFields()["entryId"].GetStringValue())
}
