package sampleworker

import (
	"context"
	"fmt"

	"go.temporal.io/sdk/worker"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/samples/internal/sampleenv"
)

// Run is every sample's worker: it connects to Postgres, builds the
// Agentree plugin from opts (Store is set here), dials Temporal with it and
// runs a worker on taskQueue until interrupted. The plugin registers one
// workflow per agent kind and the model-call, tool-call and store
// activities on every worker made from the client; register adds the
// sample's own workflows and activities beside them.
func Run(taskQueue string, opts adapter.Options, register ...func(worker.Registry)) error {
	store, closeStore, err := sampleenv.OpenStore(context.Background())
	if err != nil {
		return err
	}
	defer closeStore()
	opts.Store = store
	plugin, err := adapter.NewPlugin(opts)
	if err != nil {
		return fmt.Errorf("sampleworker: the Agentree plugin: %w", err)
	}
	c, err := sampleenv.Dial(store, plugin)
	if err != nil {
		return err
	}
	defer c.Close()
	w := worker.New(c, taskQueue, worker.Options{})
	for _, r := range register {
		r(w)
	}
	if err := w.Run(worker.InterruptCh()); err != nil {
		return fmt.Errorf("sampleworker: worker: %w", err)
	}
	return nil
}
