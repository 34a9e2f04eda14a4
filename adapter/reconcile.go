package adapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"

	aclient "github.com/agentree/agentree/adapter/client"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/periodic"
)

// Reconciler finishes work a gateway (or any Client caller) left half done
// when it died between its store write and its Temporal call:
//
//   - an execution PENDING with no workflow (killed between inserting the
//     row and starting the workflow) gets its workflow started, with the
//     first user entry appended if that was not written either;
//   - an inbox row never consumed (killed between storing a signal and
//     sending it) has its Temporal signal sent.
//
// Both are safe alongside a live gateway doing the same: a start uses the
// execution ID as workflow ID and never starts a second workflow (see
// client.StartOptions), and the workflow ignores a signal ID it already holds or
// that was consumed (entrystore.ErrSignalConsumed). Work younger than the
// grace age is left alone, so a request still in flight is not raced.
// Workers run it (Options.ReconcileInterval); a Postgres advisory lock lets
// one pass run at a time across all of them.
type Reconciler struct {
	tc     client.Client
	es     *entrystore.Store
	grace  time.Duration
	logger log.Logger
	// holderGrace is how long a worker-held execution's worker may be gone
	// before it fails (0: never).
	holderGrace time.Duration

	mu sync.Mutex
	// sent is when this process last sent each signal, so a signal the
	// agent holds but has not consumed yet (it is busy) is not sent again
	// every pass.
	sent map[string]time.Time
}

// resendAfter is how long before the same signal is sent again.
const resendAfter = time.Minute

// reconcileBatch bounds the rows one pass handles; the rest wait a pass.
const reconcileBatch = 200

// NewReconciler returns a reconciler that leaves work younger than grace
// alone. logger may be nil.
func NewReconciler(tc client.Client, es *entrystore.Store, grace time.Duration, logger log.Logger) *Reconciler {
	return &Reconciler{tc: tc, es: es, grace: grace, logger: logger, sent: map[string]time.Time{}}
}

// ReconcileReport is what one pass did.
type ReconcileReport struct {
	// Ran is false when another reconciler held the lock.
	Ran       bool
	Started   int
	Signalled int
	// HeldFailed counts worker-held executions failed because the worker
	// holding their store was gone past the grace period.
	HeldFailed int
}

// Run reconciles every interval until ctx ends; a failed pass is logged
// and the next one tried.
func (r *Reconciler) Run(ctx context.Context, interval time.Duration) {
	periodic.Every(ctx, interval, false, func(ctx context.Context) {
		rep, err := r.Once(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			r.log("reconcile pass failed", "error", err)
		case rep.Started+rep.Signalled > 0:
			r.log("reconciled half-done work", "started", rep.Started, "signalled", rep.Signalled)
		}
	})
}

func (r *Reconciler) log(msg string, kv ...any) {
	if r.logger != nil {
		r.logger.Warn(msg, kv...)
	}
}

// Once runs one pass, unless another reconciler is running one.
func (r *Reconciler) Once(ctx context.Context) (ReconcileReport, error) {
	var rep ReconcileReport
	ran, err := r.es.TryExclusive(ctx, "agentree-reconciler", func(ctx context.Context) error {
		execs, err := r.es.StalePendingExecutions(ctx, r.grace, reconcileBatch)
		if err != nil {
			return err
		}
		var errs []error
		for _, ex := range execs {
			started, err := r.start(ctx, ex)
			if err != nil {
				errs = append(errs, err)
			} else if started {
				rep.Started++
			}
		}
		sigs, err := r.es.StaleUnconsumedSignals(ctx, r.grace, reconcileBatch)
		if err != nil {
			return errors.Join(append(errs, err)...)
		}
		for _, s := range sigs {
			sent, err := r.signal(ctx, s)
			if err != nil {
				errs = append(errs, err)
			} else if sent {
				rep.Signalled++
			}
		}
		lost, err := r.failLostHeld(ctx)
		rep.HeldFailed = lost
		return errors.Join(append(errs, err)...)
	})
	rep.Ran = ran
	if err != nil {
		return rep, fmt.Errorf("adapter: reconcile: %w", err)
	}
	return rep, nil
}

// start starts the workflow of a PENDING execution that has none, and
// reports whether it did. The row's frozen input holds the first prompt;
// its entry is appended if missing.
func (r *Reconciler) start(ctx context.Context, ex entrystore.Execution) (bool, error) {
	_, err := r.tc.DescribeWorkflowExecution(ctx, ex.ID, "")
	var nf *serviceerror.NotFound
	if err == nil {
		return false, nil // started; its worker has not picked it up yet
	}
	if !errors.As(err, &nf) {
		return false, fmt.Errorf("describe execution %s: %w", ex.ID, err)
	}
	var input struct {
		UserPrompt string `json:"userPrompt"`
	}
	if err := json.Unmarshal(ex.Input, &input); err != nil || !aclient.StartsFrom(ex.Input) {
		// Not an execution Client.Start made; nothing to start it from.
		return false, fmt.Errorf("execution %s has no user prompt to start from", ex.ID)
	}
	first, err := aclient.FirstSegment(ctx, r.es, ex, input.UserPrompt)
	if err != nil {
		return false, err
	}
	// A gateway starting it at the same moment is harmless: see
	// client.StartOptions.
	// The start continues the trace of the request that created the
	// execution.
	if _, err := aclient.ExecuteWorkflow(aclient.WithTraceparent(ctx, ex.Traceparent), r.tc, aclient.StartOptions(ex), ex.Kind, first); err != nil {
		return false, fmt.Errorf("start execution %s: %w", ex.ID, err)
	}
	return true, nil
}

// signal sends an inbox row's Temporal signal unless this process sent it
// recently, and reports whether it sent it.
func (r *Reconciler) signal(ctx context.Context, s entrystore.Signal) (bool, error) {
	r.mu.Lock()
	last, ok := r.sent[s.ID]
	r.mu.Unlock()
	if ok && time.Since(last) < resendAfter {
		return false, nil
	}
	err := r.tc.SignalWorkflow(ctx, s.ExecutionID, "", SignalName, agentsdk.Signal{ID: s.ID, Name: s.Name})
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return false, nil // no workflow yet (started next pass) or ended
	}
	if err != nil {
		return false, fmt.Errorf("signal %s: %w", s.ID, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	r.sent[s.ID] = now
	for id, at := range r.sent {
		if now.Sub(at) > 2*resendAfter {
			delete(r.sent, id)
		}
	}
	return true, nil
}

// reconcilers are the reconcilers a plugin runs, one per worker started
// from it. A plugin is never handed the worker's client, so each dials a
// lazy client of its own with the options the plugin configured.
type reconcilers struct {
	mu      sync.Mutex
	options *client.Options
	running map[string]func()
	// queues are the workers' task queues, by instance key.
	queues map[string]string
}

func (rs *reconcilers) setQueue(instance, queue string) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.queues == nil {
		rs.queues = map[string]string{}
	}
	rs.queues[instance] = queue
}

func (rs *reconcilers) setClientOptions(co client.Options) {
	co.Plugins = nil // the copy is for a plain client: no second worker setup
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.options = &co
}

func (rs *reconcilers) start(instance string, o *Options) error {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.options == nil {
		// A worker given the plugin in its own options, not its client's:
		// there is no client configuration to reconcile with.
		return nil
	}
	tc, err := client.NewLazyClient(*rs.options)
	if err != nil {
		return fmt.Errorf("adapter: reconciler client: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	queue := rs.queues[instance]
	go func() {
		defer close(done)
		if o.PruneEvery > 0 && queue != "" {
			if err := ensurePruneSchedule(ctx, tc, queue, o.PruneEvery); err != nil && ctx.Err() == nil && rs.options.Logger != nil {
				rs.options.Logger.Warn("adapter: prune schedule", "queue", queue, "error", err)
			}
		}
		if o.ReconcileInterval > 0 {
			r := NewReconciler(tc, o.Store, o.ReconcileGrace, rs.options.Logger)
			r.holderGrace = o.HolderGrace
			r.Run(ctx, o.ReconcileInterval)
		}
	}()
	rs.running[instance] = func() {
		cancel()
		<-done
		tc.Close()
	}
	return nil
}

func (rs *reconcilers) stop(instance string) {
	rs.mu.Lock()
	stop := rs.running[instance]
	delete(rs.running, instance)
	rs.mu.Unlock()
	if stop != nil {
		stop()
	}
}
