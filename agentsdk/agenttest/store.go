package agenttest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/event"
	"github.com/agentree/agentree/internal/domain"
	"github.com/agentree/agentree/internal/engine"
	"github.com/agentree/agentree/internal/step"
)

// Event is a stream event the runtime published.
type Event struct {
	Name string
	Data json.RawMessage
}

// ErrUnavailable is the error of a store that cannot be reached: the
// runtime retries it, as it would an unreachable Postgres.
var ErrUnavailable = engine.ErrStoreUnavailable

// Store is an in-memory step.Store.
type Store struct {
	mu        sync.Mutex
	config    agentsdk.Config
	entries   map[string]agentsdk.Entry
	order     []string
	keys      map[string]string
	content   map[string][]byte
	toolCalls map[string]agentsdk.ToolCallRecord
	events    []Event
	// leaf is the last entry appended: the execution's current leaf.
	leaf string
	// FailAppend, when set, is asked before each new entry is stored; an
	// error it returns fails the append (a fault a test injects; return
	// ErrUnavailable for an unreachable store).
	FailAppend func(e agentsdk.Entry) error

	exec        domain.Execution
	steps       int
	checkpoints map[int]domain.Checkpoint
	signals     map[string]*memSignal
	signalOrder []string
}

var _ step.Store = (*Store)(nil)

func newStore(cfg agentsdk.Config, executionID string) *Store {
	raw, _ := json.Marshal(cfg)
	return &Store{
		config: cfg, entries: map[string]agentsdk.Entry{}, keys: map[string]string{},
		content: map[string][]byte{}, toolCalls: map[string]agentsdk.ToolCallRecord{},
		exec:        domain.Execution{Config: raw, Status: domain.StatusPending},
		checkpoints: map[int]domain.Checkpoint{}, signals: map[string]*memSignal{},
	}
}

func (s *Store) lastLeaf() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.leaf
}

// ExecutionConfig implements step.Store.
func (s *Store) ExecutionConfig(context.Context, string, string) (agentsdk.Config, error) {
	return s.config, nil
}

// Path implements step.Store.
func (s *Store) Path(_ context.Context, _ string, leafID string) ([]agentsdk.Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var rev []agentsdk.Entry
	for id := leafID; id != ""; {
		e, ok := s.entries[id]
		if !ok {
			return nil, fmt.Errorf("agenttest: path: entry %s: %w", id, agentsdk.ErrNotFound)
		}
		rev = append(rev, e)
		id = e.ParentID
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	for i := range rev {
		rev[i].Depth = i
	}
	return rev, nil
}

// ContextPath implements step.Store: the whole path, which holds the
// part a model's context needs.
func (s *Store) ContextPath(ctx context.Context, orgID, leafID string) ([]agentsdk.Entry, error) {
	return s.Path(ctx, orgID, leafID)
}

// GetEntry implements step.Store.
func (s *Store) GetEntry(_ context.Context, _ string, id string) (agentsdk.Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.entries[id]
	if !ok {
		return e, fmt.Errorf("agenttest: entry %s: %w", id, agentsdk.ErrNotFound)
	}
	return e, nil
}

// EntryByKey implements step.Store.
func (s *Store) EntryByKey(_ context.Context, _ string, _ string, key string) (agentsdk.Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.keys[key]
	if !ok {
		return agentsdk.Entry{}, fmt.Errorf("agenttest: key %s: %w", key, agentsdk.ErrNotFound)
	}
	return s.entries[id], nil
}

// AppendEntries implements step.Store.
func (s *Store) AppendEntries(_ context.Context, _ string, es []agentsdk.Entry) ([]agentsdk.Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// All or nothing, as a Postgres transaction: a fault is asked about
	// every new entry before any is stored.
	for _, e := range es {
		if _, ok := s.keys[e.IdempotencyKey]; (!ok || e.IdempotencyKey == "") && s.FailAppend != nil {
			if err := s.FailAppend(e); err != nil {
				return nil, err
			}
		}
	}
	out := make([]agentsdk.Entry, 0, len(es))
	prev := ""
	for _, e := range es {
		if id, ok := s.keys[e.IdempotencyKey]; ok && e.IdempotencyKey != "" {
			out = append(out, s.entries[id])
			prev = id
			continue
		}
		if e.ParentID == agentsdk.PrevEntry {
			e.ParentID = prev
		}
		if e.ParentID != "" {
			if _, ok := s.entries[e.ParentID]; !ok {
				return nil, fmt.Errorf("%w: parent %s does not exist", agentsdk.ErrInvalidInput, e.ParentID)
			}
		}
		e.ID = fmt.Sprintf("e%04d", len(s.order)+1)
		s.entries[e.ID] = e
		s.order = append(s.order, e.ID)
		if e.IdempotencyKey != "" {
			s.keys[e.IdempotencyKey] = e.ID
		}
		out = append(out, e)
		prev = e.ID
		s.leaf = e.ID
	}
	return out, nil
}

// PutContent implements step.Store.
func (s *Store) PutContent(_ context.Context, _, _ string, data []byte, _ string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sum := sha256.Sum256(data)
	sha := hex.EncodeToString(sum[:])
	if _, ok := s.content[sha]; !ok {
		s.content[sha] = append([]byte(nil), data...)
	}
	return sha, nil
}

// Content returns stored content by sha256.
func (s *Store) Content(sha string) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.content[sha]
	return b, ok
}

// RecordToolCall implements step.Store.
func (s *Store) RecordToolCall(ctx context.Context, r agentsdk.ToolCallRecord) error {
	_, err := s.StartToolCall(ctx, r)
	return err
}

// StartToolCall implements step.ToolStarter: the record as it stands
// once r is merged in.
func (s *Store) StartToolCall(_ context.Context, r agentsdk.ToolCallRecord) (agentsdk.ToolCallRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := r.MessageID + "/" + r.ToolCallID
	s.toolCalls[key] = s.toolCalls[key].Merge(r)
	return s.toolCalls[key], nil
}

// ResumeSource implements engine.Store: the in-memory store holds one
// execution, never another to resume.
func (s *Store) ResumeSource(_ context.Context, _, id string) (engine.ResumeSource, error) {
	return engine.ResumeSource{}, fmt.Errorf("agenttest: execution %s: %w", id, agentsdk.ErrNotFound)
}

// CancelAwaitingToolCalls implements engine.Store.
func (s *Store) CancelAwaitingToolCalls(context.Context, string, string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, r := range s.toolCalls {
		if r.Status == agentsdk.ToolAwaitingApproval || r.Status == agentsdk.ToolAwaitingResult {
			r.Status = agentsdk.ToolCancelled
			s.toolCalls[k] = r
		}
	}
	return nil
}

// ToolCall implements step.Store.
func (s *Store) ToolCall(_ context.Context, _, _, messageID, toolCallID string) (agentsdk.ToolCallRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.toolCalls[messageID+"/"+toolCallID]
	if !ok {
		return r, fmt.Errorf("agenttest: tool call %s: %w", toolCallID, agentsdk.ErrNotFound)
	}
	return r, nil
}

// ToolCalls returns the tool-call records.
func (s *Store) ToolCalls() []agentsdk.ToolCallRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]agentsdk.ToolCallRecord, 0, len(s.toolCalls))
	for _, r := range s.toolCalls {
		out = append(out, r)
	}
	return out
}

// Publish implements step.Store.
func (s *Store) Publish(_ context.Context, _ string, _ string, ev event.Event) error {
	b, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, Event{Name: ev.Name(), Data: b})
	return nil
}

// PublishBatch implements step.Store.
func (s *Store) PublishBatch(_ context.Context, _ string, _ string, evs []event.Event) error {
	batch := make([]Event, len(evs))
	for i, ev := range evs {
		b, err := json.Marshal(ev)
		if err != nil {
			return err
		}
		batch[i] = Event{Name: ev.Name(), Data: b}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, batch...)
	return nil
}

// Events returns the published events, in order.
func (s *Store) Events() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Event(nil), s.events...)
}

// Entries returns every entry in arrival order.
func (s *Store) Entries() []agentsdk.Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]agentsdk.Entry, len(s.order))
	for i, id := range s.order {
		out[i] = s.entries[id]
	}
	return out
}
