package adapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/engine"
)

// pgStore is also the engine's store: execution rows, checkpoints and the
// signals inbox.
var _ engine.Store = pgStore{}

// engineError carries entrystore's answers in the engine's terms: a
// conflict is engine.ErrConflict (a consumed signal ErrSignalConsumed), a
// missing row agentsdk.ErrNotFound, an unreachable store
// engine.ErrStoreUnavailable. The original error stays wrapped.
func engineError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, entrystore.ErrSignalConsumed):
		return fmt.Errorf("%w: %w", engine.ErrSignalConsumed, err)
	case errors.Is(err, entrystore.ErrConflict):
		return fmt.Errorf("%w: %w", engine.ErrConflict, err)
	case storeUnavailable(err):
		return fmt.Errorf("%w: %w", engine.ErrStoreUnavailable, err)
	}
	return notFound(err)
}

func toEngineExecution(ex entrystore.Execution) engine.Execution {
	return engine.Execution{Config: ex.Config, Status: engine.Status(ex.Status), StopReason: ex.StopReason, Error: ex.Error, StepCount: ex.StepCount}
}

func toStoreTransition(tr engine.Transition) entrystore.Transition {
	return entrystore.Transition{To: entrystore.Status(tr.To), Error: tr.Error, StopReason: tr.StopReason, Output: tr.Output, Steps: tr.Steps}
}

func (s pgStore) Execution(ctx context.Context, orgID, executionID string) (engine.Execution, error) {
	ex, err := s.es.GetExecutionSettings(ctx, orgID, executionID)
	if err != nil {
		return engine.Execution{}, engineError(err)
	}
	return engine.Execution{Config: ex.Config, Status: engine.Status(ex.Status), CheckpointSeq: ex.CheckpointSeq}, nil
}

func (s pgStore) Transition(ctx context.Context, orgID, executionID string, tr engine.Transition) (engine.Execution, error) {
	ex, err := s.es.Transition(ctx, orgID, executionID, toStoreTransition(tr))
	if err != nil {
		return engine.Execution{}, engineError(err)
	}
	return toEngineExecution(ex), nil
}

func (s pgStore) AppendCheckpoint(ctx context.Context, c engine.Checkpoint) error {
	_, err := s.es.AppendCheckpoint(ctx, entrystore.Checkpoint{
		OrgID: c.OrgID, ExecutionID: c.ExecutionID, Sequence: c.Sequence,
		LeafEntryID: c.LeafID, State: c.State, Metadata: c.Metadata, Steps: c.Steps,
	})
	return engineError(err)
}

func (s pgStore) ReplaceCheckpoint(ctx context.Context, c engine.Checkpoint) error {
	_, err := s.es.ReplaceCheckpoint(ctx, entrystore.Checkpoint{
		OrgID: c.OrgID, ExecutionID: c.ExecutionID, Sequence: c.Sequence,
		LeafEntryID: c.LeafID, State: c.State, Metadata: c.Metadata,
	})
	return engineError(err)
}

func (s pgStore) GetCheckpoint(ctx context.Context, orgID, executionID string, seq int) (engine.Checkpoint, error) {
	c, err := s.es.GetCheckpoint(ctx, orgID, executionID, seq)
	if err != nil {
		return engine.Checkpoint{}, engineError(err)
	}
	return engine.Checkpoint{OrgID: c.OrgID, ExecutionID: c.ExecutionID, Sequence: c.Sequence,
		LeafID: c.LeafEntryID, State: c.State, Metadata: c.Metadata}, nil
}

func (s pgStore) SignalValue(ctx context.Context, orgID, signalID string) (json.RawMessage, error) {
	sg, err := s.es.GetSignal(ctx, orgID, signalID)
	if err != nil {
		return nil, engineError(err)
	}
	return sg.Value, nil
}

func (s pgStore) ConsumeSignal(ctx context.Context, orgID, signalID string, e agentsdk.Entry) (agentsdk.Entry, error) {
	got, err := s.es.ConsumeSignal(ctx, orgID, signalID, toStoreEntry(orgID, e))
	if err != nil {
		return agentsdk.Entry{}, engineError(err)
	}
	return toSDKEntry(got), nil
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
	return engine.ResumeSource{Status: engine.Status(ex.Status), Config: ex.Config, ParentID: ex.ParentID,
		LeafID: ex.LeafEntryID, StepCount: ex.StepCount, ResumedBy: by, CheckpointSeq: ex.CheckpointSeq}, nil
}

func (s pgStore) CancelAwaitingToolCalls(ctx context.Context, orgID, executionID string) error {
	_, err := s.es.CancelAwaitingToolCalls(ctx, orgID, executionID)
	return err
}

func (s pgStore) CompleteUnlessSignalled(ctx context.Context, orgID, executionID string, known []string, tr engine.Transition) (engine.Execution, []agentsdk.Signal, error) {
	ex, pending, err := s.es.CompleteUnlessSignalled(ctx, orgID, executionID, known, toStoreTransition(tr))
	if err != nil {
		return engine.Execution{}, nil, engineError(err)
	}
	var sigs []agentsdk.Signal
	for _, p := range pending {
		sigs = append(sigs, agentsdk.Signal{ID: p.ID, Name: p.Name})
	}
	return toEngineExecution(ex), sigs, nil
}
