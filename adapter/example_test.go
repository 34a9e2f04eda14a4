package adapter_test

import (
	"context"
	"log"
	"os"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/agentsdk/tools/demo"
)

// ExampleNewPlugin is a worker: the plugin on a Temporal client makes
// every worker of that client run the agents (one workflow type per kind)
// and their model, tool and store activities. It needs Postgres (the
// schema migrated: agentree migrate) and Temporal, so it has no Output:
// it compiles but does not run. samples/research/worker is the same,
// runnable.
func ExampleNewPlugin() {
	ctx := context.Background()
	store, err := adapter.OpenStore(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer store.Pool().Close()

	plugin, err := adapter.NewPlugin(adapter.Options{
		Store:     store,
		Agents:    []agentsdk.Agent{react.New(react.Options{})},
		Providers: []agentsdk.Provider{demo.Model()}, // a scripted model: no API key
		Tools:     demo.Tools(),
	})
	if err != nil {
		log.Fatal(err)
	}
	c, err := client.Dial(client.Options{HostPort: os.Getenv("TEMPORAL_ADDRESS"), Plugins: []client.Plugin{plugin}})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	w := worker.New(c, "agentree", worker.Options{})
	if err := w.Run(worker.InterruptCh()); err != nil {
		log.Fatal(err)
	}
}
