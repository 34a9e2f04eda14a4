// Command starter triages the example tickets: one triage workflow each,
// side by side, started with the Temporal client (the workflow is the
// sample's own code). It prints each decision and, read through the REST
// API, the conversation of the agent that informed it.
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
	// Connect waits for the sample's worker; its published gateway also
	// names the organization the agents' executions belong to.
	api, err := sampleenv.Connect(ctx, childworkflow.TaskQueue)
	if err != nil {
		log.Fatalln(err)
	}
	gw, err := sampleenv.Published(sampleenv.Dir(), childworkflow.TaskQueue)
	if err != nil {
		log.Fatalln(err)
	}
	tc, err := sampleenv.DialTemporal()
	if err != nil {
		log.Fatalln(err)
	}
	defer tc.Close()

	var runs []client.WorkflowRun
	for _, ticket := range childworkflow.ExampleTickets {
		opts := client.StartWorkflowOptions{ID: "triage-" + ticket.ID + "-" + uuid.NewString()[:8], TaskQueue: childworkflow.TaskQueue}
		run, err := tc.ExecuteWorkflow(ctx, opts, childworkflow.TriageWorkflowName, childworkflow.TriageInput{OrgID: gw.OrgID, Ticket: ticket})
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
		msgs, err := sampleenv.Conversation(ctx, api, out.AgentExecutionID)
		if err != nil {
			log.Fatalln(err)
		}
		sampleenv.Fprint(os.Stdout, msgs[1:]) // the prompt is the ticket above
		fmt.Println()
	}
}
