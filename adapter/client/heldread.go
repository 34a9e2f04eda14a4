package client

import (
	"context"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/agentree/agentree/entrystore"
)

// A worker-held execution (persistenceMode local) keeps its conversation in the
// store of the worker that took it; the API reads it from there. Each
// such worker answers reads as queries of one workflow of its own, the
// held reader, on its own task queue: a query adds no history event, and
// the queue is one only that worker polls, so an answer comes from the
// store that holds the conversation or not at all. The reader does
// nothing but wait, so its history stays a handful of events forever.
// (The execution's own workflow is no place for these queries: its runs
// may be on the shared queue, where any worker may take the query, and
// it is gone once the namespace's retention has passed.)
const (
	// HeldReaderWorkflow is the reader's workflow type.
	HeldReaderWorkflow = "agentree.local-reader"
	// HeldReadQuery is the query it answers.
	HeldReadQuery = "agentree.local-read"
)

// WorkerQueue is the task queue only the worker named name polls, beside
// the shared queue: where the executions whose store it holds run, and
// its held reader.
func WorkerQueue(queue, name string) string { return queue + "@" + name }

// HeldReaderID is the workflow ID of the reader of the worker polling
// workerQueue.
func HeldReaderID(workerQueue string) string { return "agentree-local-reader/" + workerQueue }

// The reads a held reader answers (HeldReadInput.Op).
const (
	ReadEntries          = "entries"
	ReadEntry            = "entry"
	ReadPath             = "path"
	ReadPathPage         = "pathPage"
	ReadLeaf             = "leaf"
	ReadCheckpoints      = "checkpoints"
	ReadCheckpoint       = "checkpoint"
	ReadLatestCheckpoint = "latestCheckpoint"
	ReadToolCalls        = "toolCalls"
	ReadLatestToolCall   = "latestToolCall"
	ReadToolCall         = "toolCall"
	ReadContent          = "content"
	ReadUsage            = "usage"
)

// HeldReadInput is one read of a worker-held execution's conversation.
type HeldReadInput struct {
	Op          string `json:"op"`
	OrgID       string `json:"orgId"`
	ExecutionID string `json:"executionId"`
	// ID is the entry, tool call or content (sha256) read, or the leaf of
	// a path.
	ID         string `json:"id,omitempty"`
	Limit      int    `json:"limit,omitempty"`
	Cursor     string `json:"cursor,omitempty"`
	AfterDepth int    `json:"afterDepth,omitempty"`
	EntryType  string `json:"entryType,omitempty"`
	Sequence   int    `json:"sequence,omitempty"`
	ToolName   string `json:"toolName,omitempty"`
	Status     string `json:"status,omitempty"`
}

// HeldReadOutput is its answer, in the Postgres store's types.
type HeldReadOutput struct {
	Entries     []entrystore.Entry      `json:"entries,omitempty"`
	Checkpoints []entrystore.Checkpoint `json:"checkpoints,omitempty"`
	ToolCalls   []entrystore.ToolCall   `json:"toolCalls,omitempty"`
	Usage       []entrystore.UsageLine  `json:"usage,omitempty"`
	Content     []byte                  `json:"content,omitempty"`
	MediaType   string                  `json:"mediaType,omitempty"`
	// Next is the cursor of the next page ("" on the last); More, for a
	// path page, says another follows.
	Next string `json:"next,omitempty"`
	More bool   `json:"more,omitempty"`
	// Leaf is the entry the execution appended last.
	Leaf string `json:"leaf,omitempty"`
	// NotFound and Invalid: what was read is not there, or the request
	// (a cursor) is malformed; the reason.
	NotFound string `json:"notFound,omitempty"`
	Invalid  string `json:"invalid,omitempty"`
}

// ErrWorkerUnavailable is a read of a worker-held execution whose worker did
// not answer: it is stopped, or has not taken the execution yet.
var ErrWorkerUnavailable = errors.New("the worker holding the execution's conversation is not reachable")

// heldReadTimeout bounds one read of a worker that holds a capability
// lease (one that stopped cleanly holds none, and is answered for at
// once): it answers a query in milliseconds, unless it is overloaded or
// died within its lease.
const heldReadTimeout = 20 * time.Second

// HeldReader reads one worker-held execution's conversation from its worker,
// with the Postgres store's method names and types.
type HeldReader struct {
	tc          client.Client
	es          *entrystore.Store
	queue       string
	worker      string
	executionID string
}

// HeldReader returns the reader of ex, a worker-held execution; its reads are
// ErrWorkerUnavailable until a worker has taken ex.
func (c *Client) HeldReader(ex entrystore.Execution) *HeldReader {
	r := &HeldReader{tc: c.tc, es: c.es, worker: ex.Holder, executionID: ex.ID}
	if ex.Holder != "" {
		r.queue = WorkerQueue(ex.Queue, ex.Holder)
	}
	return r
}

// read sends one query to the worker's reader, starting the reader the
// first time; a reader not ready yet (its first workflow task pending) is
// asked again until the deadline.
func (r *HeldReader) read(ctx context.Context, in HeldReadInput) (HeldReadOutput, error) {
	var out HeldReadOutput
	if r.queue == "" {
		return out, fmt.Errorf("%w: no worker has taken execution %s yet", ErrWorkerUnavailable, r.executionID)
	}
	live, err := r.es.QueueLive(ctx, r.queue)
	if err != nil {
		return out, err
	}
	if !live {
		return out, fmt.Errorf("%w: worker %q is not running", ErrWorkerUnavailable, r.worker)
	}
	in.ExecutionID = r.executionID
	ctx, cancel := context.WithTimeout(ctx, heldReadTimeout)
	defer cancel()
	id := HeldReaderID(r.queue)
	for {
		v, err := r.tc.QueryWorkflow(ctx, id, "", HeldReadQuery, in)
		if err == nil {
			if err := v.Get(&out); err != nil {
				return out, fmt.Errorf("client: held read %s: %w", in.Op, err)
			}
			return out, outcome(out)
		}
		var missing *serviceerror.NotFound
		var notReady *serviceerror.WorkflowNotReady
		switch {
		case errors.As(err, &missing):
			_, err = r.tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
				ID: id, TaskQueue: r.queue,
				WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
				WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
			}, HeldReaderWorkflow)
			if err != nil && ctx.Err() == nil {
				return out, fmt.Errorf("client: start the held reader of %s: %w", r.worker, err)
			}
		case errors.As(err, &notReady):
		case ctx.Err() != nil, errors.Is(err, context.DeadlineExceeded), errors.As(err, new(*serviceerror.DeadlineExceeded)):
			// No poller took the query: the server gives up a little
			// before the caller's deadline.
			return out, fmt.Errorf("%w: worker %q did not answer within %s", ErrWorkerUnavailable, r.worker, heldReadTimeout)
		default:
			return out, fmt.Errorf("client: held read %s: %w", in.Op, err)
		}
		select {
		case <-ctx.Done():
			return out, fmt.Errorf("%w: worker %q did not answer within %s", ErrWorkerUnavailable, r.worker, heldReadTimeout)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// outcome maps an answer's verdict onto the store's errors, worded as
// the worker worded it (a caller's terms: "cursor … is not …").
func outcome(out HeldReadOutput) error {
	switch {
	case out.NotFound != "":
		return verdict{out.NotFound, entrystore.ErrNotFound}
	case out.Invalid != "":
		return verdict{out.Invalid, entrystore.ErrInvalid}
	}
	return nil
}

// verdict is a reader's answer that is an error: its reason, matching
// the store's sentinel.
type verdict struct {
	reason string
	err    error
}

func (v verdict) Error() string { return v.reason }
func (v verdict) Unwrap() error { return v.err }

// ListEntries is entrystore.Store.ListEntries for a worker-held execution.
func (r *HeldReader) ListEntries(ctx context.Context, orgID, _ string, p entrystore.Page) ([]entrystore.Entry, string, error) {
	out, err := r.read(ctx, HeldReadInput{Op: ReadEntries, OrgID: orgID, Limit: p.Limit, Cursor: p.Cursor})
	return out.Entries, out.Next, err
}

// GetEntry is entrystore.Store.GetEntry for a worker-held execution.
func (r *HeldReader) GetEntry(ctx context.Context, orgID, id string) (entrystore.Entry, error) {
	out, err := r.read(ctx, HeldReadInput{Op: ReadEntry, OrgID: orgID, ID: id})
	if err != nil || len(out.Entries) == 0 {
		return entrystore.Entry{}, orNotFound(err)
	}
	return out.Entries[0], nil
}

// Path is entrystore.Store.Path for a worker-held execution.
func (r *HeldReader) Path(ctx context.Context, orgID, leafID string) ([]entrystore.Entry, error) {
	out, err := r.read(ctx, HeldReadInput{Op: ReadPath, OrgID: orgID, ID: leafID})
	return out.Entries, err
}

// ContextPath is entrystore.Store.ContextPath for a worker-held execution: the
// whole path, which holds the part a model's context needs (more is
// correct, only slower).
func (r *HeldReader) ContextPath(ctx context.Context, orgID, leafID string) ([]entrystore.Entry, error) {
	return r.Path(ctx, orgID, leafID)
}

// PathPage is entrystore.Store.PathPage for a worker-held execution. The byte
// budget is not the worker's to keep: the gateway measures what it sends
// (Options.PageBytes) and ends a page there.
func (r *HeldReader) PathPage(ctx context.Context, orgID, _, leafID string, afterDepth, limit, _ int, entryType string) ([]entrystore.Entry, bool, error) {
	out, err := r.read(ctx, HeldReadInput{Op: ReadPathPage, OrgID: orgID, ID: leafID, AfterDepth: afterDepth, Limit: limit, EntryType: entryType})
	return out.Entries, out.More, err
}

// Leaf is the entry the execution appended last ("" before its first):
// what the execution's row names for one in Postgres.
func (r *HeldReader) Leaf(ctx context.Context, orgID string) (string, error) {
	out, err := r.read(ctx, HeldReadInput{Op: ReadLeaf, OrgID: orgID})
	return out.Leaf, err
}

// ListCheckpoints is entrystore.Store.ListCheckpoints for a worker-held
// execution.
func (r *HeldReader) ListCheckpoints(ctx context.Context, orgID, _ string, p entrystore.Page) ([]entrystore.Checkpoint, string, error) {
	out, err := r.read(ctx, HeldReadInput{Op: ReadCheckpoints, OrgID: orgID, Limit: p.Limit, Cursor: p.Cursor})
	return out.Checkpoints, out.Next, err
}

// GetCheckpoint is entrystore.Store.GetCheckpoint for a worker-held execution.
func (r *HeldReader) GetCheckpoint(ctx context.Context, orgID, _ string, seq int) (entrystore.Checkpoint, error) {
	return r.checkpoint(ctx, HeldReadInput{Op: ReadCheckpoint, OrgID: orgID, Sequence: seq})
}

// LatestCheckpoint is entrystore.Store.LatestCheckpoint for a worker-held
// execution.
func (r *HeldReader) LatestCheckpoint(ctx context.Context, orgID, _ string) (entrystore.Checkpoint, error) {
	return r.checkpoint(ctx, HeldReadInput{Op: ReadLatestCheckpoint, OrgID: orgID})
}

func (r *HeldReader) checkpoint(ctx context.Context, in HeldReadInput) (entrystore.Checkpoint, error) {
	out, err := r.read(ctx, in)
	if err != nil || len(out.Checkpoints) == 0 {
		return entrystore.Checkpoint{}, orNotFound(err)
	}
	return out.Checkpoints[0], nil
}

// ListToolCalls is entrystore.Store.ListToolCalls for a worker-held execution.
func (r *HeldReader) ListToolCalls(ctx context.Context, orgID, _ string, f entrystore.ToolCallFilter, p entrystore.Page) ([]entrystore.ToolCall, string, error) {
	out, err := r.read(ctx, HeldReadInput{Op: ReadToolCalls, OrgID: orgID, Limit: p.Limit, Cursor: p.Cursor, ToolName: f.ToolName, Status: f.Status})
	return out.ToolCalls, out.Next, err
}

// LatestToolCall is entrystore.Store.LatestToolCall for a worker-held
// execution.
func (r *HeldReader) LatestToolCall(ctx context.Context, orgID, _, toolCallID string) (entrystore.ToolCall, error) {
	return r.toolCall(ctx, HeldReadInput{Op: ReadLatestToolCall, OrgID: orgID, ID: toolCallID})
}

// GetToolCall is entrystore.Store.GetToolCall (by the record's ID) for a
// worker-held execution.
func (r *HeldReader) GetToolCall(ctx context.Context, orgID, id string) (entrystore.ToolCall, error) {
	return r.toolCall(ctx, HeldReadInput{Op: ReadToolCall, OrgID: orgID, ID: id})
}

func (r *HeldReader) toolCall(ctx context.Context, in HeldReadInput) (entrystore.ToolCall, error) {
	out, err := r.read(ctx, in)
	if err != nil || len(out.ToolCalls) == 0 {
		return entrystore.ToolCall{}, orNotFound(err)
	}
	return out.ToolCalls[0], nil
}

// GetContent is entrystore.Store.GetContent for a worker-held execution.
func (r *HeldReader) GetContent(ctx context.Context, orgID, sha string) ([]byte, string, error) {
	out, err := r.read(ctx, HeldReadInput{Op: ReadContent, OrgID: orgID, ID: sha})
	return out.Content, out.MediaType, err
}

// ExecutionUsage is entrystore.Store.ExecutionUsage for a worker-held
// execution.
func (r *HeldReader) ExecutionUsage(ctx context.Context, orgID, _ string) ([]entrystore.UsageLine, error) {
	out, err := r.read(ctx, HeldReadInput{Op: ReadUsage, OrgID: orgID})
	return out.Usage, err
}

// orNotFound is err, or ErrNotFound for an answer that holds nothing.
func orNotFound(err error) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("client: held read: %w", entrystore.ErrNotFound)
}
