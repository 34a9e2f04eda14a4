package sampleenv

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"

	"github.com/agentree/agentree/apiclient"
)

// OrgSlug is the organization every sample's executions belong to.
const OrgSlug = "samples"

// DirEnv names the directory where a sample's worker says where its
// gateway listens; default .data/samples (git-ignored, under the
// directory the samples run from).
const DirEnv = "AGENTREE_SAMPLES_DIR"

// Dir is where samples' workers publish their gateways (DirEnv).
func Dir() string {
	if d := os.Getenv(DirEnv); d != "" {
		return d
	}
	return filepath.Join(".data", "samples")
}

// Gateway is how a starter reaches its sample's worker: the REST API the
// worker serves beside its Temporal worker, the organization and an API
// key of it.
type Gateway struct {
	URL string `json:"url"`
	Org string `json:"org"`
	Key string `json:"key"`
	// OrgID is the organization's ID, for a starter that starts workflows
	// of its own whose input names it (the child-workflow sample).
	OrgID string `json:"orgId"`
}

// gatewayFile is where the worker of taskQueue publishes its gateway.
func gatewayFile(dir, taskQueue string) string { return filepath.Join(dir, taskQueue+".json") }

// Publish writes g as the gateway of the sample on taskQueue, readable by
// its owner only (it holds an API key), and returns a func that removes it.
func Publish(dir, taskQueue string, g Gateway) (func(), error) {
	b, err := json.Marshal(g)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("sampleenv: publish the gateway: %w", err)
	}
	path := gatewayFile(dir, taskQueue)
	// Written aside and renamed, so a starter never reads half a file.
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return nil, fmt.Errorf("sampleenv: publish the gateway: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return nil, fmt.Errorf("sampleenv: publish the gateway: %w", err)
	}
	return func() { _ = os.Remove(path) }, nil
}

// workerGrace is how long a starter waits for its sample's worker before
// it says none is running: long enough for a worker started alongside it,
// short enough that nobody stares at a silent terminal.
const workerGrace = 3 * time.Second

// retryEvery is how often Connect looks for the worker again.
const retryEvery = 250 * time.Millisecond

// Connect returns the REST client of the sample on taskQueue, once its
// worker runs (see ConnectIn).
func Connect(ctx context.Context, taskQueue string) (*apiclient.Client, error) {
	return ConnectIn(ctx, Dir(), taskQueue, os.Stderr)
}

// ConnectIn returns a REST client of the gateway the worker of taskQueue
// published in dir, once that gateway answers. Until then it keeps
// looking, and when workerGrace passes first it says once on w that no
// worker runs, with the command that starts one; a starter would
// otherwise wait in silence.
func ConnectIn(ctx context.Context, dir, taskQueue string, w io.Writer) (*apiclient.Client, error) {
	grace := time.NewTimer(workerGrace)
	defer grace.Stop()
	tick := time.NewTicker(retryEvery)
	defer tick.Stop()
	var last error // why the last attempt before ctx ended failed
	for {
		c, err := reach(ctx, dir, taskQueue)
		if err == nil {
			return c, nil
		}
		if last == nil || ctx.Err() == nil {
			last = err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("sampleenv: no worker of %q answered: %w (%w)", taskQueue, ctx.Err(), last)
		case <-grace.C:
			fmt.Fprintf(w, "\nno worker of task queue %q is running, so nothing runs yet; start one in another terminal:\n  %s\n(this starter keeps waiting)\n\n",
				taskQueue, WorkerCommand(taskQueue))
		case <-tick.C:
		}
	}
}

// Published is the gateway the worker of taskQueue published in dir.
func Published(dir, taskQueue string) (Gateway, error) {
	var g Gateway
	b, err := os.ReadFile(gatewayFile(dir, taskQueue))
	if err != nil {
		return g, err
	}
	if err := json.Unmarshal(b, &g); err != nil {
		return g, fmt.Errorf("sampleenv: %s: %w", gatewayFile(dir, taskQueue), err)
	}
	return g, nil
}

// reach reads the published gateway and asks it for the organization's
// capabilities: an answer means the worker and its gateway run.
func reach(ctx context.Context, dir, taskQueue string) (*apiclient.Client, error) {
	g, err := Published(dir, taskQueue)
	if err != nil {
		return nil, err
	}
	c, err := apiclient.New(g.URL, g.Org, g.Key)
	if err != nil {
		return nil, err
	}
	if err := c.Do(ctx, http.MethodGet, "/capabilities", nil, nil); err != nil {
		if errors.Is(err, apiclient.ErrUnreachable) {
			return nil, err
		}
		return nil, fmt.Errorf("sampleenv: the gateway of %q: %w", taskQueue, err)
	}
	return c, nil
}

// WorkerCommand is how to start the worker of the sample whose task queue
// is taskQueue: "agentree-research" → the research sample's worker;
// "agentree-a2a.specialist" → the a2a sample's second worker, the
// program samples/a2a/specialist (a sample of two deployments).
func WorkerCommand(taskQueue string) string {
	dir := strings.TrimPrefix(taskQueue, "agentree-") + "/worker"
	if sample, program, ok := strings.Cut(strings.TrimPrefix(taskQueue, "agentree-"), "."); ok {
		dir = sample + "/" + program
	}
	return "eval \"$(make -s env)\" && go run ./samples/" + dir
}

// DialTemporal connects to the Temporal server at TEMPORAL_ADDRESS
// (default localhost:7233), for a starter that starts workflows of its
// own (the child-workflow sample); agent executions are the gateway's.
// A worker passes the Agentree plugin.
func DialTemporal(plugins ...client.Plugin) (client.Client, error) {
	c, err := client.Dial(client.Options{
		HostPort: os.Getenv("TEMPORAL_ADDRESS"),
		Plugins:  plugins,
		// The SDK's default logger writes a DEBUG line per activity; the
		// samples' output is the agent's, so only warnings get through.
		Logger: tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))),
	})
	if err != nil {
		return nil, fmt.Errorf("sampleenv: connect to Temporal: %w", err)
	}
	return c, nil
}
