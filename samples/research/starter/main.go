// Command starter starts one research execution and streams it: the model's
// tokens as they arrive and each tool call as it runs.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/agentree/agentree/adapter/client"
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
	conn, err := sampleenv.Connect(ctx)
	if err != nil {
		log.Fatalln(err)
	}
	defer conn.Close()

	// Start writes the execution row and the first user entry to Postgres,
	// then starts the workflow: its ID is the execution ID.
	ac := conn.Agentree(research.TaskQueue)
	ex, err := ac.Start(ctx, client.StartRequest{
		OrgID: conn.Org.ID, Kind: react.Kind, Config: demo.Config(), UserPrompt: *prompt,
	})
	if err != nil {
		log.Fatalln("Unable to start the execution", err)
	}
	fmt.Printf("execution %s\nuser: %s\n\n", ex.ID, *prompt)

	if _, err := sampleenv.Follow(ctx, conn.Store, conn.Org.ID, ex.ID, os.Stdout, sampleenv.Ended); err != nil {
		log.Fatalln(err)
	}
	// The workflow's result, after every continue-as-new of the execution.
	res, err := ac.Wait(ctx, ex.ID)
	if err != nil {
		log.Fatalln("The execution failed", err)
	}
	fmt.Printf("\n%s (%s); the answer is entry %s\n", res.Status, res.StopReason, res.LeafID)
}
