package adapter

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/periodic"
)

// Defaults for how workers advertise what they serve.
const (
	// DefaultCapabilityInterval: a worker re-records its capabilities
	// this often.
	DefaultCapabilityInterval = 10 * time.Second
	// DefaultCapabilityLease: a record not refreshed for this long stops
	// counting, so a worker that died unannounced drops out within three
	// intervals while one slow refresh does not.
	DefaultCapabilityLease = 30 * time.Second
)

// capabilities keeps each running worker's row in worker_capability
// fresh: recorded when the worker starts (before it polls, so a gateway
// accepts work for it as soon as it can run it), every interval while it
// runs, and deleted when it stops cleanly. A worker killed outright is
// dropped by its lease running out.
//
// Capabilities are not org-scoped: a worker serves every organization.
type capabilities struct {
	o *Options

	mu        sync.Mutex
	namespace string
	clientID  string
	pending   map[string]capKey        // worker instance key → its row, from ConfigureWorker
	running   map[string]*capRecording // worker instance key → its refresher
}

type capKey struct{ identity, queue string }

type capRecording struct {
	key    capKey
	cancel context.CancelFunc
	done   chan struct{}
}

func newCapabilities(o *Options) *capabilities {
	return &capabilities{o: o, pending: map[string]capKey{}, running: map[string]*capRecording{}}
}

// configureClient notes the client's namespace and identity: workers
// built from it report them.
func (c *capabilities) configureClient(co *client.Options) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.namespace, c.clientID = co.Namespace, co.Identity
	if c.namespace == "" {
		c.namespace = client.DefaultNamespace
	}
}

// configureWorker notes which identity and queue the worker instance will
// record; only this hook sees the task queue.
func (c *capabilities) configureWorker(wo worker.PluginConfigureWorkerOptions) {
	c.mu.Lock()
	defer c.mu.Unlock()
	id := wo.WorkerOptions.Identity
	if id == "" {
		id = c.clientID
	}
	if id == "" {
		// What the SDK names a client (and so its workers) by default.
		host, _ := os.Hostname()
		id = fmt.Sprintf("%d@%s@", os.Getpid(), host)
	}
	c.pending[wo.WorkerInstanceKey] = capKey{identity: id, queue: wo.TaskQueue}
}

// start records the worker's capabilities once, failing the worker's
// start if it cannot, then refreshes them every interval until stop.
func (c *capabilities) start(ctx context.Context, ro temporal.SimplePluginRunContextBeforeOptions) error {
	if ro.WorkflowReplayer {
		return nil
	}
	c.mu.Lock()
	key, ok := c.pending[ro.InstanceKey]
	delete(c.pending, ro.InstanceKey)
	c.mu.Unlock()
	if !ok {
		return fmt.Errorf("adapter: worker %s started without being configured by the plugin", ro.InstanceKey)
	}
	row := c.row(key)
	if err := c.o.Store.RecordCapability(ctx, row, c.o.CapabilityLease); err != nil {
		return fmt.Errorf("adapter: record worker capabilities: %w", err)
	}
	// Should the worker then fail to start, the SDK calls no stop hook: the
	// row is refreshed until the process exits, and its lease then runs
	// out, as for any worker that dies.
	rctx, cancel := context.WithCancel(context.Background())
	rec := &capRecording{key: key, cancel: cancel, done: make(chan struct{})}
	c.mu.Lock()
	c.running[ro.InstanceKey] = rec
	c.mu.Unlock()
	go func() {
		defer close(rec.done)
		periodic.Every(rctx, c.o.CapabilityInterval, false, func(ctx context.Context) {
			// A failed refresh is retried at the next tick; the lease
			// spans several, so one database hiccup changes nothing.
			_ = c.o.Store.RecordCapability(ctx, row, c.o.CapabilityLease)
		})
	}()
	return nil
}

// stop ends the worker's refreshes and deletes its row, unless another
// worker of this plugin still running has the same identity and queue.
func (c *capabilities) stop(ro temporal.SimplePluginRunContextAfterOptions) {
	c.mu.Lock()
	rec, ok := c.running[ro.InstanceKey]
	delete(c.running, ro.InstanceKey)
	shared := false
	for _, other := range c.running {
		shared = shared || (ok && other.key == rec.key)
	}
	c.mu.Unlock()
	if !ok {
		return
	}
	rec.cancel()
	<-rec.done
	if shared {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// Best effort: if the delete fails the lease still runs out.
	_ = c.o.Store.DeleteCapability(ctx, rec.key.identity, rec.key.queue)
}

// row is what the worker records.
func (c *capabilities) row(key capKey) entrystore.WorkerCapability {
	c.mu.Lock()
	ns := c.namespace
	c.mu.Unlock()
	row := entrystore.WorkerCapability{
		Identity: key.identity, TaskQueue: key.queue, Namespace: ns, Version: c.o.Version,
		Kinds: []string{}, Tools: []entrystore.CapabilityTool{}, Models: []entrystore.CapabilityModels{},
	}
	for _, a := range c.o.Agents {
		row.Kinds = append(row.Kinds, a.Kind())
	}
	op := c.o.operator()
	for _, name := range c.o.tools.Names() {
		t := c.o.tools[name]
		s := t.Spec()
		ct := entrystore.CapabilityTool{Name: s.Name, Description: s.Description, Parameters: s.Parameters, Orgs: t.Orgs,
			Policy: string(op.PolicyCeiling(unconfiguredOrg, name, t)), ReadOnly: t.ReadOnly}
		for org := range op.Orgs {
			if p := string(op.PolicyCeiling(org, name, t)); p != ct.Policy {
				if ct.OrgPolicies == nil {
					ct.OrgPolicies = map[string]string{}
				}
				ct.OrgPolicies[org] = p
			}
		}
		row.Tools = append(row.Tools, ct)
	}
	for _, e := range c.o.endpoints.Infos() {
		row.Models = append(row.Models, entrystore.CapabilityModels{Name: e.Name, Provider: e.Provider, Models: e.Models, Priced: e.Priced})
	}
	return row
}

// unconfiguredOrg stands for any organization Options.OrgTools does not
// name: no organization ID is empty.
const unconfiguredOrg = ""

// moduleVersion is the version workers report by default: the main
// module's as the Go toolchain stamped it, or for a build from a checkout
// ("(devel)") its VCS revision, marked -dirty if it had local changes.
func moduleVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "devel"
	}
	if dirty {
		return rev[:min(12, len(rev))] + "-dirty"
	}
	return rev[:min(12, len(rev))]
}
