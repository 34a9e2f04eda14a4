package adapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agentree/agentree/adapter/client"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/event"
	"github.com/agentree/agentree/entrystore"
)

// workerHeldChange is the change that runs executions in persistenceMode local
// on the queue of the worker holding their store.
const workerHeldChange = "adapter.local-mode"

// WorkerQueue is the task queue only the worker named name polls, beside
// the shared queue: where the executions whose store it holds run (named
// in the client package, whose held reads go there too).
var WorkerQueue = client.WorkerQueue

// ErrTypeNoWorkerStore fails a worker-held execution that reached a worker
// without a worker store before any worker with one took it.
const ErrTypeNoWorkerStore = "AgentreeNoLocalStore"

// HolderClaimInput asks which worker holds a worker-held execution's store
// (claiming it for this worker if none does yet); with First, the
// holder appends the execution's first user entry to its store.
type HolderClaimInput struct {
	OrgID       string `json:"orgId"`
	ExecutionID string `json:"executionId"`
	First       bool   `json:"first,omitempty"`
}

// HolderClaim is where a worker-held execution's store lives.
type HolderClaim struct {
	Worker string `json:"worker"`
	Queue  string `json:"queue"`
	// FirstEntryID is the first user entry, when asked for and this worker
	// holds the store.
	FirstEntryID string `json:"firstEntryId,omitempty"`
}

// toWorkerQueue routes a worker-held execution's run: on a worker other than the
// one holding its store it returns that worker's queue, to continue as
// new there; on the holder it returns "" and, for the first run, sets the
// first user entry (appended to the holder's store) as the leaf.
func (r *segmentRunner) toWorkerQueue(ctx workflow.Context, changes map[string]int, in *SegmentInput) (string, error) {
	if version(ctx, changes, workerHeldChange, 1) == workflow.DefaultVersion {
		return "", nil
	}
	var claim HolderClaim
	lctx := workflow.WithLocalActivityOptions(ctx, r.opts.localOptions())
	err := workflow.ExecuteLocalActivity(lctx, r.opts.claimLocal,
		HolderClaimInput{OrgID: in.OrgID, ExecutionID: in.ExecutionID, First: in.Sequence == 0 && in.LeafID == ""}).Get(ctx, &claim)
	if err != nil {
		return "", err
	}
	if workflow.GetInfo(ctx).TaskQueueName != claim.Queue {
		return claim.Queue, nil
	}
	if claim.FirstEntryID != "" {
		in.LeafID = claim.FirstEntryID
	}
	return "", nil
}

// claimLocal is the local activity of toWorkerQueue. Its name is the
// local-activity type recorded in histories (the SDK names a local
// activity given as a function after it): keep it.
func (o *Options) claimLocal(ctx context.Context, in HolderClaimInput) (HolderClaim, error) {
	ex, err := o.Store.GetExecution(ctx, in.OrgID, in.ExecutionID)
	if err != nil {
		return HolderClaim{}, storeError(err)
	}
	if ex.Holder == "" && o.WorkerStore == nil {
		msg := fmt.Sprintf("execution %s is in persistenceMode local, and the worker that took it has no worker store (set localStore.dir in its configuration)", ex.ID)
		_, _ = o.Store.Transition(ctx, in.OrgID, in.ExecutionID, entrystore.Transition{To: entrystore.StatusFailed, Error: msg})
		_ = pgStore{es: o.Store}.Publish(ctx, in.OrgID, in.ExecutionID, event.Failed{AgentExecutionID: ex.ID, Status: string(entrystore.StatusFailed), Error: msg})
		return HolderClaim{}, temporal.NewNonRetryableApplicationError(msg, ErrTypeNoWorkerStore, nil)
	}
	worker := ex.Holder
	if worker == "" {
		if worker, _, err = o.Store.ClaimHolder(ctx, in.OrgID, in.ExecutionID, o.WorkerName, WorkerQueue(ex.Queue, o.WorkerName)); err != nil {
			return HolderClaim{}, storeError(err)
		}
	}
	claim := HolderClaim{Worker: worker, Queue: WorkerQueue(ex.Queue, worker)}
	if worker != o.WorkerName || !in.First || o.WorkerStore == nil {
		return claim, nil
	}
	var start struct {
		UserPrompt string `json:"userPrompt"`
	}
	_ = json.Unmarshal(ex.Input, &start)
	content, _ := json.Marshal(agentsdk.TextMessage(agentsdk.RoleUser, start.UserPrompt))
	first, err := o.WorkerStore.AppendEntries(ctx, in.OrgID, []agentsdk.Entry{{
		ExecutionID: ex.ID, Type: agentsdk.EntryMessage, Role: agentsdk.RoleUser, Content: content, IdempotencyKey: entrystore.InputKey(ex.ID),
	}})
	if err != nil {
		return HolderClaim{}, err
	}
	claim.FirstEntryID = first[0].ID
	return claim, nil
}

// UnavailableWorkerStore is the error of a worker-held execution failed because
// the worker holding its store was gone past the grace period.
func UnavailableWorkerStore(worker string, gone time.Duration) string {
	return fmt.Sprintf("its worker store lives on worker %s, which is unavailable (gone for %s, past the grace period)", worker, gone.Round(time.Second))
}

// failLostHeld fails the live worker-held executions whose worker has been
// gone (no live capability on its queue) longer than grace, and returns
// how many it failed. A worker back in time clears the clock.
func (r *Reconciler) failLostHeld(ctx context.Context) (int, error) {
	if r.holderGrace <= 0 {
		return 0, nil
	}
	hs, err := r.es.Holdings(ctx, reconcileBatch)
	if err != nil {
		return 0, err
	}
	failed := 0
	var errs []error
	for _, h := range hs {
		if h.Live {
			if h.MissingSince != nil {
				_, err = r.es.SetHolderMissing(ctx, h.OrgID, h.ExecutionID, nil)
				errs = append(errs, err)
			}
			continue
		}
		now := time.Now()
		since, err := r.es.SetHolderMissing(ctx, h.OrgID, h.ExecutionID, &now)
		if err != nil || since == nil || now.Sub(*since) < r.holderGrace {
			errs = append(errs, err)
			continue
		}
		msg := UnavailableWorkerStore(h.Worker, now.Sub(*since))
		if _, err := r.es.Transition(ctx, h.OrgID, h.ExecutionID, entrystore.Transition{To: entrystore.StatusFailed, Error: msg}); err != nil {
			errs = append(errs, err)
			continue
		}
		_ = pgStore{es: r.es}.Publish(ctx, h.OrgID, h.ExecutionID, event.Failed{AgentExecutionID: h.ExecutionID, Status: string(entrystore.StatusFailed), Error: msg})
		// Its workflow waits on a queue nobody polls: end it, so Temporal
		// shows the same end.
		if err := r.tc.TerminateWorkflow(ctx, h.ExecutionID, "", msg); err != nil && !strings.Contains(err.Error(), "not found") {
			errs = append(errs, err)
		}
		failed++
		r.log("worker-held execution failed: its worker is gone", "execution", h.ExecutionID, "worker", h.Worker)
	}
	return failed, errors.Join(errs...)
}
