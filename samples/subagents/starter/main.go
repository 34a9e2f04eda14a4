// Command starter gives the sub-agents sample's lead its question through
// the REST API, streams it, and lists the sub-agents it spawned.
package main

import (
	"context"
	"log"
	"os"
	"time"

	"github.com/agentree/agentree/samples/internal/sampleenv"
	"github.com/agentree/agentree/samples/subagents"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	api, err := sampleenv.Connect(ctx, subagents.TaskQueue)
	if err != nil {
		log.Fatalln(err)
	}
	ex, _, err := subagents.Run(ctx, api, os.Stdout)
	if err != nil {
		log.Fatalln(err)
	}
	if ex.GetStatus() != "COMPLETED" {
		log.Fatalf("the lead ended %s: %s", ex.GetStatus(), ex.GetError())
	}
}
