package gateway

import (
	"encoding/json"
	"fmt"

	"github.com/agentree/agentree/agentsdk/event"
	"github.com/agentree/agentree/entrystore"
)

// The AG-UI event stream of an execution (README "AG-UI"): the same
// stored events as …/stream, each mapped to the AG-UI 1.0 events it
// stands for. A thread is the execution; a run is the stretch from the
// execution starting or resuming to its next wait or end, so every run
// ends with RUN_FINISHED — with an interrupt outcome when it waits for an
// approval — or RUN_ERROR.

// aguiEvent is one AG-UI event; which fields it carries depends on Type.
type aguiEvent struct {
	Type            string          `json:"type"`
	ThreadID        string          `json:"threadId,omitempty"`
	RunID           string          `json:"runId,omitempty"`
	MessageID       string          `json:"messageId,omitempty"`
	Role            string          `json:"role,omitempty"`
	Delta           string          `json:"delta,omitempty"`
	ToolCallID      string          `json:"toolCallId,omitempty"`
	ToolCallName    string          `json:"toolCallName,omitempty"`
	ParentMessageID string          `json:"parentMessageId,omitempty"`
	Content         *string         `json:"content,omitempty"`
	StepName        string          `json:"stepName,omitempty"`
	Outcome         *aguiOutcome    `json:"outcome,omitempty"`
	Message         string          `json:"message,omitempty"`
	Code            string          `json:"code,omitempty"`
	Name            string          `json:"name,omitempty"`
	Value           json.RawMessage `json:"value,omitempty"`
	Timestamp       int64           `json:"timestamp,omitempty"`
}

// aguiOutcome is RUN_FINISHED's outcome.
type aguiOutcome struct {
	Type       string          `json:"type"`
	Interrupts []aguiInterrupt `json:"interrupts,omitempty"`
}

// aguiInterrupt is a tool call waiting for approval: resume it with
// {"approved": true|false} (README "AG-UI").
type aguiInterrupt struct {
	ID             string          `json:"id"`
	Reason         string          `json:"reason"`
	Message        string          `json:"message,omitempty"`
	ToolCallID     string          `json:"toolCallId,omitempty"`
	ResponseSchema json.RawMessage `json:"responseSchema,omitempty"`
}

// approvalResponseSchema is what an approval interrupt's resume payload
// holds.
var approvalResponseSchema = json.RawMessage(`{"type":"object","properties":{"approved":{"type":"boolean"},"reason":{"type":"string"}},"required":["approved"]}`)

// aguiMapper turns one execution's stored events, in order, into AG-UI
// events. It holds what is open (the run, a text or reasoning message,
// tool calls, steps), so every START it sends gets its END and nothing
// is sent outside a run.
type aguiMapper struct {
	thread string
	run    string
	// nextRun, when set, is the ID of the next run to start: the runId of
	// the RunAgentInput that starts it.
	nextRun   string
	text      string // the open text message's ID
	reasoning string // the open reasoning message's ID
	calls     map[string]bool
	steps     map[string]string // open steps by tool call ID: their names
	// shown is, by message, how many bytes of its text were mapped: a
	// retried model call's text is not sent twice (event.Token.Unseen).
	shown map[string]int
}

func newAGUIMapper(thread string) *aguiMapper {
	return &aguiMapper{thread: thread, calls: map[string]bool{}, steps: map[string]string{}, shown: map[string]int{}}
}

// reasoningID is the reasoning message of a model call.
func reasoningID(exec, task string) string { return "reasoning_" + messageItemID(exec, task)[4:] }

// mapEvent returns the AG-UI events ev stands for.
func (m *aguiMapper) mapEvent(ev entrystore.StreamEvent) []aguiEvent {
	var out []aguiEvent
	emit := func(e aguiEvent) { out = append(out, e) }
	ts := ev.CreatedAt.UnixMilli()
	if ev.Event == event.NameStreamError {
		return []aguiEvent{{Type: "CUSTOM", Name: "agentree.stream_error", Value: ev.Data}}
	}
	if m.run == "" && !event.Terminal(ev.Event) && ev.Event != event.NameCheckpoint {
		m.run = fmt.Sprintf("%s-%d", m.thread, ev.ID)
		if m.nextRun != "" {
			m.run, m.nextRun = m.nextRun, ""
		}
		emit(aguiEvent{Type: "RUN_STARTED", ThreadID: m.thread, RunID: m.run, Timestamp: ts})
	}
	switch ev.Event {
	case event.NameToken:
		var tok event.Token
		if json.Unmarshal(ev.Data, &tok) != nil {
			break
		}
		id := messageItemID(tok.AgentExecutionID, tok.TaskExecutionID)
		// A retried call streams its text again: send only what the
		// client has not had.
		text := tok.Unseen(m.shown[id])
		if text == "" {
			break
		}
		m.shown[id] += len(text)
		if m.text != id {
			m.closeMessages(emit)
			m.text = id
			emit(aguiEvent{Type: "TEXT_MESSAGE_START", MessageID: id, Role: "assistant"})
		}
		emit(aguiEvent{Type: "TEXT_MESSAGE_CONTENT", MessageID: id, Delta: text})
	case event.NameData:
		var d event.Data
		if json.Unmarshal(ev.Data, &d) == nil {
			m.mapData(d, emit)
		}
	case event.NameTaskStarted:
		var ts event.TaskStarted
		if json.Unmarshal(ev.Data, &ts) != nil {
			break
		}
		// A call started again (an attempt failed, or its worker stopped)
		// is the step already open.
		if _, open := m.steps[ts.TaskExecutionID]; !open {
			m.closeMessages(emit)
			m.steps[ts.TaskExecutionID] = ts.Kind
			emit(aguiEvent{Type: "STEP_STARTED", StepName: ts.Kind})
		}
	case event.NameTaskCompleted, event.NameTaskFailed:
		var tc event.TaskCompleted
		if json.Unmarshal(ev.Data, &tc) == nil {
			if name, ok := m.steps[tc.TaskExecutionID]; ok {
				delete(m.steps, tc.TaskExecutionID)
				emit(aguiEvent{Type: "STEP_FINISHED", StepName: name})
			}
		}
	case event.NameWaiting:
		var w event.Waiting
		_ = json.Unmarshal(ev.Data, &w)
		outcome := &aguiOutcome{Type: "success"}
		for _, c := range w.PendingToolCalls {
			outcome.Type = "interrupt"
			outcome.Interrupts = append(outcome.Interrupts, aguiInterrupt{
				ID: c.ToolCallID, Reason: "tool_call", ToolCallID: c.ToolCallID, ResponseSchema: approvalResponseSchema,
				Message: fmt.Sprintf("Approve the call of %s with %s?", c.ToolName, c.Arguments),
			})
		}
		m.endRun(emit, aguiEvent{Type: "RUN_FINISHED", Outcome: outcome, Timestamp: ts})
	case event.NameCompleted:
		m.endRun(emit, aguiEvent{Type: "RUN_FINISHED", Outcome: &aguiOutcome{Type: "success"}, Timestamp: ts})
	case event.NameFailed:
		var f event.Failed
		_ = json.Unmarshal(ev.Data, &f)
		msg := "the execution failed"
		if f.Error != "" {
			msg += ": " + f.Error
		}
		m.endRun(emit, aguiEvent{Type: "RUN_ERROR", Message: msg, Code: "failed", Timestamp: ts})
	case event.NameCancelled:
		m.endRun(emit, aguiEvent{Type: "RUN_ERROR", Message: "the execution was cancelled", Code: "cancelled", Timestamp: ts})
	case event.NamePaused:
		m.endRun(emit, aguiEvent{Type: "RUN_ERROR", Message: "the execution spent its step budget; resume it with POST …/resume", Code: "paused", Timestamp: ts})
	}
	return out
}

// mapData maps a data event: reasoning, tool-call deltas and results,
// and what AG-UI has no event for (terminal output, an agent's own
// values) as CUSTOM events.
func (m *aguiMapper) mapData(d event.Data, emit func(aguiEvent)) {
	p := d.Data
	switch p.Type {
	case event.TypeThinkingDelta:
		if p.Text == "" {
			return
		}
		id := reasoningID(d.AgentExecutionID, d.TaskExecutionID)
		if m.reasoning != id {
			m.closeMessages(emit)
			m.reasoning = id
			emit(aguiEvent{Type: "REASONING_START", MessageID: id})
			emit(aguiEvent{Type: "REASONING_MESSAGE_START", MessageID: id, Role: "reasoning"})
		}
		emit(aguiEvent{Type: "REASONING_MESSAGE_CONTENT", MessageID: id, Delta: p.Text})
	case event.TypeToolCallStart, event.TypeToolCallDelta, event.TypeToolCallEnd:
		if p.ToolCall == nil {
			return
		}
		id := p.ToolCall.ID
		if !m.calls[id] {
			m.closeMessages(emit)
			m.calls[id] = true
			emit(aguiEvent{Type: "TOOL_CALL_START", ToolCallID: id, ToolCallName: p.ToolCall.Name,
				ParentMessageID: messageItemID(d.AgentExecutionID, d.TaskExecutionID)})
		}
		switch {
		case p.Type == event.TypeToolCallDelta && p.Delta != "":
			emit(aguiEvent{Type: "TOOL_CALL_ARGS", ToolCallID: id, Delta: p.Delta})
		case p.Type == event.TypeToolCallEnd:
			delete(m.calls, id)
			emit(aguiEvent{Type: "TOOL_CALL_END", ToolCallID: id})
		}
	case event.TypeToolResult:
		if p.ToolCall == nil || p.Result == nil {
			return
		}
		content := p.Result.Preview
		emit(aguiEvent{Type: "TOOL_CALL_RESULT", MessageID: "result_" + p.ToolCall.ID, ToolCallID: p.ToolCall.ID,
			Content: &content, Role: "tool"})
	default:
		raw, _ := json.Marshal(p)
		emit(aguiEvent{Type: "CUSTOM", Name: "agentree." + p.Type, Value: raw})
	}
}

// closeMessages ends the open text and reasoning messages and tool calls.
func (m *aguiMapper) closeMessages(emit func(aguiEvent)) {
	if m.text != "" {
		emit(aguiEvent{Type: "TEXT_MESSAGE_END", MessageID: m.text})
		m.text = ""
	}
	if m.reasoning != "" {
		emit(aguiEvent{Type: "REASONING_MESSAGE_END", MessageID: m.reasoning})
		emit(aguiEvent{Type: "REASONING_END", MessageID: m.reasoning})
		m.reasoning = ""
	}
	for id := range m.calls {
		emit(aguiEvent{Type: "TOOL_CALL_END", ToolCallID: id})
	}
	clear(m.calls)
}

// endRun closes everything open and sends end, the run's last event.
func (m *aguiMapper) endRun(emit func(aguiEvent), end aguiEvent) {
	if m.run == "" {
		return
	}
	m.closeMessages(emit)
	for id, name := range m.steps {
		emit(aguiEvent{Type: "STEP_FINISHED", StepName: name})
		delete(m.steps, id)
	}
	if end.Type == "RUN_FINISHED" {
		end.ThreadID, end.RunID = m.thread, m.run
	}
	emit(end)
	m.run = ""
}
