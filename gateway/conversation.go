package gateway

import (
	"context"
	"fmt"
	"strconv"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	aclient "github.com/agentree/agentree/adapter/client"
	"github.com/agentree/agentree/entrystore"
)

// errNoHeldReads: a gateway without a Temporal client cannot ask a
// worker for a worker-held execution's conversation.
var errNoHeldReads = fmt.Errorf("%w: this gateway has no Temporal client to ask it", aclient.ErrWorkerUnavailable)

// conversationStore is what the read endpoints read an execution's
// conversation from: the Postgres store, or, for an execution in
// persistenceMode local, the store of the worker that holds it, asked
// over Temporal (adapter/client.HeldReader). Both answer in the Postgres
// store's types and errors, so every endpoint serves both the same way.
type conversationStore interface {
	ListEntries(ctx context.Context, orgID, executionID string, p entrystore.Page) ([]entrystore.Entry, string, error)
	GetEntry(ctx context.Context, orgID, id string) (entrystore.Entry, error)
	Path(ctx context.Context, orgID, leafID string) ([]entrystore.Entry, error)
	ContextPath(ctx context.Context, orgID, leafID string) ([]entrystore.Entry, error)
	PathPage(ctx context.Context, orgID, executionID, leafID string, afterDepth, limit, bytes int, entryType string) ([]entrystore.Entry, bool, error)
	ListCheckpoints(ctx context.Context, orgID, executionID string, p entrystore.Page) ([]entrystore.Checkpoint, string, error)
	GetCheckpoint(ctx context.Context, orgID, executionID string, seq int) (entrystore.Checkpoint, error)
	LatestCheckpoint(ctx context.Context, orgID, executionID string) (entrystore.Checkpoint, error)
	ListToolCalls(ctx context.Context, orgID, executionID string, f entrystore.ToolCallFilter, p entrystore.Page) ([]entrystore.ToolCall, string, error)
	LatestToolCall(ctx context.Context, orgID, executionID, toolCallID string) (entrystore.ToolCall, error)
	GetToolCall(ctx context.Context, orgID, id string) (entrystore.ToolCall, error)
	GetContent(ctx context.Context, orgID, sha string) ([]byte, string, error)
	ExecutionUsage(ctx context.Context, orgID, executionID string) ([]entrystore.UsageLine, error)
}

// leafReader is a conversationStore that knows the execution's leaf
// itself: a worker-held execution's row in Postgres does not name it.
type leafReader interface {
	Leaf(ctx context.Context, orgID string) (string, error)
}

var _ conversationStore = (*entrystore.Store)(nil)

// conversation is execution for requests that read its conversation
// (entries, messages, checkpoints, tool calls and what is built from
// them), with the store that holds it. For a worker-held execution that is its
// worker's, and the execution's leaf is read from there; a worker that
// does not answer is a 503 saying so.
func (s *service) conversation(ctx context.Context, org, id string) (entrystore.Execution, conversationStore, error) {
	ex, err := s.execution(ctx, org, id)
	if err != nil {
		return ex, nil, err
	}
	if ex.PersistenceMode != entrystore.PersistenceWorkerHeld {
		return ex, s.es, nil
	}
	if s.held == nil {
		return ex, nil, toStatus(s.log, "read a worker-held execution", errNoHeldReads)
	}
	cs := s.held(ex)
	if lr, ok := cs.(leafReader); ok {
		if ex.LeafEntryID, err = lr.Leaf(ctx, ex.OrgID); err != nil {
			return ex, nil, toStatus(s.log, "read the leaf of a worker-held execution", err)
		}
	}
	return ex, cs, nil
}

// continued is execution for a fork or a resume, which start a new
// execution on the conversation of this one. A fork or a resume is a
// remote execution any worker may run, reading the conversation it shares
// from Postgres; a worker-held execution's conversation is only in its worker's
// file, which no other worker can read. So those of a worker-held execution are
// refused (409) rather than started on a conversation no worker could
// load.
func (s *service) continued(ctx context.Context, org, id, verb string) (entrystore.Execution, error) {
	ex, err := s.execution(ctx, org, id)
	if err != nil || ex.PersistenceMode != entrystore.PersistenceWorkerHeld {
		return ex, err
	}
	where := "the worker that takes it"
	if ex.Holder != "" {
		where = "worker " + strconv.Quote(ex.Holder)
	}
	return ex, status.Errorf(codes.FailedPrecondition,
		"execution %s is in persistenceMode local: its conversation is only in the worker store of %s, and a %s execution is a new one any worker may run from Postgres; only remote executions can be %s",
		ex.ID, where, verb, verb)
}
