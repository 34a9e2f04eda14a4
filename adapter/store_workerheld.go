package adapter

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/agentree/agentree/adapter/workerstore"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/event"
	"github.com/agentree/agentree/internal/domain"
	"github.com/agentree/agentree/internal/engine"
	"github.com/agentree/agentree/internal/step"
)

// heldAware dispatches the writes that announce, so an embedded
// pgStore's never writes a held execution's record or checkpoint.
var (
	_ engine.Announcer     = (*heldAware)(nil)
	_ step.Announcer       = (*heldAware)(nil)
	_ step.ResultAnnouncer = (*heldAware)(nil)
	_ step.ResultsAppender = (*heldAware)(nil)
)

// heldAware is the store of a worker with its own store: an execution in
// persistenceMode local keeps its entries, content, checkpoints and
// tool-call records in the worker's file; its row, status, signals and
// stream, and everything of other executions, are pgStore's.
type heldAware struct {
	pgStore
	file *workerstore.Store

	mu    sync.Mutex
	modes map[string]bool // execution → held here
	// maxModes bounds modes: past it the map starts over (a mode is
	// read again from the execution's row, once).
	maxModes int
}

// defaultMaxModes is how many executions' modes a worker remembers: a
// few megabytes.
const defaultMaxModes = 100_000

var _ engine.Store = (*heldAware)(nil)

func newHeldAware(pg pgStore, file *workerstore.Store) *heldAware {
	return &heldAware{pgStore: pg, file: file, modes: map[string]bool{}, maxModes: defaultMaxModes}
}

// isHeld reports whether the execution keeps its conversation here. Its
// mode is frozen in its configuration, so it is read once.
func (s *heldAware) isHeld(ctx context.Context, orgID, executionID string) (bool, error) {
	s.mu.Lock()
	v, ok := s.modes[executionID]
	s.mu.Unlock()
	if ok {
		return v, nil
	}
	cfg, err := s.pgStore.ExecutionConfig(ctx, orgID, executionID)
	if err != nil {
		return false, err
	}
	s.mu.Lock()
	if len(s.modes) >= s.maxModes {
		clear(s.modes)
	}
	s.modes[executionID] = cfg.WorkerHeld()
	s.mu.Unlock()
	return cfg.WorkerHeld(), nil
}

// here reports whether the entry is in the worker's file.
func (s *heldAware) here(ctx context.Context, id string) (bool, error) {
	return s.file.Has(ctx, id)
}

func (s *heldAware) Path(ctx context.Context, orgID, leafID string) ([]agentsdk.Entry, error) {
	if ok, err := s.here(ctx, leafID); err != nil || ok {
		if err != nil {
			return nil, err
		}
		return s.file.Path(ctx, orgID, leafID)
	}
	return s.pgStore.Path(ctx, orgID, leafID)
}

func (s *heldAware) ContextPath(ctx context.Context, orgID, leafID string) ([]agentsdk.Entry, error) {
	if ok, err := s.here(ctx, leafID); err != nil || ok {
		if err != nil {
			return nil, err
		}
		return s.file.Path(ctx, orgID, leafID)
	}
	return s.pgStore.ContextPath(ctx, orgID, leafID)
}

// PathAfter is pgStore's for executions in Postgres; a worker-held execution's
// path is read whole from the file (complete false).
func (s *heldAware) PathAfter(ctx context.Context, orgID, executionID, leafID string, afterDepth int) ([]agentsdk.Entry, bool, error) {
	if ok, err := s.isHeld(ctx, orgID, executionID); err != nil || ok {
		return nil, false, err
	}
	return s.pgStore.PathAfter(ctx, orgID, executionID, leafID, afterDepth)
}

func (s *heldAware) GetEntry(ctx context.Context, orgID, id string) (agentsdk.Entry, error) {
	if ok, err := s.here(ctx, id); err != nil || ok {
		if err != nil {
			return agentsdk.Entry{}, err
		}
		return s.file.GetEntry(ctx, orgID, id)
	}
	return s.pgStore.GetEntry(ctx, orgID, id)
}

func (s *heldAware) EntryByKey(ctx context.Context, orgID, executionID, key string) (agentsdk.Entry, error) {
	if ok, err := s.isHeld(ctx, orgID, executionID); err != nil || ok {
		if err != nil {
			return agentsdk.Entry{}, err
		}
		return s.file.EntryByKey(ctx, orgID, executionID, key)
	}
	return s.pgStore.EntryByKey(ctx, orgID, executionID, key)
}

func (s *heldAware) AppendEntries(ctx context.Context, orgID string, entries []agentsdk.Entry) ([]agentsdk.Entry, error) {
	if len(entries) > 0 {
		if ok, err := s.isHeld(ctx, orgID, entries[0].ExecutionID); err != nil || ok {
			if err != nil {
				return nil, err
			}
			return s.file.AppendEntries(ctx, orgID, entries)
		}
	}
	return s.pgStore.AppendEntries(ctx, orgID, entries)
}

func (s *heldAware) PutContent(ctx context.Context, orgID, executionID string, data []byte, mediaType string) (string, error) {
	if ok, err := s.isHeld(ctx, orgID, executionID); err != nil || ok {
		if err != nil {
			return "", err
		}
		return s.file.PutContent(ctx, orgID, data, mediaType)
	}
	return s.pgStore.PutContent(ctx, orgID, executionID, data, mediaType)
}

func (s *heldAware) RecordToolCall(ctx context.Context, r agentsdk.ToolCallRecord) error {
	if ok, err := s.isHeld(ctx, r.OrgID, r.ExecutionID); err != nil || ok {
		if err != nil {
			return err
		}
		return s.file.RecordToolCall(ctx, r)
	}
	return s.pgStore.RecordToolCall(ctx, r)
}

// StartToolCall records a call's start where the execution is held and
// returns the record as it then stands (step.ToolStarter).
func (s *heldAware) StartToolCall(ctx context.Context, r agentsdk.ToolCallRecord) (agentsdk.ToolCallRecord, error) {
	if ok, err := s.isHeld(ctx, r.OrgID, r.ExecutionID); err != nil || ok {
		if err != nil {
			return agentsdk.ToolCallRecord{}, err
		}
		return s.file.StartToolCall(ctx, r)
	}
	return s.pgStore.StartToolCall(ctx, r)
}

// AnnounceToolCall records a call where the execution is held, with its
// events (step.Announcer): in one transaction in Postgres, apart for a
// held execution, whose record is here and whose stream is in Postgres.
func (s *heldAware) AnnounceToolCall(ctx context.Context, r agentsdk.ToolCallRecord, evs []event.Event, started bool) (agentsdk.ToolCallRecord, error) {
	if ok, err := s.isHeld(ctx, r.OrgID, r.ExecutionID); err != nil || ok {
		if err != nil {
			return agentsdk.ToolCallRecord{}, err
		}
		return step.AnnounceToolCallApart(ctx, s, r, evs, started)
	}
	return s.pgStore.AnnounceToolCall(ctx, r, evs, started)
}

// AppendEntryAnnounced appends e where the execution is held, with evs
// (step.Announcer): in one transaction in Postgres, apart for a held
// execution.
func (s *heldAware) AppendEntryAnnounced(ctx context.Context, orgID string, e agentsdk.Entry, evs []event.Event) (agentsdk.Entry, error) {
	if ok, err := s.isHeld(ctx, orgID, e.ExecutionID); err != nil || ok {
		if err != nil {
			return agentsdk.Entry{}, err
		}
		return step.AppendEntryAnnouncedApart(ctx, s, orgID, e, evs)
	}
	return s.pgStore.AppendEntryAnnounced(ctx, orgID, e, evs)
}

// AppendToolResultAnnounced ends a tool call in one transaction in
// Postgres (step.ResultAnnouncer); for a held execution it writes
// nothing, and the step appends and records apart, in its file.
func (s *heldAware) AppendToolResultAnnounced(ctx context.Context, orgID string, e agentsdk.Entry, r agentsdk.ToolCallRecord, evs []event.Event) (agentsdk.Entry, bool, error) {
	if ok, err := s.isHeld(ctx, orgID, e.ExecutionID); err != nil || ok {
		return agentsdk.Entry{}, false, err
	}
	return s.pgStore.AppendToolResultAnnounced(ctx, orgID, e, r, evs)
}

// AppendToolResultsLinked appends and links in one transaction in
// Postgres (step.ResultsAppender); for a held execution it writes
// nothing, and the step appends and links apart, in its file.
func (s *heldAware) AppendToolResultsLinked(ctx context.Context, orgID string, es []agentsdk.Entry, recs []agentsdk.ToolCallRecord) ([]agentsdk.Entry, bool, error) {
	if len(es) == 0 {
		return nil, false, nil
	}
	if ok, err := s.isHeld(ctx, orgID, es[0].ExecutionID); err != nil || ok {
		return nil, false, err
	}
	return s.pgStore.AppendToolResultsLinked(ctx, orgID, es, recs)
}

func (s *heldAware) ToolCall(ctx context.Context, orgID, executionID, messageID, toolCallID string) (agentsdk.ToolCallRecord, error) {
	if ok, err := s.isHeld(ctx, orgID, executionID); err != nil || ok {
		if err != nil {
			return agentsdk.ToolCallRecord{}, err
		}
		return s.file.ToolCall(ctx, orgID, executionID, messageID, toolCallID)
	}
	return s.pgStore.ToolCall(ctx, orgID, executionID, messageID, toolCallID)
}

// AppendCheckpointAnnounced records c with evs (engine.Announcer): in
// one transaction in Postgres, apart for a held execution.
func (s *heldAware) AppendCheckpointAnnounced(ctx context.Context, c domain.Checkpoint, evs []event.Event) error {
	if ok, err := s.isHeld(ctx, c.OrgID, c.ExecutionID); err != nil || !ok {
		if err != nil {
			return err
		}
		return s.pgStore.AppendCheckpointAnnounced(ctx, c, evs)
	}
	if err := s.AppendCheckpoint(ctx, c); err != nil {
		return err
	}
	_ = s.PublishBatch(ctx, c.OrgID, c.ExecutionID, evs)
	return nil
}

// AppendCheckpointAndWait records c with cpEvs and moves the execution
// to WAITING with waitEvs (engine.Announcer): in one transaction in
// Postgres; for a held execution, the checkpoint alone, and the engine
// moves it.
func (s *heldAware) AppendCheckpointAndWait(ctx context.Context, c domain.Checkpoint, cpEvs, waitEvs []event.Event) (bool, error) {
	if ok, err := s.isHeld(ctx, c.OrgID, c.ExecutionID); err != nil || !ok {
		if err != nil {
			return false, err
		}
		return s.pgStore.AppendCheckpointAndWait(ctx, c, cpEvs, waitEvs)
	}
	return false, s.AppendCheckpointAnnounced(ctx, c, cpEvs)
}

// AppendCheckpoint keeps a worker-held execution's checkpoint here, and its
// sequence and state (without the leaf, an entry Postgres does not hold)
// in Postgres, whose sequence rule decides conflicts as for any execution.
func (s *heldAware) AppendCheckpoint(ctx context.Context, c domain.Checkpoint) error {
	ok, err := s.isHeld(ctx, c.OrgID, c.ExecutionID)
	if err != nil || !ok {
		if err != nil {
			return err
		}
		return s.pgStore.AppendCheckpoint(ctx, c)
	}
	leaf := c.LeafEntryID
	c.LeafEntryID = ""
	pgErr := s.pgStore.AppendCheckpoint(ctx, c)
	if pgErr != nil && !errors.Is(pgErr, domain.ErrConflict) {
		return pgErr
	}
	c.LeafEntryID = leaf
	if err := s.file.AppendCheckpoint(ctx, c); err != nil {
		return err
	}
	return pgErr
}

// ReplaceCheckpoint is pgStore's for executions in Postgres; a worker-held
// execution's checkpoints are not rewritten.
func (s *heldAware) ReplaceCheckpoint(ctx context.Context, c domain.Checkpoint) error {
	if ok, err := s.isHeld(ctx, c.OrgID, c.ExecutionID); err != nil || ok {
		if err != nil {
			return err
		}
		return fmt.Errorf("%w: a worker-held execution's checkpoint is not rewritten", domain.ErrConflict)
	}
	return s.pgStore.ReplaceCheckpoint(ctx, c)
}

func (s *heldAware) GetCheckpoint(ctx context.Context, orgID, executionID string, seq int) (domain.Checkpoint, error) {
	if ok, err := s.isHeld(ctx, orgID, executionID); err != nil || ok {
		if err != nil {
			return domain.Checkpoint{}, err
		}
		c, err := s.file.GetCheckpoint(ctx, orgID, executionID, seq)
		c.OrgID, c.ExecutionID, c.Sequence = orgID, executionID, seq
		return c, err
	}
	return s.pgStore.GetCheckpoint(ctx, orgID, executionID, seq)
}

// ConsumeSignal appends a worker-held execution's entry here, then marks the
// signal consumed in Postgres: a crash between the two leaves the entry
// and an unconsumed signal, and the retry finds the entry by its key and
// marks the signal.
func (s *heldAware) ConsumeSignal(ctx context.Context, orgID, signalID string, e agentsdk.Entry) (agentsdk.Entry, error) {
	if e.ExecutionID != "" {
		// The engine names the execution: one not held here (the worker's
		// cache of modes knows) is Postgres's alone, with no round trip
		// to ask the signal whose it is first. entrystore checks the
		// signal is that execution's.
		if ok, err := s.isHeld(ctx, orgID, e.ExecutionID); err != nil || !ok {
			if err != nil {
				return agentsdk.Entry{}, err
			}
			return s.pgStore.ConsumeSignal(ctx, orgID, signalID, e)
		}
	}
	executionID, consumed, err := s.es.SignalState(ctx, orgID, signalID)
	if err != nil {
		return agentsdk.Entry{}, engineError(err)
	}
	if ok, err := s.isHeld(ctx, orgID, executionID); err != nil || !ok {
		if err != nil {
			return agentsdk.Entry{}, err
		}
		return s.pgStore.ConsumeSignal(ctx, orgID, signalID, e)
	}
	e.ExecutionID = executionID
	if e.IdempotencyKey == "" {
		e.IdempotencyKey = "signal/" + signalID
	}
	prev, err := s.file.EntryByKey(ctx, orgID, executionID, e.IdempotencyKey)
	switch {
	case err == nil && prev.ParentID == e.ParentID:
		return prev, engineError(s.es.MarkSignalConsumed(ctx, orgID, signalID))
	case err == nil || consumed:
		return agentsdk.Entry{}, domain.ErrSignalConsumed
	case !errors.Is(err, agentsdk.ErrNotFound):
		return agentsdk.Entry{}, err
	}
	got, err := s.file.AppendEntries(ctx, orgID, []agentsdk.Entry{e})
	if err != nil {
		return agentsdk.Entry{}, err
	}
	return got[0], engineError(s.es.MarkSignalConsumed(ctx, orgID, signalID))
}

func (s *heldAware) CancelAwaitingToolCalls(ctx context.Context, orgID, executionID string) error {
	if ok, err := s.isHeld(ctx, orgID, executionID); err != nil || ok {
		if err != nil {
			return err
		}
		return s.file.CancelAwaitingToolCalls(ctx, executionID)
	}
	return s.pgStore.CancelAwaitingToolCalls(ctx, orgID, executionID)
}
