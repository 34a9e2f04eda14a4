// Command starter gives the coding agent its task through the REST API,
// streams the session, decides each call that waits for approval, and
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

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/apiclient"
	agentreev1 "github.com/agentree/agentree/proto/agentree/v1"
	"github.com/agentree/agentree/samples/coding"
	"github.com/agentree/agentree/samples/internal/sampleenv"
)

func main() {
	dir := flag.String("dir", coding.DefaultDir(), "the worker's sandbox")
	yes := flag.Bool("yes", false, "approve every call that waits for approval, without asking")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	api, err := sampleenv.Connect(ctx, coding.TaskQueue)
	if err != nil {
		log.Fatalln(err)
	}

	ex, err := sampleenv.Create(ctx, api, react.Kind, coding.Config(), coding.Prompt)
	if err != nil {
		log.Fatalln("Unable to start the execution", err)
	}
	fmt.Printf("execution %s\nuser: %s\n\n", ex.GetId(), coding.Prompt)
	ex, err = followApproving(ctx, api, ex.GetId(), *yes)
	if err != nil {
		log.Fatalln(err)
	}
	if ex.GetStatus() != "COMPLETED" {
		log.Fatalf("the execution ended %s: %s", ex.GetStatus(), ex.GetError())
	}

	path := filepath.Join(*dir, ex.GetId(), coding.GreetPath)
	b, err := os.ReadFile(path)
	if err != nil {
		log.Fatalln("The agent's file is not in the workspace", err)
	}
	fmt.Printf("\n%s:\n%s", path, b)
}

// followApproving streams the execution to its end; each time it waits
// for approval it asks on the terminal (or, with yes, approves) every
// call waiting.
func followApproving(ctx context.Context, api *apiclient.Client, id string, yes bool) (*agentreev1.AgentExecution, error) {
	stream := sampleenv.NewStream(api, id, os.Stdout)
	in := bufio.NewScanner(os.Stdin)
	for {
		ex, err := stream.Follow(ctx, func(ev apiclient.Event) bool { return sampleenv.Ended(ev) || sampleenv.Waiting(ev) })
		if err != nil || ex.GetStatus() != "WAITING" {
			return ex, err
		}
		_, err = coding.DecidePending(ctx, api, id, func(c *agentreev1.ToolCall) (string, string) {
			args, _ := c.GetInput().MarshalJSON()
			fmt.Printf("  ? %s %s — approve? [y/N] ", c.GetToolName(), args)
			if yes {
				fmt.Println("y (-yes)")
				return agentsdk.DecisionApprove, ""
			}
			if in.Scan() && strings.EqualFold(strings.TrimSpace(in.Text()), "y") {
				return agentsdk.DecisionApprove, ""
			}
			return agentsdk.DecisionReject, "the user said no"
		})
		if err != nil {
			return ex, err
		}
	}
}
