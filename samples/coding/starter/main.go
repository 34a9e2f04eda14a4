// Command starter gives the coding agent its task, streams the session and
// prints the file it wrote. It reads the workspace directly, so run it on
// the worker's machine with the same -dir.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentree/agentree/adapter/client"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/samples/coding"
	"github.com/agentree/agentree/samples/internal/sampleenv"
)

func main() {
	dir := flag.String("dir", coding.DefaultDir(), "the worker's sandbox")
	yes := flag.Bool("yes", false, "approve every call that waits for approval, without asking")
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
	ex, err = followApproving(ctx, conn, ex.ID, *yes)
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

// followApproving streams the execution to its end; each time it waits
// for approval it asks on the terminal (or, with yes, approves) every
// call waiting.
func followApproving(ctx context.Context, conn *sampleenv.Conn, id string, yes bool) (entrystore.Execution, error) {
	stream := sampleenv.NewStream(conn.Store, conn.Org.ID, id, os.Stdout)
	in := bufio.NewScanner(os.Stdin)
	for seq := 0; ; {
		ex, err := stream.Follow(ctx, func(ex entrystore.Execution) bool {
			return ex.Status.Terminal() || sampleenv.WaitingAfter(seq)(ex)
		})
		if err != nil || ex.Status.Terminal() {
			return ex, err
		}
		seq = ex.CheckpointSeq
		_, err = coding.DecidePending(ctx, conn.Store, conn.Agentree(coding.TaskQueue), conn.Org.ID, id,
			func(c entrystore.ToolCall) agentsdk.Decision {
				fmt.Printf("  ? %s %s — approve? [y/N] ", c.ToolName, c.Input)
				if yes {
					fmt.Println("y (-yes)")
					return agentsdk.Decision{Decision: agentsdk.DecisionApprove, DecidedBy: "starter"}
				}
				if in.Scan() && strings.EqualFold(strings.TrimSpace(in.Text()), "y") {
					return agentsdk.Decision{Decision: agentsdk.DecisionApprove, DecidedBy: "starter"}
				}
				return agentsdk.Decision{Decision: agentsdk.DecisionReject, Reason: "the user said no", DecidedBy: "starter"}
			})
		if err != nil {
			return ex, err
		}
	}
}
