package step

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/event"
)

// Deps are what the steps run with.
type Deps struct {
	Store Store
	// Endpoints route model calls to the providers serving them.
	Endpoints *agentsdk.Endpoints
	Tools     agentsdk.Tools
	// Policy is the operator's tool policy: a ceiling over the
	// execution's (agentsdk.PolicyFor).
	Policy agentsdk.Operator
	// Now is the clock for latencies and durations; nil = time.Now.
	Now func() time.Time
	// Publish tunes how model calls' deltas are batched to the stream.
	Publish PublishOptions
	// Windows extends the built-in table of models' context windows,
	// which compaction measures the context against.
	Windows agentsdk.ContextWindows
	// Compacting, when set, observes each compaction: it is called as one
	// starts (trigger "auto" or "manual") and returns the context the
	// compaction runs in — its summary call's included — and a function
	// called with the record written (zero when nothing was summarised)
	// or the error. The worker makes each a span and counts them.
	Compacting func(ctx context.Context, trigger string) (context.Context, func(agentsdk.CompactionRecord, error))
	// ToolRecorded, when set, is called with a tool call's record as it
	// is written at the call's end (RunTool, ExecuteTool).
	ToolRecorded func(agentsdk.ToolCallRecord)
	// Cache, when set, keeps each execution's configuration and context
	// between its model calls, so a call reads only what is new (see
	// Cache); nil reads both whole on every call.
	Cache *Cache
	// Gate, when set, is asked before every model call whether the
	// budgets over it (the organization's daily quota, the execution's
	// and its ancestors' config.budget, its definition's total) allow it:
	// an error wrapping agentsdk.ErrBudgetSpent refuses the call (the
	// execution pauses); otherwise Gate.Share is the largest share of a
	// cap spent, which the execution's budget.downgradeAt is compared
	// with. A store that reads, in the same round trip, the active
	// variant's overlay and whether an entry has the call's key returns
	// them too (Gate.Overlay, Gate.KeyFree): every call reads all three.
	// A retry that finds its answer written is never refused: it spends
	// nothing. nil allows every call.
	Gate func(ctx context.Context, orgID, executionID, key string) (Gate, error)
	// ActivityTools runs every tool call as an activity from its first
	// attempt, as if each tool were LongRunning (see markLocal).
	ActivityTools bool
	// StandingApproval, when set, finds a standing approval (per
	// definition or organization) that covers call, a call whose policy
	// is ask in the execution: its ID, "" for none. nil: none does.
	StandingApproval func(ctx context.Context, orgID, executionID string, call agentsdk.ToolCall) (string, error)
	// ModelIdleTimeout, when positive, is how long a model call's stream
	// may send nothing (before its first event or between two) before the
	// call is given up as a retryable model failure, so a server that
	// stops mid-stream without closing is retried, not waited on until
	// the call's whole timeout. 0: no bound.
	ModelIdleTimeout time.Duration
	// Interrupted, when set, reports whether ctx ended with its attempt,
	// not its call: the worker is stopping (a deploy's graceful stop), or
	// a local first attempt reached its limit. A tool call so cut short
	// records and announces no end, as another worker or an activity runs
	// it again. nil: never.
	Interrupted func(ctx context.Context) bool
}

// config is the execution's configuration, from the cache if it has it.
func (d Deps) config(ctx context.Context, orgID, executionID string) (agentsdk.Config, error) {
	if d.Cache != nil {
		return d.Cache.config(ctx, d.Store, orgID, executionID)
	}
	return d.Store.ExecutionConfig(ctx, orgID, executionID)
}

// entry is the execution's entry id, from the cache if it holds it.
func (d Deps) entry(ctx context.Context, orgID, executionID, id string) (agentsdk.Entry, error) {
	if d.Cache != nil {
		if e, ok := d.Cache.entry(orgID, executionID, id); ok {
			return e, nil
		}
	}
	return d.Store.GetEntry(ctx, orgID, id)
}

// appendEntries appends entries and tells the cache of them.
func (d Deps) appendEntries(ctx context.Context, orgID, executionID string, entries []agentsdk.Entry) ([]agentsdk.Entry, error) {
	out, err := d.Store.AppendEntries(ctx, orgID, entries)
	if err == nil {
		d.cacheAppended(orgID, executionID, out)
	}
	return out, err
}

// cacheAppended tells the cache of entries appended.
func (d Deps) cacheAppended(orgID, executionID string, entries []agentsdk.Entry) {
	if d.Cache != nil {
		d.Cache.Appended(orgID, executionID, entries)
	}
}

// contextView is the view of the context path to leafID, and that path.
func (d Deps) contextView(ctx context.Context, orgID, executionID, leafID string) (View, []agentsdk.Entry, error) {
	if d.Cache != nil {
		return d.Cache.View(ctx, d.Store, orgID, executionID, leafID)
	}
	path, err := d.Store.ContextPath(ctx, orgID, leafID)
	if err != nil {
		return View{}, nil, fmt.Errorf("step: model call: path: %w", err)
	}
	v, err := ViewOf(path)
	return v, path, err
}

func (d Deps) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

// ModelInput is a model call's input: references only.
type ModelInput struct {
	OrgID       string            `json:"orgId"`
	ExecutionID string            `json:"executionId"`
	LeafID      string            `json:"leafId"`
	Model       agentsdk.ModelRef `json:"model"`
	// Key is the idempotency key of the assistant entry.
	Key    string `json:"key"`
	TurnID string `json:"turnId,omitempty"`
	// FallbackReason says why earlier models did not answer, if any.
	FallbackReason string `json:"fallbackReason,omitempty"`
	// Failures are the model's failures in attempts made before this
	// input's (a first attempt run as a local activity), counted against
	// its attempts.
	Failures int32 `json:"failures,omitempty"`
}

// LLMCallMeta is a model call's record (seed 000). An answering call's
// record is folded into the assistant entry it wrote (AnswerMeta.Call)
// and leaves out what that message holds itself: its usage, cost and stop
// reason, and its model when the message names the one called. A
// compaction's summary call keeps an llm_call entry of its own, as every
// call did before (issue 18: one row per call, not two). CallOf reads
// either whole.
type LLMCallMeta struct {
	Model          agentsdk.ModelRef   `json:"model,omitzero"`
	Usage          agentsdk.Usage      `json:"usage,omitzero"`
	Cost           float64             `json:"cost,omitempty"`
	LatencyMs      int64               `json:"latencyMs"`
	StopReason     agentsdk.StopReason `json:"stopReason,omitempty"`
	FallbackReason string              `json:"fallbackReason,omitempty"`
	// Tools are the names of the tools the model was offered; nil when
	// they are those its execution's configuration offers
	// (Config.OfferedTools), as they mostly are.
	Tools []string `json:"tools,omitzero"`
	// Purpose is "compaction" for a call that wrote a compaction's
	// summary, whose request summarised the entries before
	// FirstKeptDepth on its path; "" for a call that answered.
	Purpose        string `json:"purpose,omitempty"`
	FirstKeptDepth int    `json:"firstKeptDepth,omitempty"`
	// Downgraded is why the call went to a cheaper model than the one the
	// agent asked for, DowngradedFrom: "budget" (agentsdk.Budget's
	// downgradeAt was reached).
	Downgraded     string             `json:"downgraded,omitempty"`
	DowngradedFrom *agentsdk.ModelRef `json:"downgradedFrom,omitempty"`
}

// CallOf is the record of the model call entry e holds: an llm_call
// entry's, or the one folded into an assistant entry, completed from its
// message. ok is false for an entry that holds none (a message appended
// by a client, a tool result…).
func CallOf(e agentsdk.Entry) (meta LLMCallMeta, ok bool, err error) {
	switch {
	case e.Type == agentsdk.EntryLLMCall:
		if len(e.Metadata) > 0 {
			err = json.Unmarshal(e.Metadata, &meta)
		}
		return meta, true, err
	case e.Type == agentsdk.EntryMessage && e.Role == agentsdk.RoleAssistant:
		call := AnswerMetaOf(e).Call
		if call == nil {
			return meta, false, nil
		}
		var m agentsdk.Message
		if err := json.Unmarshal(e.Content, &m); err != nil {
			return meta, false, err
		}
		meta = *call
		if m.Usage != nil {
			meta.Usage = *m.Usage
			meta.Cost = m.Usage.Cost
		}
		meta.StopReason = m.StopReason
		if meta.Model == (agentsdk.ModelRef{}) {
			meta.Model = agentsdk.ModelRef{Provider: m.Provider, ModelID: m.Model}
		}
		return meta, true, nil
	}
	return meta, false, nil
}

// Request is the model request for the conversation path under cfg (with
// its defaults), offering tools: what CallModel sends, and what the time
// travel view (GET …/entries/{id}/context) shows, built by this one
// function so the two cannot drift.
//
// Past a compaction on the path the model sees its summary and the entries
// from its boundary on (ViewOf).
func Request(cfg agentsdk.Config, model agentsdk.ModelRef, path []agentsdk.Entry, tools []agentsdk.ToolSpec) (agentsdk.ModelRequest, error) {
	v, err := ViewOf(path)
	if err != nil {
		return agentsdk.ModelRequest{}, err
	}
	return requestOf(cfg, model, v, tools)
}

func requestOf(cfg agentsdk.Config, model agentsdk.ModelRef, v View, tools []agentsdk.ToolSpec) (agentsdk.ModelRequest, error) {
	msgs, err := v.Messages()
	if err != nil {
		return agentsdk.ModelRequest{}, err
	}
	budget, byDefault := cfg.Thinking()
	return agentsdk.ModelRequest{
		Model:             model,
		System:            cfg.SystemPrompt,
		Messages:          msgs,
		Tools:             tools,
		MaxTokens:         cfg.MaxTokens,
		Temperature:       cfg.Temperature,
		ThinkingBudget:    budget,
		ThinkingByDefault: byDefault,
	}, nil
}

// CallModel answers the conversation at in.LeafID with in.Model, streaming
// deltas to the execution's stream, and appends the assistant entry, which
// holds the call's record (LLMCallMeta) in its metadata. If
// the assistant entry for in.Key already exists — a retry after the answer
// was written — it is returned and the model is not called.
func CallModel(ctx context.Context, d Deps, in ModelInput) (agentsdk.ModelResult, error) {
	// A retry's answer if it is written; else the budgets over the call,
	// the active variant's view of the context, and its model if it
	// overrides the agent's (issue 40).
	g, ov, done, err := d.gated(ctx, in)
	if done != nil || err != nil {
		if done == nil {
			return agentsdk.ModelResult{}, err
		}
		return *done, err
	}
	cfg, err := d.config(ctx, in.OrgID, in.ExecutionID)
	if err != nil {
		return agentsdk.ModelResult{}, fmt.Errorf("step: model call: config: %w", err)
	}
	cfg = cfg.WithDefaults()
	if ov.Model != nil {
		in.Model = *ov.Model
	}
	requested := in.Model
	if to, ok := cfg.Budget.Downgrade(cfg.Models, g.Share); ok {
		in.Model = to
	}
	provider, err := d.Endpoints.Resolve(in.Model)
	if err != nil {
		return agentsdk.ModelResult{}, err
	}
	offered := d.offered(in.OrgID, cfg)
	tools, err := d.offeredSpecs(offered, cfg)
	if err != nil {
		return agentsdk.ModelResult{}, err
	}
	parent, req, err := d.prepare(ctx, cfg, in, tools, ov)
	if err != nil {
		return agentsdk.ModelResult{}, err
	}
	if in.Model != requested {
		// Said before the call's deltas; a failed publish is not the
		// call's failure (its record says it too).
		_ = d.Store.PublishBatch(ctx, in.OrgID, in.ExecutionID, []event.Event{event.Data{AgentExecutionID: in.ExecutionID, TaskExecutionID: in.Key,
			Data: event.Payload{Type: event.TypeModelDowngraded, Downgrade: &event.Downgrade{Model: in.Model.Key(), From: requested.Key(), Reason: agentsdk.DowngradedBudget}}}})
	}
	pub := newPublisher(ctx, d.Store, in.OrgID, in.ExecutionID, in.Key, d.Publish)
	start := d.now()
	idle, stopIdle := watchIdle(ctx, d.ModelIdleTimeout)
	resp, err := provider.Stream(idle.ctx, req, func(ev agentsdk.StreamEvent) {
		idle.touch()
		pub.onEvent(ev)
	})
	stopIdle()
	// Every delta is stored before the step returns, cancelled or not, so
	// whatever is published after the call (tool events, the engine's
	// lifecycle events) comes after its last token. A failed publish is
	// not the model's failure: the entries are the record. A call that
	// answered stores the deltas still queued with its answer, one commit
	// for both, where the store can (Announcer); they are published on
	// their own if the step fails before that.
	announcer, announces := d.Store.(Announcer)
	var rest []event.Event
	if announces && err == nil {
		rest, _ = pub.detach()
		defer func() {
			if len(rest) > 0 {
				_ = d.Store.PublishBatch(context.WithoutCancel(ctx), in.OrgID, in.ExecutionID, rest)
			}
		}()
	} else {
		_ = pub.close()
	}
	if err != nil && idle.fired() && ctx.Err() == nil {
		err = &agentsdk.ModelError{Provider: in.Model.Provider, Retryable: true, Err: err,
			Message: fmt.Sprintf("the model sent nothing for %s; the call is made again", d.ModelIdleTimeout)}
	}
	if err != nil {
		return agentsdk.ModelResult{}, modelError(ctx, in.Model, err)
	}
	msg := resp.Message
	msg.Role = agentsdk.RoleAssistant
	if msg.Provider == "" {
		msg.Provider = in.Model.Provider
	}
	if msg.Model == "" {
		msg.Model = in.Model.ModelID
	}
	normaliseToolCallIDs(&msg, in.Key)
	content, err := json.Marshal(msg)
	if err != nil {
		return agentsdk.ModelResult{}, fmt.Errorf("step: model call: encode answer: %w", err)
	}
	// The call's record goes with its answer: one entry, one row.
	call := LLMCallMeta{LatencyMs: d.now().Sub(start).Milliseconds(), FallbackReason: in.FallbackReason}
	if in.Model != requested {
		call.Downgraded, call.DowngradedFrom = agentsdk.DowngradedBudget, &requested
	}
	if !slices.Equal(offered, cfg.OfferedTools()) {
		call.Tools = offered // never nil: nil stands for the configuration's
	}
	if in.Model != (agentsdk.ModelRef{Provider: msg.Provider, ModelID: msg.Model}) {
		call.Model = in.Model
	}
	meta, err := d.counterfactualMeta(ctx, in.OrgID, cfg, msg, d.answerMeta(ctx, in.OrgID, in.ExecutionID, cfg, msg))
	if err != nil {
		return agentsdk.ModelResult{}, fmt.Errorf("step: model call: %w", err)
	}
	meta.Call = &call
	metadata, err := json.Marshal(meta)
	if err != nil {
		return agentsdk.ModelResult{}, fmt.Errorf("step: model call: encode its record: %w", err)
	}
	answer := agentsdk.Entry{ExecutionID: in.ExecutionID, ParentID: parent, Type: agentsdk.EntryMessage, Role: agentsdk.RoleAssistant,
		Content: content, TurnID: in.TurnID, IdempotencyKey: in.Key, Metadata: metadata}
	var entries []agentsdk.Entry
	if announces {
		// Stored with the answer; a failed append stored none of them,
		// and the deferred write stores them on their own, as the call
		// streamed them (its retry streams again).
		var e agentsdk.Entry
		if e, err = announcer.AppendEntryAnnounced(ctx, in.OrgID, answer, rest); err == nil {
			rest = nil
			entries = []agentsdk.Entry{e}
			d.cacheAppended(in.OrgID, in.ExecutionID, entries)
		}
	} else {
		entries, err = d.appendEntries(ctx, in.OrgID, in.ExecutionID, []agentsdk.Entry{answer})
	}
	if err != nil {
		return agentsdk.ModelResult{}, fmt.Errorf("step: model call: append: %w", err)
	}
	res, err := resultFromEntry(entries[0])
	if err != nil {
		return res, err
	}
	res.LLMCallID = entries[0].ID
	res.FallbackReason = in.FallbackReason
	d.markLocal(&res)
	return res, nil
}

// modelError makes whatever a provider failed with a model error, so it
// is counted against the model's attempts and can fall back — and never
// taken for the store being down. A provider should return
// *agentsdk.ModelError; a bare error (a dropped connection, the call's
// deadline) is a retryable one. Only ctx's cancellation stays as it is.
func modelError(ctx context.Context, model agentsdk.ModelRef, err error) error {
	if _, ok := agentsdk.AsModelError(err); ok || errors.Is(err, agentsdk.ErrInvalidInput) {
		return err
	}
	if errors.Is(ctx.Err(), context.Canceled) {
		return err
	}
	return &agentsdk.ModelError{Provider: model.Provider, Message: err.Error(), Retryable: true, Err: err}
}

// Messages returns the message entries of a path as messages.
func Messages(path []agentsdk.Entry) ([]agentsdk.Message, error) {
	msgs := make([]agentsdk.Message, 0, len(path))
	for _, e := range path {
		if e.Type != agentsdk.EntryMessage {
			continue
		}
		m, err := e.Message()
		if err != nil {
			return nil, fmt.Errorf("step: entry %s: %w", e.ID, err)
		}
		msgs = append(msgs, m)
	}
	return msgs, nil
}

// Ref summarises an entry for workflow code.
func Ref(e agentsdk.Entry) (agentsdk.EntryRef, error) {
	ref := agentsdk.EntryRef{ID: e.ID, Type: e.Type, Role: e.Role}
	if e.Type != agentsdk.EntryMessage {
		return ref, nil
	}
	m, err := e.Message()
	if err != nil {
		return ref, fmt.Errorf("step: entry %s: %w", e.ID, err)
	}
	ref.StopReason = m.StopReason
	ref.IsError = m.IsError
	ref.Preview = agentsdk.Preview(m.Text())
	policies := AnswerMetaOf(e)
	for _, tc := range m.ToolCalls() {
		ref.ToolCalls = append(ref.ToolCalls, agentsdk.ToolCallRef{ID: tc.ID, Name: tc.Name, Digest: digest(tc), Policy: policies.waitPolicy(tc.ID),
			Client: slices.Contains(policies.Client, tc.ID)})
	}
	return ref, nil
}

func resultFromEntry(e agentsdk.Entry) (agentsdk.ModelResult, error) {
	ref, err := Ref(e)
	if err != nil {
		return agentsdk.ModelResult{}, err
	}
	m, _ := e.Message()
	res := agentsdk.ModelResult{
		Entry:      ref,
		Model:      agentsdk.ModelRef{Provider: m.Provider, ModelID: m.Model},
		StopReason: m.StopReason,
	}
	if m.Usage != nil {
		res.Usage = *m.Usage
	}
	return res, nil
}

// digest hashes a tool call's name and canonical arguments, so loop
// detection sees the same call however its JSON was spaced.
func digest(tc agentsdk.ToolCall) string {
	args := []byte(tc.Arguments)
	var v any
	if json.Unmarshal(args, &v) == nil {
		args, _ = json.Marshal(v)
	}
	h := sha256.New()
	h.Write([]byte(tc.Name))
	h.Write([]byte{0})
	h.Write(args)
	return hex.EncodeToString(h.Sum(nil))[:16]
}
