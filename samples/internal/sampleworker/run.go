package sampleworker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"

	"go.temporal.io/sdk/worker"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/gateway"
	"github.com/agentree/agentree/samples/internal/sampleenv"
)

// Run is every sample's worker: it connects to Postgres, builds the
// Agentree plugin from opts (Store is set here), dials Temporal with it,
// runs a worker on taskQueue and the REST gateway for it until
// interrupted. The plugin registers one workflow per agent kind and the
// model-call, tool-call and store activities on every worker made from the
// client; register adds the sample's own workflows and activities beside
// them. The gateway accepts the userMessage signal.
func Run(taskQueue string, opts adapter.Options, register ...func(worker.Registry)) error {
	return RunAccepting(nil, taskQueue, opts, register...)
}

// RunAccepting is Run for a sample whose agent waits for signals of its
// own: the gateway accepts those names (and userMessage).
func RunAccepting(signals []string, taskQueue string, opts adapter.Options, register ...func(worker.Registry)) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	url := os.Getenv("DATABASE_URL")
	if url == "" {
		return errors.New(`DATABASE_URL is not set: run "make up" and eval "$(make -s env)"`)
	}
	store, err := adapter.OpenStore(ctx, url)
	if err != nil {
		return fmt.Errorf("sampleworker: %w", err)
	}
	defer store.Pool().Close()
	opts.Store = store
	plugin, err := adapter.NewPlugin(opts)
	if err != nil {
		return fmt.Errorf("sampleworker: the Agentree plugin: %w", err)
	}
	c, err := sampleenv.DialTemporal(plugin)
	if err != nil {
		return err
	}
	defer c.Close()
	w := worker.New(c, taskQueue, worker.Options{})
	for _, r := range register {
		r(w)
	}
	// Started before the gateway serves: starting records the worker's
	// capabilities, which the gateway checks each create against.
	if err := w.Start(); err != nil {
		return fmt.Errorf("sampleworker: worker: %w", err)
	}
	defer w.Stop()
	gw, err := Listen(ctx, gateway.Options{Store: store, Temporal: c, TaskQueue: taskQueue, Signals: signals}, sampleenv.OrgSlug, "127.0.0.1:0")
	if err != nil {
		return err
	}
	unpublish, err := sampleenv.Publish(sampleenv.Dir(), taskQueue, gw.Gateway)
	if err != nil {
		gw.Close()
		return err
	}
	defer unpublish()
	fmt.Fprintf(os.Stderr, "worker on task queue %q; its REST API at %s/api/orgs/%s (run the sample's starter in another terminal)\n",
		taskQueue, gw.URL, gw.Org)
	if err := gw.Serve(ctx); err != nil && ctx.Err() == nil {
		return err
	}
	return nil
}
