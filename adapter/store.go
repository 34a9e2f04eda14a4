package adapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/event"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/engine"
	"github.com/agentree/agentree/internal/step"
)

// pgStore is step.Store over entrystore.
type pgStore struct{ es *entrystore.Store }

var _ step.Store = pgStore{}

func notFound(err error) error {
	if errors.Is(err, entrystore.ErrNotFound) {
		return fmt.Errorf("%w: %w", agentsdk.ErrNotFound, err)
	}
	return err
}

func (s pgStore) ExecutionConfig(ctx context.Context, orgID, executionID string) (agentsdk.Config, error) {
	e, err := s.es.GetExecutionSettings(ctx, orgID, executionID)
	if err != nil {
		return agentsdk.Config{}, notFound(err)
	}
	return engine.DecodeConfig(e.Config)
}

func (s pgStore) Path(ctx context.Context, orgID, leafID string) ([]agentsdk.Entry, error) {
	es, err := s.es.Path(ctx, orgID, leafID)
	if err != nil {
		return nil, notFound(err)
	}
	out := make([]agentsdk.Entry, len(es))
	for i, e := range es {
		out[i] = step.SDKEntry(e)
	}
	return out, nil
}

func (s pgStore) ContextPath(ctx context.Context, orgID, leafID string) ([]agentsdk.Entry, error) {
	es, err := s.es.ContextPath(ctx, orgID, leafID)
	if err != nil {
		return nil, notFound(err)
	}
	out := make([]agentsdk.Entry, len(es))
	for i, e := range es {
		out[i] = step.SDKEntry(e)
	}
	return out, nil
}

// PathAfter reads the path's entries below afterDepth as one page of
// PathPage: a model call's new entries are a handful, so a page that is
// not the last means the caller reads the whole path instead.
func (s pgStore) PathAfter(ctx context.Context, orgID, executionID, leafID string, afterDepth int) ([]agentsdk.Entry, bool, error) {
	es, more, err := s.es.PathPage(ctx, orgID, executionID, leafID, afterDepth, entrystore.MaxPageLimit, 0, "")
	if err != nil || more {
		return nil, false, notFound(err)
	}
	out := make([]agentsdk.Entry, len(es))
	for i, e := range es {
		out[i] = step.SDKEntry(e)
	}
	return out, true, nil
}

var _ step.PathAfterer = pgStore{}

func (s pgStore) GetEntry(ctx context.Context, orgID, id string) (agentsdk.Entry, error) {
	e, err := s.es.GetEntry(ctx, orgID, id)
	if err != nil {
		return agentsdk.Entry{}, notFound(err)
	}
	return step.SDKEntry(e), nil
}

func (s pgStore) EntryByKey(ctx context.Context, orgID, executionID, key string) (agentsdk.Entry, error) {
	e, err := s.es.GetEntryByKey(ctx, orgID, executionID, key)
	if err != nil {
		return agentsdk.Entry{}, notFound(err)
	}
	return step.SDKEntry(e), nil
}

func (s pgStore) AppendEntries(ctx context.Context, orgID string, entries []agentsdk.Entry) ([]agentsdk.Entry, error) {
	in := make([]entrystore.Entry, len(entries))
	for i, e := range entries {
		in[i] = step.StoredEntry(orgID, e)
	}
	out, err := s.es.AppendEntries(ctx, in)
	if err != nil {
		return nil, err
	}
	res := make([]agentsdk.Entry, len(out))
	for i, e := range out {
		res[i] = step.SDKEntry(e)
	}
	return res, nil
}

func (s pgStore) PutContent(ctx context.Context, orgID, _ string, data []byte, mediaType string) (string, error) {
	sha, _, err := s.es.PutContent(ctx, orgID, data, mediaType)
	return sha, err
}

func (s pgStore) RecordToolCall(ctx context.Context, r agentsdk.ToolCallRecord) error {
	_, err := s.es.RecordToolCall(ctx, toStoreToolCall(r))
	return err
}

// StartToolCall is RecordToolCall returning the record as it then stands
// (step.ToolStarter): the upsert keeps an ended call ended and returns it.
func (s pgStore) StartToolCall(ctx context.Context, r agentsdk.ToolCallRecord) (agentsdk.ToolCallRecord, error) {
	t, err := s.es.RecordToolCall(ctx, toStoreToolCall(r))
	if err != nil {
		return agentsdk.ToolCallRecord{}, err
	}
	return fromStoreToolCall(t), nil
}

// AnnounceToolCall records r and stores evs in one transaction
// (step.Announcer).
func (s pgStore) AnnounceToolCall(ctx context.Context, r agentsdk.ToolCallRecord, evs []event.Event, started bool) (agentsdk.ToolCallRecord, error) {
	batch, err := streamEvents(evs)
	if err != nil {
		return agentsdk.ToolCallRecord{}, err
	}
	t, err := s.es.AnnounceToolCall(ctx, toStoreToolCall(r), batch, started)
	if err != nil {
		return agentsdk.ToolCallRecord{}, err
	}
	return fromStoreToolCall(t), nil
}

// AppendToolResultAnnounced appends a tool call's result entry, ends its
// record linked to it and stores evs, in one transaction
// (step.ResultAnnouncer).
func (s pgStore) AppendToolResultAnnounced(ctx context.Context, orgID string, e agentsdk.Entry, r agentsdk.ToolCallRecord, evs []event.Event) (agentsdk.Entry, bool, error) {
	batch, err := streamEvents(evs)
	if err != nil {
		return agentsdk.Entry{}, false, err
	}
	out, appended, err := s.es.AppendToolResultAnnounced(ctx, step.StoredEntry(orgID, e), toStoreToolCall(r), batch)
	if err != nil || !appended {
		return agentsdk.Entry{}, false, err
	}
	return step.SDKEntry(out), true, nil
}

// AppendToolResultsLinked appends the result entries of one answer's
// tool calls and links their records, in one transaction
// (step.ResultsAppender).
func (s pgStore) AppendToolResultsLinked(ctx context.Context, orgID string, es []agentsdk.Entry, recs []agentsdk.ToolCallRecord) ([]agentsdk.Entry, bool, error) {
	in := make([]entrystore.Entry, len(es))
	for i, e := range es {
		in[i] = step.StoredEntry(orgID, e)
	}
	tcs := make([]entrystore.ToolCall, len(recs))
	for i, r := range recs {
		tcs[i] = toStoreToolCall(r)
	}
	out, appended, err := s.es.AppendToolResults(ctx, in, tcs)
	if err != nil || !appended {
		return nil, false, err
	}
	res := make([]agentsdk.Entry, len(out))
	for i, e := range out {
		res[i] = step.SDKEntry(e)
	}
	return res, true, nil
}

// AppendEntryAnnounced appends e and stores evs with it (step.Announcer).
func (s pgStore) AppendEntryAnnounced(ctx context.Context, orgID string, e agentsdk.Entry, evs []event.Event) (agentsdk.Entry, error) {
	batch, err := streamEvents(evs)
	if err != nil {
		return agentsdk.Entry{}, err
	}
	out, err := s.es.AppendEntryAnnounced(ctx, step.StoredEntry(orgID, e), batch)
	if err != nil {
		return agentsdk.Entry{}, err
	}
	return step.SDKEntry(out), nil
}

// streamEvents are evs as the Postgres store stores them.
func streamEvents(evs []event.Event) ([]entrystore.NewStreamEvent, error) {
	batch := make([]entrystore.NewStreamEvent, len(evs))
	for i, ev := range evs {
		b, err := json.Marshal(ev)
		if err != nil {
			return nil, fmt.Errorf("adapter: publish %s: %w", ev.Name(), err)
		}
		batch[i] = entrystore.NewStreamEvent{Event: ev.Name(), Data: b}
	}
	return batch, nil
}

// toStoreToolCall is a record in the Postgres store's terms.
func toStoreToolCall(r agentsdk.ToolCallRecord) entrystore.ToolCall {
	tc := entrystore.ToolCall{
		OrgID: r.OrgID, ExecutionID: r.ExecutionID, MessageID: r.MessageID, ResultEntryID: r.ResultEntryID,
		ToolCallID: r.ToolCallID, ToolName: r.ToolName, Status: string(r.Status),
		Input: r.Input, Output: r.Output, OutputSHA256: r.OutputSHA256, OutputSize: r.OutputSize,
		Truncated: r.Truncated, DurationMs: r.DurationMs, StepNumber: r.StepNumber, Policy: string(r.Policy),
	}
	if a := r.Approval; a != nil {
		tc.Risk, tc.Decision, tc.DecisionReason, tc.DecidedBy, tc.DecidedAt, tc.AlwaysAllow =
			a.Risk, a.Decision, a.Reason, a.DecidedBy, a.DecidedAt, a.Always
		tc.EditedArguments, tc.StandingApprovalID = a.EditedArguments, a.StandingApprovalID
		if !a.RequestedAt.IsZero() {
			tc.ApprovalRequestedAt = &a.RequestedAt
		}
	}
	return tc
}

func (s pgStore) ToolCall(ctx context.Context, orgID, executionID, messageID, toolCallID string) (agentsdk.ToolCallRecord, error) {
	t, err := s.es.ToolCallOf(ctx, orgID, executionID, messageID, toolCallID)
	if err != nil {
		return agentsdk.ToolCallRecord{}, notFound(err)
	}
	return fromStoreToolCall(t), nil
}

// fromStoreToolCall is a Postgres store's record in the SDK's terms.
func fromStoreToolCall(t entrystore.ToolCall) agentsdk.ToolCallRecord {
	return agentsdk.ToolCallRecord{
		OrgID: t.OrgID, ExecutionID: t.ExecutionID, MessageID: t.MessageID, ResultEntryID: t.ResultEntryID,
		ToolCallID: t.ToolCallID, ToolName: t.ToolName, Status: agentsdk.ToolCallStatus(t.Status),
		Input: t.Input, Output: t.Output, OutputSHA256: t.OutputSHA256, OutputSize: t.OutputSize,
		Truncated: t.Truncated, DurationMs: t.DurationMs, StepNumber: t.StepNumber,
		Policy: agentsdk.ToolPolicy(t.Policy), Approval: approvalOf(t),
	}
}

// approvalOf is the approval part of a record, nil for a call never asked
// about.
func approvalOf(t entrystore.ToolCall) *agentsdk.Approval {
	if t.ApprovalRequestedAt == nil && t.Decision == "" {
		return nil
	}
	a := &agentsdk.Approval{Risk: t.Risk, Decision: t.Decision, Reason: t.DecisionReason,
		DecidedBy: t.DecidedBy, DecidedAt: t.DecidedAt, Always: t.AlwaysAllow,
		EditedArguments: t.EditedArguments, StandingApprovalID: t.StandingApprovalID}
	if t.ApprovalRequestedAt != nil {
		a.RequestedAt = *t.ApprovalRequestedAt
	}
	return a
}

func (s pgStore) Publish(ctx context.Context, orgID, executionID string, ev event.Event) error {
	b, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("adapter: publish %s: %w", ev.Name(), err)
	}
	_, err = s.es.AppendStreamEvent(ctx, orgID, executionID, ev.Name(), b)
	return err
}

func (s pgStore) PublishBatch(ctx context.Context, orgID, executionID string, evs []event.Event) error {
	batch, err := streamEvents(evs)
	if err != nil {
		return err
	}
	_, err = s.es.AppendStreamEvents(ctx, orgID, executionID, batch)
	return err
}
