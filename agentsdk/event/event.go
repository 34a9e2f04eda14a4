package event

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"time"
	"unicode/utf8"
)

// Event is one stream event's payload. Name is its SSE event name.
type Event interface {
	Name() string
}

// Event names.
const (
	NameStarted    = "agent.started"
	NameResumed    = "agent.resumed"
	NameWaiting    = "agent.waiting"
	NameCheckpoint = "agent.checkpoint"
	NameCompleted  = "agent.completed"
	NameFailed     = "agent.failed"
	NameCancelled  = "agent.cancelled"
	NamePaused     = "agent.paused"

	NameToken         = "token"
	NameData          = "data"
	NameTaskStarted   = "task.started"
	NameTaskCompleted = "task.completed"
	NameTaskFailed    = "task.failed"

	// NameStreamError is sent by the gateway, never stored: the stream
	// broke and the client should resume from LastEventID.
	NameStreamError = "stream_error"
)

// Started: the execution began running (status RUNNING).
type Started struct {
	AgentExecutionID string `json:"agentExecutionId"`
	Status           string `json:"status"`
}

// Resumed: a signal ended a wait and the execution runs again.
type Resumed struct {
	AgentExecutionID string `json:"agentExecutionId"`
	Status           string `json:"status"`
}

// Waiting: the execution checkpointed and waits for a signal (status
// WAITING); Reason says what for.
type Waiting struct {
	AgentExecutionID string `json:"agentExecutionId"`
	Status           string `json:"status"`
	Reason           string `json:"reason,omitempty"`
	// PendingToolCalls, when Reason is "approval", are the calls waiting
	// for a person's decision.
	PendingToolCalls []PendingToolCall `json:"pendingToolCalls,omitempty"`
	// WakeAt, when Reason is "timer", is when the execution wakes.
	WakeAt *time.Time `json:"wakeAt,omitempty"`
}

// PendingToolCall is a tool call waiting for approval.
type PendingToolCall struct {
	ToolCallID string          `json:"toolCallId"`
	ToolName   string          `json:"toolName"`
	Arguments  json.RawMessage `json:"arguments,omitempty"`
	Risk       string          `json:"risk,omitempty"`
}

// Checkpoint: checkpoint Sequence was recorded.
type Checkpoint struct {
	AgentExecutionID string `json:"agentExecutionId"`
	Sequence         int    `json:"sequence"`
}

// Completed ends the stream of an execution that finished.
type Completed struct {
	AgentExecutionID string `json:"agentExecutionId"`
	Status           string `json:"status"`
	StopReason       string `json:"stopReason,omitempty"`
}

// Failed ends the stream of an execution that failed (Agentree's
// addition to seed 000).
type Failed struct {
	AgentExecutionID string `json:"agentExecutionId"`
	Status           string `json:"status"`
	StopReason       string `json:"stopReason,omitempty"`
	Error            string `json:"error,omitempty"`
}

// Cancelled ends the stream of a cancelled execution (Agentree's
// addition to seed 000).
type Cancelled struct {
	AgentExecutionID string `json:"agentExecutionId"`
	Status           string `json:"status"`
	StopReason       string `json:"stopReason,omitempty"`
}

// Paused ends the stream of an execution that spent its step budget
// (status PAUSED, seed 001); resume it with POST …/resume.
type Paused struct {
	AgentExecutionID string `json:"agentExecutionId"`
	Status           string `json:"status"`
	StopReason       string `json:"stopReason,omitempty"`
	// Steps is the execution's step count, across resumes.
	Steps int `json:"steps"`
}

// Token is answer text as the model streams it. TaskExecutionID names the
// model call; consecutive tokens of one call may arrive joined.
type Token struct {
	AgentExecutionID string `json:"agentExecutionId"`
	TaskExecutionID  string `json:"taskExecutionId,omitempty"`
	Data             string `json:"data"`
	// Offset is how many bytes of text the call streamed before Data in
	// this attempt. A call retried after its worker died streams again
	// from 0 under the same TaskExecutionID: a reader that has shown
	// more than Offset skips what it has (the Responses and AG-UI
	// streams do).
	Offset int `json:"offset,omitempty"`
}

// Unseen is the part of t's text a reader has not shown when it has shown
// the first shown bytes of the call's text: all of it while the call
// streams on, none or only its end when a retried call streams again
// what the reader has. The cut moves forward to a rune boundary.
func (t Token) Unseen(shown int) string {
	if t.Offset >= shown {
		return t.Data
	}
	cut := shown - t.Offset
	if cut >= len(t.Data) {
		return ""
	}
	for cut < len(t.Data) && !utf8.RuneStart(t.Data[cut]) {
		cut++
	}
	return t.Data[cut:]
}

// Data carries a typed payload: model deltas other than text, tool
// results, terminal output and an agent's own StreamData values.
type Data struct {
	AgentExecutionID string  `json:"agentExecutionId"`
	TaskExecutionID  string  `json:"taskExecutionId,omitempty"`
	Data             Payload `json:"data"`
}

// TaskStarted: a tool call began (Agentree's addition; Kind is the tool).
type TaskStarted struct {
	AgentExecutionID string          `json:"agentExecutionId"`
	TaskExecutionID  string          `json:"taskExecutionId"`
	Kind             string          `json:"kind"`
	Arguments        json.RawMessage `json:"arguments,omitempty"`
}

// TaskCompleted: a tool call finished and the model will read its result.
type TaskCompleted struct {
	AgentExecutionID string `json:"agentExecutionId"`
	TaskExecutionID  string `json:"taskExecutionId"`
	Kind             string `json:"kind"`
}

// TaskFailed: a tool call ended in an error — one the model is told of
// (its result has isError), or a cancellation (Agentree's addition).
type TaskFailed struct {
	AgentExecutionID string `json:"agentExecutionId"`
	TaskExecutionID  string `json:"taskExecutionId"`
	Kind             string `json:"kind"`
	Error            string `json:"error,omitempty"`
}

// StreamError tells a client the stream broke (seed 002): reconnect with
// Last-Event-ID set to LastEventID, after RetryAfterMs.
type StreamError struct {
	Code         string `json:"code"`
	Message      string `json:"message"`
	LastEventID  string `json:"lastEventId,omitempty"`
	RetryAfterMs int    `json:"retryAfterMs,omitempty"`
}

func (Started) Name() string       { return NameStarted }
func (Resumed) Name() string       { return NameResumed }
func (Waiting) Name() string       { return NameWaiting }
func (Checkpoint) Name() string    { return NameCheckpoint }
func (Completed) Name() string     { return NameCompleted }
func (Failed) Name() string        { return NameFailed }
func (Cancelled) Name() string     { return NameCancelled }
func (Paused) Name() string        { return NamePaused }
func (Token) Name() string         { return NameToken }
func (Data) Name() string          { return NameData }
func (TaskStarted) Name() string   { return NameTaskStarted }
func (TaskCompleted) Name() string { return NameTaskCompleted }
func (TaskFailed) Name() string    { return NameTaskFailed }
func (StreamError) Name() string   { return NameStreamError }

// Terminal reports whether an event of that name ends its execution's
// stream.
func Terminal(name string) bool {
	return name == NameCompleted || name == NameFailed || name == NameCancelled || name == NamePaused
}

// Lifecycle reports whether an event of that name is an agent lifecycle
// event (sent by the non-consolidated stream too).
func Lifecycle(name string) bool {
	switch name {
	case NameStarted, NameResumed, NameWaiting, NameCheckpoint, NameCompleted, NameFailed, NameCancelled, NamePaused:
		return true
	}
	return false
}

// registry holds one zero value of every event type, keyed by its name:
// adding an event type is its constant, its type, its Name method and its
// line here. New and Names read it; the gateway's gRPC mapping is derived
// from it and the proto (its test fails when the two differ).
var registry = func() map[string]reflect.Type {
	m := map[string]reflect.Type{}
	for _, ev := range []Event{
		Started{}, Resumed{}, Waiting{}, Checkpoint{}, Completed{}, Failed{}, Cancelled{}, Paused{},
		Token{}, Data{}, TaskStarted{}, TaskCompleted{}, TaskFailed{}, StreamError{},
	} {
		m[ev.Name()] = reflect.TypeOf(ev)
	}
	return m
}()

// New returns a zero payload for the event name (a pointer, e.g. *Token),
// or false for a name no type has.
func New(name string) (Event, bool) {
	t, ok := registry[name]
	if !ok {
		return nil, false
	}
	return reflect.New(t).Interface().(Event), true
}

// Names lists every event name, sorted.
func Names() []string {
	return slices.Sorted(maps.Keys(registry))
}

// Decode decodes an event's payload into its type (a pointer, e.g.
// *Token). Fields the type does not know are an error, so a producer and
// its consumers cannot drift apart unnoticed.
func Decode(name string, data []byte) (Event, error) {
	ev, ok := New(name)
	if !ok {
		return nil, fmt.Errorf("event: unknown event %q", name)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(ev); err != nil {
		return nil, fmt.Errorf("event: decode %s: %w", name, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("event: decode %s: trailing data", name)
	}
	return ev, nil
}
