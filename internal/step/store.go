package step

import (
	"context"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/event"
)

// Store is the side store as the runtimes' model and tool steps see it: the
// persistence port. The Temporal adapter implements it over Postgres (and
// the worker-local store), agenttest in memory; agent authors never see
// it. The engine's store (engine.Store) extends it with execution rows,
// checkpoints and signals.
type Store interface {
	// ExecutionConfig returns the execution's frozen configuration.
	ExecutionConfig(ctx context.Context, orgID, executionID string) (agentsdk.Config, error)
	// Path returns the entries from the root to leafID, root first.
	Path(ctx context.Context, orgID, leafID string) ([]agentsdk.Entry, error)
	// ContextPath returns the part of the path to leafID a model's context
	// needs, root-most first: from the first entry the latest compaction
	// on it kept (the whole path if none). Returning more is correct, only
	// slower. Entries carry their Depth.
	ContextPath(ctx context.Context, orgID, leafID string) ([]agentsdk.Entry, error)
	GetEntry(ctx context.Context, orgID, id string) (agentsdk.Entry, error)
	// EntryByKey finds an entry by its idempotency key;
	// agentsdk.ErrNotFound if none.
	EntryByKey(ctx context.Context, orgID, executionID, key string) (agentsdk.Entry, error)
	// AppendEntries appends in one transaction, in order. An entry whose
	// ParentID is agentsdk.PrevEntry takes the ID of the entry before it.
	// A repeated idempotency key returns the existing entry.
	AppendEntries(ctx context.Context, orgID string, entries []agentsdk.Entry) ([]agentsdk.Entry, error)
	// PutContent stores data of the execution's by its sha256 (hex), once.
	PutContent(ctx context.Context, orgID, executionID string, data []byte, mediaType string) (string, error)
	// RecordToolCall upserts a tool call's record.
	RecordToolCall(ctx context.Context, rec agentsdk.ToolCallRecord) error
	// ToolCall returns the record of tool call toolCallID of the
	// assistant entry messageID; agentsdk.ErrNotFound if none.
	ToolCall(ctx context.Context, orgID, executionID, messageID, toolCallID string) (agentsdk.ToolCallRecord, error)
	// Publish sends an event to the execution's live stream.
	Publish(ctx context.Context, orgID, executionID string, ev event.Event) error
	// PublishBatch sends events to the execution's live stream, in order,
	// as one write: all of them or none.
	PublishBatch(ctx context.Context, orgID, executionID string, evs []event.Event) error
}

// ToolStarter is a Store whose record of a tool call's start returns the
// record as it then stands. An ended record means another run of the call
// ended it after this run looked and found nothing (a workflow task
// re-run beside the one it replaced, whose local activity ran on): the
// call is not run again. A Store without it records the start alone.
type ToolStarter interface {
	StartToolCall(ctx context.Context, rec agentsdk.ToolCallRecord) (agentsdk.ToolCallRecord, error)
}

// Announcer is a Store that records a tool call, or appends an entry,
// and stores the events telling of it in one transaction: a round trip
// and a commit less at each start and end of a call, and at each answer. With started, rec is the call's start:
// the record as it then stands is returned (as ToolStarter's), and the
// events are stored only when it holds no result. Both commit or neither
// does. A Store without it writes the record, then the events
// (AnnounceToolCallApart).
//
// AppendEntryAnnounced appends e (as AppendEntries appends one) and
// stores evs with it: a model's answer and the last of its deltas. Where
// it cannot store both at once (e is a repeat, or a fork) it stores evs
// after e, on their own. On an error it has stored no event.
type Announcer interface {
	AnnounceToolCall(ctx context.Context, rec agentsdk.ToolCallRecord, evs []event.Event, started bool) (agentsdk.ToolCallRecord, error)
	AppendEntryAnnounced(ctx context.Context, orgID string, e agentsdk.Entry, evs []event.Event) (agentsdk.Entry, error)
}

// ResultAnnouncer is a store that ends a tool call in one transaction:
// its result entry, the record linked to it, and the events telling of
// it. appended reports whether it did; when not (the entry is a repeat,
// or its parent was continued already), it wrote nothing, and the step
// appends the entry and records the call apart, as on any store.
type ResultAnnouncer interface {
	AppendToolResultAnnounced(ctx context.Context, orgID string, e agentsdk.Entry, rec agentsdk.ToolCallRecord, evs []event.Event) (agentsdk.Entry, bool, error)
}

// ResultsAppender is a store that appends the result entries of one
// answer's tool calls and links their records to them in one
// transaction. appended reports whether every entry went in; when not,
// the step appends and links as on any store, which takes what did go in
// as a repeat.
type ResultsAppender interface {
	AppendToolResultsLinked(ctx context.Context, orgID string, es []agentsdk.Entry, recs []agentsdk.ToolCallRecord) ([]agentsdk.Entry, bool, error)
}

// AppendEntryAnnouncedApart is Announcer's AppendEntryAnnounced on any
// store: the entry, then the events (best effort).
func AppendEntryAnnouncedApart(ctx context.Context, s Store, orgID string, e agentsdk.Entry, evs []event.Event) (agentsdk.Entry, error) {
	out, err := s.AppendEntries(ctx, orgID, []agentsdk.Entry{e})
	if err != nil {
		return agentsdk.Entry{}, err
	}
	if len(evs) > 0 {
		_ = s.PublishBatch(ctx, orgID, e.ExecutionID, evs)
	}
	return out[0], nil
}

// AnnounceToolCallApart is Announcer's AnnounceToolCall on any store, in
// two writes: the record, then, unless a start found the call answered,
// the events, whose failure is not the call's (live events are best
// effort; the record is the record).
func AnnounceToolCallApart(ctx context.Context, s Store, rec agentsdk.ToolCallRecord, evs []event.Event, started bool) (agentsdk.ToolCallRecord, error) {
	stood, err := rec, error(nil)
	switch ts, ok := s.(ToolStarter); {
	case started && ok:
		stood, err = ts.StartToolCall(ctx, rec)
	default:
		err = s.RecordToolCall(ctx, rec)
	}
	if err != nil {
		return stood, err
	}
	if !started || !hasResult(stood) {
		_ = s.PublishBatch(ctx, rec.OrgID, rec.ExecutionID, evs)
	}
	return stood, nil
}

// Prefetch starts read now and returns its result when asked.
func Prefetch[T any](read func() (T, error)) func() (T, error) {
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := read()
		ch <- result{v, err}
	}()
	return func() (T, error) {
		r := <-ch
		return r.v, r.err
	}
}
