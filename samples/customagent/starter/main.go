// Command starter asks the approval agent for a draft through the REST API
// and reviews it: by default as a scripted editor (reject the first draft,
// approve the second); with -ask, you decide at the terminal.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"strings"
	"time"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/samples/customagent"
	"github.com/agentree/agentree/samples/internal/sampleenv"
)

func main() {
	ask := flag.Bool("ask", false, "review the drafts yourself")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	api, err := sampleenv.Connect(ctx, customagent.TaskQueue)
	if err != nil {
		log.Fatalln(err)
	}

	ex, err := sampleenv.Create(ctx, api, customagent.Kind, customagent.Config(customagent.Settings{}), customagent.Prompt)
	if err != nil {
		log.Fatalln("Unable to start the execution", err)
	}
	fmt.Printf("execution %s\nuser: %s\n\n", ex.GetId(), customagent.Prompt)

	reviewer := customagent.Reviewer(customagent.Editor)
	if *ask {
		reviewer = terminalReviewer(bufio.NewScanner(os.Stdin))
	}
	ex, err = customagent.Review(ctx, api, ex.GetId(), reviewer, os.Stdout)
	if err != nil {
		log.Fatalln(err)
	}
	if ex.GetStatus() != "COMPLETED" {
		log.Fatalf("The execution ended %s: %s", ex.GetStatus(), ex.GetError())
	}
	// The execution's output is its last entry, the approval; the approved
	// draft is the assistant message before it.
	msgs, err := sampleenv.Conversation(ctx, api, ex.GetId())
	if err != nil {
		log.Fatalln(err)
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].GetRole() == string(agentsdk.RoleAssistant) {
			fmt.Printf("\n%s (%s: %s)\napproved draft: %s\n", ex.GetStatus(), ex.GetStopReason(), sampleenv.OutputText(ex), sampleenv.Text(msgs[i]))
			break
		}
	}
}

// terminalReviewer asks at the terminal: an empty answer or "y" approves,
// anything else rejects with that as the note.
func terminalReviewer(in *bufio.Scanner) customagent.Reviewer {
	return func(n int, _ string) (string, customagent.Decision) {
		fmt.Printf("\ndraft %d: approve? [Y, or a note to reject with] ", n)
		in.Scan()
		answer := strings.TrimSpace(in.Text())
		if answer == "" || strings.EqualFold(answer, "y") {
			return customagent.SignalApprove, customagent.Decision{By: "you"}
		}
		return customagent.SignalReject, customagent.Decision{By: "you", Note: answer}
	}
}
