package agenttest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/internal/domain"
	"github.com/agentree/agentree/internal/engine"
)

// The execution row, checkpoints and signals inbox of the in-memory store:
// engine.Store's part beyond step.Store, with the rules entrystore
// keeps (a terminal status is final; CANCELLING may only end).

type memSignal struct {
	name     string
	value    json.RawMessage
	consumed bool
}

var _ engine.Store = (*Store)(nil)

func (s *Store) execution() domain.Execution {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exec
}

func (s *Store) Execution(context.Context, string, string) (domain.Execution, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ex := s.exec
	for seq := range s.checkpoints {
		ex.CheckpointSeq = max(ex.CheckpointSeq, seq)
	}
	return ex, nil
}

func (s *Store) Transition(_ context.Context, _ string, _ string, tr domain.Transition) (domain.Execution, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.transition(tr)
}

func (s *Store) transition(tr domain.Transition) (domain.Execution, error) {
	cur := s.exec.Status
	if !cur.CanMoveTo(tr.To) {
		return domain.Execution{}, fmt.Errorf("%w: cannot move from %s to %s", domain.ErrConflict, cur, tr.To)
	}
	if cur != tr.To {
		s.steps += tr.Steps
	}
	s.exec.Status = tr.To
	if tr.Error != "" {
		s.exec.Error = tr.Error
	}
	if tr.StopReason != "" {
		s.exec.StopReason = tr.StopReason
	}
	out := s.exec
	out.StepCount = s.steps
	return out, nil
}

func (s *Store) AppendCheckpoint(_ context.Context, c domain.Checkpoint) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.checkpoints[c.Sequence]; ok {
		return fmt.Errorf("%w: checkpoint %d exists", domain.ErrConflict, c.Sequence)
	}
	if _, ok := s.entries[c.LeafEntryID]; !ok {
		return fmt.Errorf("%w: leaf %s is not an entry", agentsdk.ErrInvalidInput, c.LeafEntryID)
	}
	s.checkpoints[c.Sequence] = c
	s.steps += c.Steps
	return nil
}

func (s *Store) GetCheckpoint(_ context.Context, _ string, _ string, seq int) (domain.Checkpoint, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.checkpoints[seq]
	if !ok {
		return c, fmt.Errorf("agenttest: checkpoint %d: %w", seq, agentsdk.ErrNotFound)
	}
	return c, nil
}

// Checkpoints returns the checkpoints in sequence order.
func (s *Store) Checkpoints() []domain.Checkpoint {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]domain.Checkpoint, 0, len(s.checkpoints))
	for _, c := range s.checkpoints {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Sequence < out[j].Sequence })
	return out
}

func (s *Store) checkpointLeaves() []string {
	var out []string
	for _, c := range s.Checkpoints() {
		out = append(out, c.LeafEntryID)
	}
	return out
}

func (s *Store) putSignal(name string, value json.RawMessage) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := fmt.Sprintf("s%04d", len(s.signalOrder)+1)
	s.signals[id] = &memSignal{name: name, value: value}
	s.signalOrder = append(s.signalOrder, id)
	return id
}

func (s *Store) SignalValue(_ context.Context, _ string, id string) (json.RawMessage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sg, ok := s.signals[id]
	if !ok {
		return nil, fmt.Errorf("agenttest: signal %s: %w", id, agentsdk.ErrNotFound)
	}
	return sg.value, nil
}

func (s *Store) ConsumeSignal(ctx context.Context, org string, id string, e agentsdk.Entry) (agentsdk.Entry, error) {
	s.mu.Lock()
	sg, ok := s.signals[id]
	switch {
	case !ok:
		s.mu.Unlock()
		return agentsdk.Entry{}, fmt.Errorf("agenttest: signal %s: %w", id, agentsdk.ErrNotFound)
	case sg.consumed:
		s.mu.Unlock()
		return agentsdk.Entry{}, domain.ErrSignalConsumed
	}
	sg.consumed = true
	s.mu.Unlock()
	got, err := s.AppendEntries(ctx, org, []agentsdk.Entry{e})
	if err != nil {
		return agentsdk.Entry{}, err
	}
	return got[0], nil
}

func (s *Store) PutSignal(_ context.Context, _, _, id, name string, value json.RawMessage) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.signals[id]; ok {
		return fmt.Errorf("agenttest: signal %s: %w", id, domain.ErrConflict)
	}
	s.signals[id] = &memSignal{name: name, value: value}
	s.signalOrder = append(s.signalOrder, id)
	return nil
}

func (s *Store) CompleteUnlessSignalled(_ context.Context, _ string, _ string, leafID string, known []string, tr domain.Transition) (domain.Execution, []agentsdk.Signal, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var pending []agentsdk.Signal
	for _, id := range s.signalOrder {
		sg := s.signals[id]
		// Consumed under leafID: a lost task went past it (as Postgres's).
		past := false
		if eid, ok := s.keys["signal/"+id]; ok && leafID != "" {
			past = s.entries[eid].ParentID == leafID
		}
		if (!sg.consumed || past) && !slices.Contains(known, id) {
			pending = append(pending, agentsdk.Signal{ID: id, Name: sg.name})
		}
	}
	if len(pending) > 0 {
		return s.exec, pending, nil
	}
	ex, err := s.transition(tr)
	return ex, nil, err
}
