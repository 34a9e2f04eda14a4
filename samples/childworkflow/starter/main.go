// Command starter triages the example tickets: one triage workflow each,
// side by side. It prints each decision and the conversation of the agent
// that informed it.
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/client"

	"github.com/agentree/agentree/samples/childworkflow"
	"github.com/agentree/agentree/samples/internal/sampleenv"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	conn, err := sampleenv.Connect(ctx)
	if err != nil {
		log.Fatalln(err)
	}
	defer conn.Close()
	conn.WatchForWorker(childworkflow.TaskQueue)

	var runs []client.WorkflowRun
	for _, ticket := range childworkflow.ExampleTickets {
		opts := client.StartWorkflowOptions{ID: "triage-" + ticket.ID + "-" + uuid.NewString()[:8], TaskQueue: childworkflow.TaskQueue}
		run, err := conn.Temporal.ExecuteWorkflow(ctx, opts, childworkflow.TriageWorkflowName, childworkflow.TriageInput{OrgID: conn.Org.ID, Ticket: ticket})
		if err != nil {
			log.Fatalln("Unable to start the workflow", err)
		}
		runs = append(runs, run)
	}
	for i, run := range runs {
		var out childworkflow.TriageOutput
		if err := run.Get(ctx, &out); err != nil {
			log.Fatalln("The workflow failed", err)
		}
		t := childworkflow.ExampleTickets[i]
		fmt.Printf("%s from %s: %q\n  severity %s → %s\n  the agent's execution %s:\n", t.ID, t.Customer, t.Subject, out.Verdict.Severity, out.Action, out.AgentExecutionID)
		ex, err := conn.Store.GetExecution(ctx, conn.Org.ID, out.AgentExecutionID)
		if err != nil {
			log.Fatalln(err)
		}
		msgs, err := sampleenv.ConversationOf(ctx, conn.Store, ex)
		if err != nil {
			log.Fatalln(err)
		}
		sampleenv.Fprint(os.Stdout, msgs[1:]) // the prompt is the ticket above
		fmt.Println()
	}
}
