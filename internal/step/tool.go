package step

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/event"
)

// ToolInput is a tool call's input: references only.
type ToolInput struct {
	OrgID       string `json:"orgId"`
	ExecutionID string `json:"executionId"`
	// AssistantID is the entry whose tool call this is; LeafID the entry
	// the result is appended under.
	AssistantID string `json:"assistantId"`
	LeafID      string `json:"leafId"`
	ToolCallID  string `json:"toolCallId"`
	Key         string `json:"key"`
	StepNumber  int    `json:"stepNumber"`
	// Local runs the call as a local activity first (ToolCallRef.Local).
	Local bool `json:"local,omitempty"`
	// Failures are the tool's failures in attempts made before this
	// input's (a first attempt run as a local activity), counted against
	// its attempts.
	Failures int32 `json:"failures,omitempty"`
}

// RunTool runs one tool call and appends its tool_result entry. The entry
// holds exactly what the model will see: an output past the configured limit
// is cut to head and tail with a note, and the whole output is kept in the
// content store, referenced from the tool-call record. A retry that finds
// the result entry already written returns it without running the tool.
//
// A tool's own error becomes an error result the model reads; only a
// Retryable error, a store failure or ctx's end return an error.
func RunTool(ctx context.Context, d Deps, in ToolInput) (agentsdk.ToolResult, error) {
	if e, err := d.Store.EntryByKey(ctx, in.OrgID, in.ExecutionID, in.Key); err == nil {
		return toolResultFromEntry(e, false)
	} else if !errors.Is(err, agentsdk.ErrNotFound) {
		return agentsdk.ToolResult{}, fmt.Errorf("step: tool call: find %s: %w", in.Key, err)
	}
	// Another run of the call that ended it appended its result entry
	// first: a record ended without one (a refusal's, a rejection's) is
	// answered by running the step as ever.
	var answered agentsdk.Entry
	run, err := runTool(ctx, d, in, func(rec agentsdk.ToolCallRecord) (bool, error) {
		if !hasResult(rec) {
			return false, nil
		}
		e, err := d.Store.EntryByKey(ctx, in.OrgID, in.ExecutionID, in.Key)
		if errors.Is(err, agentsdk.ErrNotFound) {
			return false, nil
		}
		answered = e
		return err == nil, err
	})
	var ended *endedElsewhere
	if errors.As(err, &ended) {
		return toolResultFromEntry(answered, ended.rec.Truncated)
	}
	if err != nil {
		return agentsdk.ToolResult{}, err
	}
	return appendRun(ctx, d, in, run)
}

// endedElsewhere is runTool's answer when the call's record was ended by
// another run of it between this run's look and its start: rec, the
// ended record. Nothing ran.
type endedElsewhere struct{ rec agentsdk.ToolCallRecord }

func (e *endedElsewhere) Error() string {
	return "step: tool call " + e.rec.ToolCallID + " ended in another run"
}

// announceToolCall records rec with the events telling of it: in one
// transaction where the store can (Announcer). With started, rec is the
// call's start, and the record as it then stands is returned.
func (d Deps) announceToolCall(ctx context.Context, rec agentsdk.ToolCallRecord, evs []event.Event, started bool) (agentsdk.ToolCallRecord, error) {
	if a, ok := d.Store.(Announcer); ok {
		return a.AnnounceToolCall(ctx, rec, evs, started)
	}
	return AnnounceToolCallApart(ctx, d.Store, rec, evs, started)
}

// appendRun appends an ended call's result entry, links its record to it
// and announces the outcome, in one transaction where the store can
// (ResultAnnouncer): RunTool's end, and GiveUpTool's.
func appendRun(ctx context.Context, d Deps, in ToolInput, run toolRun) (agentsdk.ToolResult, error) {
	entry := run.entry(in.ExecutionID, in.LeafID, in.Key)
	if a, ok := d.Store.(ResultAnnouncer); ok {
		got, appended, err := a.AppendToolResultAnnounced(ctx, in.OrgID, entry, run.rec, run.events(in))
		if err != nil {
			return agentsdk.ToolResult{}, fmt.Errorf("step: tool call: append result: %w", err)
		}
		if appended {
			d.cacheAppended(in.OrgID, in.ExecutionID, []agentsdk.Entry{got})
			run.rec.ResultEntryID = got.ID
			d.toolRecorded(run.rec)
			return toolResultFromEntry(got, run.rec.Truncated)
		}
	}
	entries, err := d.appendEntries(ctx, in.OrgID, in.ExecutionID, []agentsdk.Entry{entry})
	if err != nil {
		return agentsdk.ToolResult{}, fmt.Errorf("step: tool call: append result: %w", err)
	}
	run.rec.ResultEntryID = entries[0].ID
	if _, err := d.announceToolCall(ctx, run.rec, run.events(in), false); err != nil {
		return agentsdk.ToolResult{}, fmt.Errorf("step: tool call: record end: %w", err)
	}
	d.toolRecorded(run.rec)
	return toolResultFromEntry(entries[0], run.rec.Truncated)
}

func (d Deps) toolRecorded(rec agentsdk.ToolCallRecord) {
	if d.ToolRecorded != nil {
		d.ToolRecorded(rec)
	}
}

// ToolOutcome is what ExecuteTool returns: a tool call that ran, its
// result kept in its tool-call record until AppendToolResults appends it.
type ToolOutcome struct {
	ToolCallID string `json:"toolCallId"`
	IsError    bool   `json:"isError,omitempty"`
	Truncated  bool   `json:"truncated,omitempty"`
	Preview    string `json:"preview,omitempty"`
}

// ExecuteTool runs one tool call as RunTool does but appends no entry: its
// outcome stays in the tool-call record, so calls of one assistant entry
// can run at once and AppendToolResults appends their results in the
// model's order. A retry that finds the call's record ended returns its
// outcome without running the tool again.
func ExecuteTool(ctx context.Context, d Deps, in ToolInput) (ToolOutcome, error) {
	if rec, err := d.Store.ToolCall(ctx, in.OrgID, in.ExecutionID, in.AssistantID, in.ToolCallID); err == nil && hasResult(rec) {
		return outcomeOf(rec), nil
	} else if err != nil && !errors.Is(err, agentsdk.ErrNotFound) {
		return ToolOutcome{}, fmt.Errorf("step: tool call: find record: %w", err)
	}
	run, err := runTool(ctx, d, in, func(rec agentsdk.ToolCallRecord) (bool, error) { return hasResult(rec), nil })
	var ended *endedElsewhere
	if errors.As(err, &ended) {
		return outcomeOf(ended.rec), nil
	}
	if err != nil {
		return ToolOutcome{}, err
	}
	return recordRun(ctx, d, in, run)
}

// recordRun records an ended call's outcome and announces it:
// ExecuteTool's end, and GiveUpExecutedTool's.
func recordRun(ctx context.Context, d Deps, in ToolInput, run toolRun) (ToolOutcome, error) {
	if _, err := d.announceToolCall(ctx, run.rec, run.events(in), false); err != nil {
		return ToolOutcome{}, fmt.Errorf("step: tool call: record end: %w", err)
	}
	d.toolRecorded(run.rec)
	return outcomeOf(run.rec), nil
}

// hasResult reports whether rec ended with a result for the model: not
// running, and not an attempt that failed with a Retryable error (its
// output is {"error": …}, no text), which the next attempt runs again.
func hasResult(rec agentsdk.ToolCallRecord) bool {
	if !rec.Status.Ended() {
		return false
	}
	var out struct {
		Error *string `json:"error"`
	}
	_ = json.Unmarshal(rec.Output, &out)
	return out.Error == nil
}

func outcomeOf(rec agentsdk.ToolCallRecord) ToolOutcome {
	text, isError := recordedResult(rec)
	return ToolOutcome{ToolCallID: rec.ToolCallID, IsError: isError, Truncated: rec.Truncated, Preview: agentsdk.Preview(text)}
}

// recordedResult is the result text and error flag a record keeps.
func recordedResult(rec agentsdk.ToolCallRecord) (string, bool) {
	var out struct {
		Text    string `json:"text"`
		IsError bool   `json:"isError"`
	}
	_ = json.Unmarshal(rec.Output, &out)
	return out.Text, out.IsError
}

// AppendResultsInput appends the results of tool calls of one assistant
// entry, in the order given, under LeafID.
type AppendResultsInput struct {
	OrgID       string   `json:"orgId"`
	ExecutionID string   `json:"executionId"`
	AssistantID string   `json:"assistantId"`
	LeafID      string   `json:"leafId"`
	ToolCallIDs []string `json:"toolCallIds"`
	// Keys are the result entries' idempotency keys, one per call.
	Keys []string `json:"keys"`
}

// AppendToolResults appends, in one transaction and in order, the
// tool_result entries of calls ExecuteTool ran, and links each record to
// its entry: all in that one transaction where the store can
// (ResultsAppender). Repeat-safe: appends are keyed, links idempotent.
func AppendToolResults(ctx context.Context, d Deps, in AppendResultsInput) ([]agentsdk.ToolResult, error) {
	if len(in.Keys) != len(in.ToolCallIDs) {
		return nil, fmt.Errorf("%w: %d keys for %d tool calls", agentsdk.ErrInvalidInput, len(in.Keys), len(in.ToolCallIDs))
	}
	// The assistant entry and the records, read at once: one wait.
	assistant := Prefetch(func() (agentsdk.Entry, error) { return d.Store.GetEntry(ctx, in.OrgID, in.AssistantID) })
	read := make([]func() (agentsdk.ToolCallRecord, error), len(in.ToolCallIDs))
	for i, id := range in.ToolCallIDs {
		read[i] = Prefetch(func() (agentsdk.ToolCallRecord, error) {
			return d.Store.ToolCall(ctx, in.OrgID, in.ExecutionID, in.AssistantID, id)
		})
	}
	asked, err := assistant()
	if err != nil {
		return nil, fmt.Errorf("step: append tool results: assistant entry: %w", err)
	}
	recs := make([]agentsdk.ToolCallRecord, len(in.ToolCallIDs))
	entries := make([]agentsdk.Entry, len(in.ToolCallIDs))
	for i, id := range in.ToolCallIDs {
		rec, err := read[i]()
		if err != nil {
			return nil, fmt.Errorf("step: append tool results: record of %s: %w", id, err)
		}
		if !hasResult(rec) {
			return nil, fmt.Errorf("%w: tool call %s has not ended (%s)", agentsdk.ErrInvalidInput, id, rec.Status)
		}
		text, isError := recordedResult(rec)
		r := toolRun{rec: rec, result: agentsdk.ToolResultMessage(agentsdk.ToolCall{ID: rec.ToolCallID, Name: rec.ToolName}, text, isError), turnID: asked.TurnID}
		parent := agentsdk.PrevEntry
		if i == 0 {
			parent = in.LeafID
		}
		recs[i], entries[i] = rec, r.entry(in.ExecutionID, parent, in.Keys[i])
	}
	if a, ok := d.Store.(ResultsAppender); ok {
		got, appended, err := a.AppendToolResultsLinked(ctx, in.OrgID, entries, recs)
		if err != nil {
			return nil, fmt.Errorf("step: append tool results: %w", err)
		}
		if appended {
			d.cacheAppended(in.OrgID, in.ExecutionID, got)
			return toolResults(got, recs)
		}
	}
	got, err := d.appendEntries(ctx, in.OrgID, in.ExecutionID, entries)
	if err != nil {
		return nil, fmt.Errorf("step: append tool results: %w", err)
	}
	for i, e := range got {
		recs[i].ResultEntryID = e.ID
		if err := d.Store.RecordToolCall(ctx, recs[i]); err != nil {
			return nil, fmt.Errorf("step: append tool results: link %s: %w", recs[i].ToolCallID, err)
		}
	}
	return toolResults(got, recs)
}

// toolResults are the results of the entries got, appended for recs.
func toolResults(got []agentsdk.Entry, recs []agentsdk.ToolCallRecord) ([]agentsdk.ToolResult, error) {
	out := make([]agentsdk.ToolResult, len(got))
	for i, e := range got {
		var err error
		if out[i], err = toolResultFromEntry(e, recs[i].Truncated); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// toolRun is a tool call that ran: its record (status, output) and the
// result message the model will see.
type toolRun struct {
	rec    agentsdk.ToolCallRecord
	result agentsdk.Message
	shown  string
	// turnID is the turn of the answer that made the call: its result
	// belongs to it.
	turnID string
}

func (r toolRun) entry(executionID, parentID, key string) agentsdk.Entry {
	content, _ := json.Marshal(r.result)
	return agentsdk.Entry{
		ExecutionID: executionID, ParentID: parentID, Type: agentsdk.EntryMessage,
		Role: agentsdk.RoleToolResult, Content: content, IdempotencyKey: key, TurnID: r.turnID,
	}
}

// events announce the call's outcome: a tool_result data event, then
// task.completed (task.failed for an error result), stored with its
// record.
func (r toolRun) events(in ToolInput) []event.Event {
	isError := r.rec.Status == agentsdk.ToolError
	result := event.Data{AgentExecutionID: in.ExecutionID, TaskExecutionID: r.rec.ToolCallID,
		Data: event.Payload{Type: event.TypeToolResult, ToolCall: &event.ToolCall{ID: r.rec.ToolCallID, Name: r.rec.ToolName},
			Result: &event.ToolResult{IsError: isError, Preview: agentsdk.Preview(r.shown), Truncated: r.rec.Truncated}}}
	var ended event.Event = event.TaskCompleted{AgentExecutionID: in.ExecutionID, TaskExecutionID: r.rec.ToolCallID, Kind: r.rec.ToolName}
	if isError {
		ended = event.TaskFailed{AgentExecutionID: in.ExecutionID, TaskExecutionID: r.rec.ToolCallID, Kind: r.rec.ToolName, Error: agentsdk.Preview(r.shown)}
	}
	return []event.Event{result, ended}
}

// runTool finds the call, records it running, runs it and returns its
// ended record (without a result entry yet) and result message.
//
// ended says whether the record the call's start finds (StartToolCall)
// was ended by another run of the call, which answered it: then nothing
// runs and runTool returns an *endedElsewhere.
func runTool(ctx context.Context, d Deps, in ToolInput, ended func(agentsdk.ToolCallRecord) (bool, error)) (toolRun, error) {
	assistant, err := d.entry(ctx, in.OrgID, in.ExecutionID, in.AssistantID)
	if err != nil {
		return toolRun{}, fmt.Errorf("step: tool call: assistant entry: %w", err)
	}
	msg, err := assistant.Message()
	if err != nil {
		return toolRun{}, fmt.Errorf("step: tool call: decode assistant entry: %w", err)
	}
	var call *agentsdk.ToolCall
	for _, tc := range msg.ToolCalls() {
		if tc.ID == in.ToolCallID {
			call = &tc
			break
		}
	}
	if call == nil {
		return toolRun{}, fmt.Errorf("%w: entry %s has no tool call %q", agentsdk.ErrInvalidInput, in.AssistantID, in.ToolCallID)
	}
	cfg, err := d.config(ctx, in.OrgID, in.ExecutionID)
	if err != nil {
		return toolRun{}, fmt.Errorf("step: tool call: config: %w", err)
	}
	cfg = cfg.WithDefaults()
	meta := AnswerMetaOf(assistant)
	rec := agentsdk.ToolCallRecord{
		OrgID: in.OrgID, ExecutionID: in.ExecutionID, MessageID: in.AssistantID,
		ToolCallID: call.ID, ToolName: call.Name, Status: agentsdk.ToolRunning,
		Input: call.Arguments, StepNumber: in.StepNumber, Policy: meta.Policy(call.ID),
		Approval: meta.preApproval(call.ID, d.now()),
	}
	// The call runs with the arguments a person edited when approving
	// it; the model's stay in the assistant entry and the record's Input.
	run, edited, err := d.approvedCall(ctx, in, meta, *call)
	if err != nil {
		return toolRun{}, fmt.Errorf("step: tool call: %w", err)
	}
	// task.started is stored with the start, unless the start finds the
	// call answered.
	started := event.TaskStarted{AgentExecutionID: in.ExecutionID, TaskExecutionID: call.ID, Kind: call.Name, Arguments: run.Arguments}
	if stood, err := d.announceToolCall(ctx, rec, []event.Event{started}, true); err != nil {
		return toolRun{}, fmt.Errorf("step: tool call: record start: %w", err)
	} else if done, err := ended(stood); err != nil {
		return toolRun{}, fmt.Errorf("step: tool call: find its answer: %w", err)
	} else if done {
		return toolRun{}, &endedElsewhere{rec: stood}
	}
	publishData := func(p event.Payload) {
		_ = d.Store.Publish(ctx, in.OrgID, in.ExecutionID, event.Data{AgentExecutionID: in.ExecutionID, TaskExecutionID: call.ID, Data: p})
	}
	// A tool's own values (terminal output, progress) are custom payloads
	// unless the tool sends an event.Payload.
	publish := func(v any) {
		if p, err := event.Custom(v); err == nil {
			publishData(p)
		}
	}

	start := d.now()
	var output string
	var isError bool
	refusal, err := d.refusal(ctx, in, cfg, assistant, *call)
	if err != nil {
		return toolRun{}, fmt.Errorf("step: tool call: %w", err)
	}
	// A counterfactual branch answers a call its original made from the
	// record: nothing runs again, so nothing waits for approval either.
	recorded, recordedError, replay, err := d.recordedAnswer(ctx, in.OrgID, cfg, *call)
	if err != nil {
		return toolRun{}, fmt.Errorf("step: tool call: %w", err)
	}
	switch {
	case replay && AnswerMetaOf(assistant).Policy(call.ID) != agentsdk.PolicyForbid:
		output, isError = recorded, recordedError
	case refusal != "":
		output, isError = refusal, true
	default:
		output, isError, err = invoke(ctx, d.Tools, cfg, run, in, publish)
	}
	if err != nil && d.Interrupted != nil && d.Interrupted(ctx) {
		// The worker is stopping, or a local first attempt reached its
		// limit: this attempt ends, not the call, which runs again (on
		// another worker, or as an activity). Its record stays running
		// and no end is announced, so a client never reads the call
		// ended before it starts again.
		return toolRun{}, err
	}
	if err != nil {
		rec.Status = agentsdk.ToolCancelled
		if !errors.Is(err, context.Canceled) && !errors.Is(ctx.Err(), context.Canceled) {
			rec.Status = agentsdk.ToolError
		}
		rec.DurationMs = d.now().Sub(start).Milliseconds()
		rec.Output, _ = json.Marshal(map[string]string{"error": err.Error()})
		_ = d.Store.RecordToolCall(context.WithoutCancel(ctx), rec)
		// A Retryable failure is an attempt's: the call is tried again,
		// or given up on when its attempts are spent (GiveUpTool), which
		// announces its end. A cancelled call, or one that timed out,
		// ends here.
		if !agentsdk.IsRetryable(err) {
			_ = d.Store.Publish(context.WithoutCancel(ctx), in.OrgID, in.ExecutionID,
				event.TaskFailed{AgentExecutionID: in.ExecutionID, TaskExecutionID: call.ID, Kind: call.Name, Error: err.Error()})
		}
		return toolRun{}, err
	}
	rec.DurationMs = d.now().Sub(start).Milliseconds()

	shown, truncated := Truncate(output, cfg.ToolOutputLimit)
	if edited && refusal == "" {
		shown = editedNote(run.Arguments) + shown
	}
	rec.OutputSize = int64(len(output))
	rec.Truncated = truncated
	if truncated {
		sha, err := d.Store.PutContent(ctx, in.OrgID, in.ExecutionID, []byte(output), "text/plain; charset=utf-8")
		if err != nil {
			return toolRun{}, fmt.Errorf("step: tool call: keep full output: %w", err)
		}
		rec.OutputSHA256 = sha
	}
	rec.Status = agentsdk.ToolCompleted
	if isError {
		rec.Status = agentsdk.ToolError
	}
	rec.Output, _ = json.Marshal(map[string]any{"text": shown, "isError": isError})
	return toolRun{rec: rec, result: agentsdk.ToolResultMessage(*call, shown, isError), shown: shown, turnID: assistant.TurnID}, nil
}

// editedNote heads the result of a call whose arguments a person edited
// before approving it: the model's answer still shows its own arguments,
// so the result says what ran.
func editedNote(args json.RawMessage) string {
	return fmt.Sprintf("[note: a person edited this call's arguments before approving it; it ran with %s]\n", compactJSON(args))
}

func compactJSON(b json.RawMessage) string {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return string(b)
	}
	return buf.String()
}

// approvedCall is call as it runs: with the arguments of the person who
// approved it, when they edited them (and edited true).
func (d Deps) approvedCall(ctx context.Context, in ToolInput, meta AnswerMeta, call agentsdk.ToolCall) (agentsdk.ToolCall, bool, error) {
	if meta.Policy(call.ID) != agentsdk.PolicyAsk {
		return call, false, nil
	}
	rec, err := d.Store.ToolCall(ctx, in.OrgID, in.ExecutionID, in.AssistantID, call.ID)
	if errors.Is(err, agentsdk.ErrNotFound) {
		return call, false, nil
	}
	if err != nil {
		return call, false, fmt.Errorf("record of %s: %w", call.ID, err)
	}
	a := rec.Approval
	if a == nil || a.Decision != agentsdk.DecisionApprove || len(a.EditedArguments) == 0 {
		return call, false, nil
	}
	call.Arguments = a.EditedArguments
	return call, true, nil
}

// refusal says why the call may not run, or "": under the stricter of
// the policy recorded with the answer and the one the worker resolves now
// (a ceiling the operator lowered since then holds), a forbidden call is
// refused, and an ask call without a recorded approval too (Refusal).
func (d Deps) refusal(ctx context.Context, in ToolInput, cfg agentsdk.Config, assistant agentsdk.Entry, call agentsdk.ToolCall) (string, error) {
	t, _ := d.Tools.Get(call.Name)
	meta := AnswerMetaOf(assistant)
	p := agentsdk.Stricter(meta.Policy(call.ID), agentsdk.PolicyFor(in.OrgID, call.Name, t, cfg.ToolPolicy, d.Policy))
	if p == agentsdk.PolicyAsk && d.stillPreApproved(meta, call) {
		return "", nil
	}
	operator := d.Policy.Ceiling(in.OrgID, call.Name, t) == agentsdk.PolicyForbid
	return Refusal(ctx, d.Store, in.OrgID, in.ExecutionID, assistant, call, p, operator)
}

// invoke validates the arguments and runs the tool. Bad arguments, an
// unknown or unconfigured tool, and the tool's own errors come back as an
// error output for the model; a Retryable error or ctx's end as err.
func invoke(ctx context.Context, tools agentsdk.Tools, cfg agentsdk.Config, call agentsdk.ToolCall, in ToolInput, publish func(any)) (string, bool, error) {
	allowed := false
	for _, n := range cfg.Tools {
		allowed = allowed || n == call.Name
	}
	if !allowed {
		return fmt.Sprintf("error: tool %q is not available to this agent", call.Name), true, nil
	}
	tool, err := tools.Get(call.Name)
	if err != nil {
		return "error: " + err.Error(), true, nil
	}
	if err := tool.Validate(call.Arguments); err != nil {
		return "error: " + err.Error(), true, nil
	}
	out, err := tool.Run(ctx, agentsdk.ToolInvocation{
		ExecutionID: in.ExecutionID, OrgID: in.OrgID, ToolCallID: call.ID,
		Arguments: call.Arguments, Emit: publish,
	})
	switch {
	case err == nil:
		return out, false, nil
	case ctx.Err() != nil:
		return "", false, ctx.Err()
	case agentsdk.IsRetryable(err):
		return "", false, err
	default:
		return "error: " + err.Error(), true, nil
	}
}

func toolResultFromEntry(e agentsdk.Entry, truncated bool) (agentsdk.ToolResult, error) {
	ref, err := Ref(e)
	if err != nil {
		return agentsdk.ToolResult{}, err
	}
	m, _ := e.Message()
	return agentsdk.ToolResult{Entry: ref, ToolCallID: m.ToolCallID, IsError: m.IsError, Truncated: truncated, Preview: ref.Preview}, nil
}

// Truncate cuts s to at most limit bytes, keeping its head and tail and
// saying in the middle how much was left out. It reports whether it cut.
// A limit too small to hold that note keeps the head alone.
func Truncate(s string, limit int) (string, bool) {
	if limit <= 0 || len(s) <= limit {
		return s, false
	}
	note := func(omitted int) string {
		return fmt.Sprintf("\n\n[… %d bytes of %d omitted: the full output is kept in the content store …]\n\n", omitted, len(s))
	}
	// Room is left for the longest note: what is omitted is not known
	// until the cuts move to rune boundaries, and never exceeds len(s).
	keep := limit - len(note(len(s)))
	if keep < 0 {
		return cutRune(s, limit, false), true
	}
	head := cutRune(s, keep/2, false)
	tail := cutRune(s, keep-len(head), true)
	return head + note(len(s)-len(head)-len(tail)) + tail, true
}

// cutRune returns s's first (or last) n bytes, moved to a rune boundary.
func cutRune(s string, n int, fromEnd bool) string {
	if n >= len(s) {
		return s
	}
	if !fromEnd {
		for n > 0 && s[n]&0xC0 == 0x80 {
			n--
		}
		return s[:n]
	}
	i := len(s) - n
	for i < len(s) && s[i]&0xC0 == 0x80 {
		i++
	}
	return s[i:]
}
