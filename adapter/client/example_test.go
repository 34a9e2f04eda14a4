package client_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	aclient "github.com/agentree/agentree/adapter/client"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/entrystore"
)

// ExampleClient_Start starts an execution at the Temporal level and waits
// for its result: what the gateway does for POST …/agent-executions. A
// program that is not a gateway should use the REST client (apiclient)
// instead; this one needs Postgres and Temporal (it has no Output, so it
// compiles but does not run).
func ExampleClient_Start() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	es := entrystore.New(pool)
	// The storage driver reads back results a worker offloaded to the
	// content store.
	tc, err := client.Dial(client.Options{
		HostPort:        os.Getenv("TEMPORAL_ADDRESS"),
		ExternalStorage: converter.ExternalStorage{Drivers: []converter.StorageDriver{aclient.NewStorageDriver(es)}},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer tc.Close()
	org, err := es.EnsureOrg(ctx, "acme")
	if err != nil {
		log.Fatal(err)
	}

	ac := aclient.NewClient(tc, es, entrystore.DefaultQueue)
	ex, err := ac.Start(ctx, aclient.StartRequest{
		OrgID:      org.ID,
		Kind:       react.Kind,
		Config:     agentsdk.Config{Models: []agentsdk.ModelRef{{Provider: "anthropic", ModelID: "claude-sonnet-4-5"}}},
		UserPrompt: "Summarise the last incident report.",
	})
	if err != nil {
		log.Fatal(err)
	}
	res, err := ac.Wait(ctx, ex.ID) // after every continue-as-new of the execution
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Status, res.Text)
}

// ExampleStartOptions shows the workflow conventions: the workflow ID is
// the execution ID, the task queue the execution row's, and a second
// start of the same execution reuses the running workflow.
func ExampleStartOptions() {
	opts := aclient.StartOptions(entrystore.Execution{ID: "3058a38e-0000-4000-8000-000000000001", Queue: entrystore.DefaultQueue})
	fmt.Println(opts.ID, opts.TaskQueue, opts.WorkflowTaskTimeout)
	fmt.Println(opts.WorkflowIDConflictPolicy, opts.WorkflowIDReusePolicy)
	// Output:
	// 3058a38e-0000-4000-8000-000000000001 agentree 5s
	// UseExisting RejectDuplicate
}
