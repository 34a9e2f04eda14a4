// Command starter gives the coding agent its task, streams the session and
// prints the file it wrote. It reads the workspace directly, so run it on
// the worker's machine with the same -dir.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/agentree/agentree/adapter/client"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/samples/coding"
	"github.com/agentree/agentree/samples/internal/sampleenv"
)

func main() {
	dir := flag.String("dir", coding.DefaultDir(), "the worker's sandbox")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	conn, err := sampleenv.Connect(ctx)
	if err != nil {
		log.Fatalln(err)
	}
	defer conn.Close()

	ex, err := conn.Agentree(coding.TaskQueue).Start(ctx, client.StartRequest{
		OrgID: conn.Org.ID, Kind: react.Kind, Config: coding.Config(), UserPrompt: coding.Prompt,
	})
	if err != nil {
		log.Fatalln("Unable to start the execution", err)
	}
	fmt.Printf("execution %s\nuser: %s\n\n", ex.ID, coding.Prompt)
	ex, err = sampleenv.Follow(ctx, conn.Store, conn.Org.ID, ex.ID, os.Stdout, sampleenv.Ended)
	if err != nil {
		log.Fatalln(err)
	}
	if ex.Status != entrystore.StatusCompleted {
		log.Fatalf("the execution ended %s: %s", ex.Status, ex.Error)
	}

	path := filepath.Join(*dir, ex.ID, coding.GreetPath)
	b, err := os.ReadFile(path)
	if err != nil {
		log.Fatalln("The agent's file is not in the workspace", err)
	}
	fmt.Printf("\n%s:\n%s", path, b)
}
