// Command starter asks the approval agent for a draft and reviews it: by
// default as a scripted editor (reject the first draft, approve the
// second); with -ask, you decide at the terminal.
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

	"github.com/agentree/agentree/adapter/client"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/samples/customagent"
	"github.com/agentree/agentree/samples/internal/sampleenv"
)

func main() {
	ask := flag.Bool("ask", false, "review the drafts yourself")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	conn, err := sampleenv.Connect(ctx)
	if err != nil {
		log.Fatalln(err)
	}
	defer conn.Close()

	ac := conn.Agentree(customagent.TaskQueue)
	ex, err := ac.Start(ctx, client.StartRequest{
		OrgID: conn.Org.ID, Kind: customagent.Kind, Config: customagent.Config(customagent.Settings{}), UserPrompt: customagent.Prompt,
	})
	if err != nil {
		log.Fatalln("Unable to start the execution", err)
	}
	fmt.Printf("execution %s\nuser: %s\n\n", ex.ID, customagent.Prompt)

	reviewer := customagent.Reviewer(customagent.Editor)
	if *ask {
		reviewer = terminalReviewer(bufio.NewScanner(os.Stdin))
	}
	if _, err := customagent.Review(ctx, ac, conn.Store, conn.Org.ID, ex.ID, reviewer, os.Stdout); err != nil {
		log.Fatalln(err)
	}
	res, err := ac.Wait(ctx, ex.ID)
	if err != nil {
		log.Fatalln("The execution failed:", err)
	}
	// The execution's output is its last entry, the approval; the approved
	// draft is the assistant message before it.
	msgs, err := sampleenv.Conversation(ctx, conn.Store, conn.Org.ID, res.LeafID)
	if err != nil {
		log.Fatalln(err)
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == agentsdk.RoleAssistant {
			fmt.Printf("\n%s (%s: %s)\napproved draft: %s\n", res.Status, res.StopReason, res.Text, msgs[i].Text())
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
