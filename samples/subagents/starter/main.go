// Command starter gives the sub-agents sample's lead its question, streams
// it, and lists the sub-agents it spawned.
package main

import (
	"context"
	"log"
	"os"
	"time"

	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/samples/internal/sampleenv"
	"github.com/agentree/agentree/samples/subagents"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	conn, err := sampleenv.Connect(ctx)
	if err != nil {
		log.Fatalln(err)
	}
	defer conn.Close()
	ex, _, err := subagents.Run(ctx, conn.Agentree(subagents.TaskQueue), conn.Store, conn.Org.ID, os.Stdout)
	if err != nil {
		log.Fatalln(err)
	}
	if ex.Status != entrystore.StatusCompleted {
		log.Fatalf("the lead ended %s: %s", ex.Status, ex.Error)
	}
}
