package adapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/event"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/domain"
	"github.com/agentree/agentree/internal/engine"
	"github.com/agentree/agentree/internal/step"
)

// pgStore is also the engine's store: execution rows, checkpoints and the
// signals inbox.
var (
	_ engine.Store         = pgStore{}
	_ engine.Announcer     = pgStore{}
	_ step.Announcer       = pgStore{}
	_ step.ResultAnnouncer = pgStore{}
	_ step.ResultsAppender = pgStore{}
)

// engineError carries entrystore's answers in the engine's terms where
// they differ: a missing row is agentsdk.ErrNotFound, an unreachable store
// engine.ErrStoreUnavailable. A conflict is domain.ErrConflict in both, so
// it passes as it is. The original error stays wrapped.
func engineError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, domain.ErrConflict):
		return err
	case storeUnavailable(err):
		return fmt.Errorf("%w: %w", engine.ErrStoreUnavailable, err)
	}
	return notFound(err)
}

func (s pgStore) Execution(ctx context.Context, orgID, executionID string) (domain.Execution, error) {
	ex, err := s.es.GetExecutionSettings(ctx, orgID, executionID)
	if err != nil {
		return domain.Execution{}, engineError(err)
	}
	return domain.Execution{Config: ex.Config, Status: ex.Status, CheckpointSeq: ex.CheckpointSeq}, nil
}

func (s pgStore) Transition(ctx context.Context, orgID, executionID string, tr domain.Transition) (domain.Execution, error) {
	ex, err := s.es.Transition(ctx, orgID, executionID, tr)
	return ex, engineError(err)
}

func (s pgStore) AppendCheckpoint(ctx context.Context, c domain.Checkpoint) error {
	_, err := s.es.AppendCheckpoint(ctx, c)
	return engineError(err)
}

// AppendCheckpointAnnounced records c and stores evs in one transaction
// (engine.Announcer).
func (s pgStore) AppendCheckpointAnnounced(ctx context.Context, c domain.Checkpoint, evs []event.Event) error {
	batch, err := streamEvents(evs)
	if err != nil {
		return err
	}
	_, err = s.es.AppendCheckpointAnnounced(ctx, c, batch)
	return engineError(err)
}

// AppendCheckpointAndWait records c with cpEvs and, when it inserted c,
// moves the execution to WAITING with waitEvs, in one transaction
// (engine.Announcer).
func (s pgStore) AppendCheckpointAndWait(ctx context.Context, c domain.Checkpoint, cpEvs, waitEvs []event.Event) (bool, error) {
	cpBatch, err := streamEvents(cpEvs)
	if err != nil {
		return false, err
	}
	waitBatch, err := streamEvents(waitEvs)
	if err != nil {
		return false, err
	}
	_, moved, err := s.es.AppendCheckpointAndWait(ctx, c, cpBatch, waitBatch)
	return moved, engineError(err)
}

// TransitionAnnounced moves the execution and, when its one statement
// does, stores evs in the same transaction (engine.Announcer).
func (s pgStore) TransitionAnnounced(ctx context.Context, orgID, executionID string, tr domain.Transition, evs []event.Event) (domain.Execution, bool, error) {
	batch, err := streamEvents(evs)
	if err != nil {
		return domain.Execution{}, false, err
	}
	ex, announced, err := s.es.TransitionAnnounced(ctx, orgID, executionID, tr, batch)
	return ex, announced, engineError(err)
}

// BeginAnnounced reads the execution and moves it to RUNNING with evs in
// one round trip (engine.Announcer).
func (s pgStore) BeginAnnounced(ctx context.Context, orgID, executionID string, seq int, evs []event.Event) (domain.Execution, bool, error) {
	batch, err := streamEvents(evs)
	if err != nil {
		return domain.Execution{}, false, err
	}
	ex, moved, err := s.es.BeginRunning(ctx, orgID, executionID, seq, batch)
	if err != nil {
		return domain.Execution{}, false, engineError(err)
	}
	return domain.Execution{Config: ex.Config, Status: ex.Status, CheckpointSeq: ex.CheckpointSeq}, moved, nil
}

func (s pgStore) ReplaceCheckpoint(ctx context.Context, c domain.Checkpoint) error {
	_, err := s.es.ReplaceCheckpoint(ctx, c)
	return engineError(err)
}

func (s pgStore) GetCheckpoint(ctx context.Context, orgID, executionID string, seq int) (domain.Checkpoint, error) {
	c, err := s.es.GetCheckpoint(ctx, orgID, executionID, seq)
	return c, engineError(err)
}

func (s pgStore) SignalValue(ctx context.Context, orgID, signalID string) (json.RawMessage, error) {
	sg, err := s.es.GetSignal(ctx, orgID, signalID)
	if err != nil {
		return nil, engineError(err)
	}
	return sg.Value, nil
}

func (s pgStore) ConsumeSignal(ctx context.Context, orgID, signalID string, e agentsdk.Entry) (agentsdk.Entry, error) {
	got, err := s.es.ConsumeSignal(ctx, orgID, signalID, step.StoredEntry(orgID, e))
	if err != nil {
		return agentsdk.Entry{}, engineError(err)
	}
	return step.SDKEntry(got), nil
}

func (s pgStore) ResumeSource(ctx context.Context, orgID, executionID string) (engine.ResumeSource, error) {
	ex, err := s.es.GetExecution(ctx, orgID, executionID)
	if err != nil {
		return engine.ResumeSource{}, engineError(err)
	}
	by, err := s.es.ResumedBy(ctx, orgID, executionID)
	if err != nil {
		return engine.ResumeSource{}, engineError(err)
	}
	return engine.ResumeSource{Status: ex.Status, Config: ex.Config, ParentID: ex.ParentID,
		LeafID: ex.LeafEntryID, StepCount: ex.StepCount, ResumedBy: by, CheckpointSeq: ex.CheckpointSeq}, nil
}

func (s pgStore) CancelAwaitingToolCalls(ctx context.Context, orgID, executionID string) error {
	_, err := s.es.CancelAwaitingToolCalls(ctx, orgID, executionID)
	return err
}

func (s pgStore) PutSignal(ctx context.Context, orgID, executionID, id, name string, value json.RawMessage) error {
	_, err := s.es.PutSignal(ctx, entrystore.Signal{ID: id, OrgID: orgID, ExecutionID: executionID, Name: name, Value: value})
	return engineError(err)
}

func (s pgStore) CompleteUnlessSignalled(ctx context.Context, orgID, executionID, leafID string, known []string, tr domain.Transition) (domain.Execution, []agentsdk.Signal, error) {
	ex, pending, err := s.es.CompleteUnlessSignalled(ctx, orgID, executionID, leafID, known, tr)
	if err != nil {
		return domain.Execution{}, nil, engineError(err)
	}
	var sigs []agentsdk.Signal
	for _, p := range pending {
		sigs = append(sigs, agentsdk.Signal{ID: p.ID, Name: p.Name})
	}
	return ex, sigs, nil
}
