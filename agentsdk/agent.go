package agentsdk

import (
	"encoding/json"
	"time"
)

// Agent is a kind of agent. The runtime registers one Temporal workflow per
// kind and calls RunSegment once per segment.
type Agent interface {
	// Kind names the agent; it is the Temporal workflow type.
	Kind() string
	// RunSegment does one step of work from ctx.Leaf() and ctx.State() and
	// says what comes next. It must be deterministic (see the package doc).
	RunSegment(ctx Context) (Outcome, error)
}

// Context is what a segment runs with. Every method that does I/O is a
// durable step: it runs once, its result is recorded, and a replayed
// segment gets the recorded result back.
type Context interface {
	ExecutionID() string
	OrgID() string
	// Sequence is this segment's checkpoint sequence.
	Sequence() int
	// Config is the execution's configuration, frozen when it was created.
	Config() Config
	// Leaf is the current leaf of the conversation tree (nil before the
	// first entry). Appends, model calls and tool calls move it.
	Leaf() *EntryRef
	// State is the agent's small state, saved at each checkpoint.
	State() *State
	// Now is the deterministic current time.
	Now() time.Time
	Logger() Logger

	// Append adds an entry under the leaf and makes it the leaf.
	Append(e NewEntry) (*EntryRef, error)
	// CallModel asks a model to answer the conversation at the leaf; the
	// assistant entry becomes the leaf. It streams tokens as they arrive.
	CallModel(call ModelCall) (*ModelResult, error)
	// RunTool runs one tool call of the assistant entry assistantID; its
	// tool_result entry becomes the leaf.
	RunTool(assistantID string, call ToolCallRef) (*ToolResult, error)
	// RunTools runs tool calls of the assistant entry assistantID at once
	// (at most Config.MaxParallelTools at a time) and appends their
	// tool_result entries in the order of calls; results[i] answers
	// calls[i]. When this run's history has no room for all of them it
	// runs a prefix only: the agent runs the rest in a later segment.
	RunTools(assistantID string, calls []ToolCallRef) ([]*ToolResult, error)
	// Entry returns the reference of an entry of this execution.
	Entry(id string) (*EntryRef, error)
	// Version guards a change of segment code, as Temporal's
	// workflow.GetVersion does: a segment recorded before the change gets
	// DefaultVersion, any other maxSupported.
	Version(changeID string, maxSupported int) int
	// RunActivity runs a registered activity of the agent's own (Options.Activities) by name.
	RunActivity(name string, input any, output any) error

	// Signals are the signals received and not yet consumed, in arrival
	// order.
	Signals() []Signal
	// HasSignal reports whether a signal of that name is pending.
	HasSignal(name string) bool
	// ConsumeSignal appends e as the signal's entry under the leaf and
	// marks the signal consumed, atomically. A zero e means "the signal's
	// value is a UserMessage: append it as a user message", which keeps the
	// message's text out of workflow history.
	ConsumeSignal(s Signal, e NewEntry) (*EntryRef, error)
	// SignalValue loads a pending signal's value from the inbox.
	SignalValue(s Signal, v any) error

	// RequestApproval records calls of the assistant entry assistantID as
	// waiting for a person's decision; the agent then returns
	// Wait(WaitApproval, SignalToolApproval), and agent.waiting lists them.
	RequestApproval(assistantID string, calls []ToolCallRef) error
	// Decisions are the tool-call decisions among the pending signals, in
	// arrival order.
	Decisions() ([]DecisionRef, error)
	// ApplyDecision records a decision on a call of the assistant entry
	// assistantID and consumes its signal with an approval entry (not a
	// message: the model never sees it). With an empty assistantID, or a
	// call the entry does not hold, the decision is recorded as ignored.
	ApplyDecision(assistantID string, d DecisionRef) (*EntryRef, error)
	// RejectCall answers a rejected call with its error tool_result, which
	// tells the model the person's reason; the call never runs.
	RejectCall(assistantID string, call ToolCallRef) (*ToolResult, error)

	// ClientResults answers client tool calls of the assistant entry
	// assistantID (calls, all with Client set) from the pending
	// toolResult signals: each output becomes its call's tool_result,
	// consuming its signal (a result for no call of calls is consumed as
	// ignored). It returns the calls still without an output, recorded as
	// awaiting one: the agent then returns Wait(WaitClientTool,
	// SignalToolResult), and agent.waiting lists them.
	ClientResults(assistantID string, calls []ToolCallRef) ([]ToolCallRef, error)

	// SpawnAgents answers a spawn_agents call of the assistant entry: it
	// starts the sub-agents it asks for as child executions, waits for
	// them (durably: a worker kill or restart resumes the wait, and never
	// starts a child twice) and appends the call's result — their answers
	// — with an agent_result entry per child. Their usage is added to
	// State().Usage.
	SpawnAgents(assistantID string, call ToolCallRef) (*ToolResult, error)

	// Sleep answers a sleep call (ToolSleep) of the assistant entry
	// assistantID in two moves. The first reads its arguments: bad ones
	// get an error tool_result (returned); good ones are saved in
	// State().Sleep and Sleep returns the outcome that ends the segment
	// (WaitUntil, reason WaitTimer). Called again once the execution woke,
	// it appends the call's result — woke on time, or early for a user's
	// message — and returns it.
	Sleep(assistantID string, call ToolCallRef) (*ToolResult, *Outcome, error)

	// StreamData publishes a data event to the execution's live stream.
	StreamData(v any) error
	// Cancelled reports whether cancellation was requested.
	Cancelled() bool
}

// DefaultVersion is what Context.Version returns for code recorded before
// a change.
const DefaultVersion = -1

// Versioned is an Agent that declares the changes its segment code guards
// with Context.Version, each with the highest version it supports. A
// runtime records the declared versions once when a run starts (Temporal:
// in the run's one side effect), and Version answers from that record:
// a declared change costs a run's history nothing, where an undeclared one
// costs a marker and a search-attribute update in every run that reaches
// it. Declare a change in the same release that adds its Version call.
type Versioned interface {
	Agent
	Changes() map[string]int
}

// Logger is the structured logger a segment may use (replay-safe in the
// Temporal runtime).
type Logger interface {
	Debug(msg string, keyvals ...any)
	Info(msg string, keyvals ...any)
	Warn(msg string, keyvals ...any)
	Error(msg string, keyvals ...any)
}

// Signal is a signal received by the execution. Only its ID and name travel
// through Temporal; the value lives in the store's inbox.
type Signal struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// SignalUserMessage is the signal that carries a user's message.
const SignalUserMessage = "userMessage"

// SignalCompact asks an agent to compact its context now (POST …/compact).
const SignalCompact = "compact"

// UserMessage is the value of a userMessage signal.
type UserMessage struct {
	Text string `json:"text"`
}

// ModelCall asks for one model answer.
type ModelCall struct {
	// Models to try in order; empty = the execution's configured models.
	// When a retryable failure outlasts its attempts on one model, the next
	// answers.
	Models []ModelRef `json:"models,omitempty"`
	// TurnID groups the entries of one turn.
	TurnID string `json:"turnId,omitempty"`
}

// ModelResult is what workflow code learns of a model answer.
type ModelResult struct {
	Entry      EntryRef   `json:"entry"`
	LLMCallID  string     `json:"llmCallId,omitempty"`
	Model      ModelRef   `json:"model"`
	StopReason StopReason `json:"stopReason"`
	Usage      Usage      `json:"usage"`
	// FallbackReason says why an earlier model did not answer, if one didn't.
	FallbackReason string `json:"fallbackReason,omitempty"`
}

// ToolResult is what workflow code learns of a tool call.
type ToolResult struct {
	Entry      EntryRef `json:"entry"`
	ToolCallID string   `json:"toolCallId"`
	IsError    bool     `json:"isError"`
	Truncated  bool     `json:"truncated,omitempty"`
	Preview    string   `json:"preview,omitempty"`
}

// Outcome says how a segment ended.
type Outcome struct {
	Kind OutcomeKind `json:"kind"`
	// Reason is why: a stop reason for Complete, the error for Fail, what is
	// awaited for Wait.
	Reason string `json:"reason,omitempty"`
	// WaitFor names the signals that end a Wait (empty = any, or none
	// when WakeAt is set).
	WaitFor []string `json:"waitFor,omitempty"`
	// WakeAt, when set, also ends a Wait at that time: a durable timer
	// (see WaitUntil).
	WakeAt *time.Time `json:"wakeAt,omitempty"`
}

// OutcomeKind is what happens after a segment.
type OutcomeKind string

// The outcomes.
const (
	// OutcomeContinue checkpoints and starts the next segment.
	OutcomeContinue OutcomeKind = "continue"
	// OutcomeWait checkpoints, marks the execution WAITING and starts the
	// next segment when a signal arrives.
	OutcomeWait OutcomeKind = "wait"
	// OutcomeComplete ends the execution COMPLETED; its output is the leaf.
	OutcomeComplete OutcomeKind = "complete"
	// OutcomeFail ends the execution FAILED with Reason.
	OutcomeFail OutcomeKind = "fail"
	// OutcomePause ends the execution PAUSED with Reason as its stop
	// reason: it spent its step budget; a resume continues it.
	OutcomePause OutcomeKind = "pause"
)

// Continue checkpoints and goes on with the next segment.
func Continue() Outcome { return Outcome{Kind: OutcomeContinue} }

// Wait checkpoints and waits for one of the named signals.
func Wait(reason string, signals ...string) Outcome {
	return Outcome{Kind: OutcomeWait, Reason: reason, WaitFor: signals}
}

// Complete ends the execution successfully.
func Complete(reason string) Outcome { return Outcome{Kind: OutcomeComplete, Reason: reason} }

// Fail ends the execution as failed.
func Fail(reason string) Outcome { return Outcome{Kind: OutcomeFail, Reason: reason} }

// Pause ends the execution PAUSED: its step budget is spent.
func Pause(reason string) Outcome { return Outcome{Kind: OutcomePause, Reason: reason} }

// State is an agent's small state, carried from segment to segment and saved
// in every checkpoint. The runtime rejects a state past MaxStateBytes.
type State struct {
	Turn int `json:"turn"`
	// InputTurn is Turn when the last user input was taken: a multi-turn
	// agent's turn budget is per input.
	InputTurn int `json:"inputTurn,omitempty"`
	// Steps is the execution's step count across the runs it resumes
	// (ChangeOneStep says what a step is); the runtime counts it.
	Steps int `json:"steps"`
	// StepBase is Steps when the execution started: the steps of the runs
	// it resumes. Its budget (config.maxSteps) counts from there.
	StepBase int          `json:"stepBase,omitempty"`
	Usage    UsageTracker `json:"usage,omitempty"`
	// Loop detection: the digest of the last tool call and how many times
	// in a row it was made.
	LastToolDigest string `json:"lastToolDigest,omitempty"`
	ToolRepeats    int    `json:"toolRepeats,omitempty"`
	// ToolsOf is the assistant entry whose tool calls are being run over
	// more than one segment, and ToolsDone how many of them have results.
	ToolsOf   string `json:"toolsOf,omitempty"`
	ToolsDone int    `json:"toolsDone,omitempty"`
	// AlwaysAllow are the tools a person approved for the rest of the
	// execution.
	AlwaysAllow []string `json:"alwaysAllow,omitempty"`
	// Sleep is the sleep call in progress (Context.Sleep), until it is
	// answered.
	Sleep *SleepState `json:"sleep,omitempty"`
	// Decided are the decisions (approve, reject) applied to calls of
	// the entry ToolsOf, by tool call ID, until their turn to run.
	Decided map[string]string `json:"decided,omitempty"`
	// Custom is the agent's own state; see GetCustom and SetCustom.
	Custom json.RawMessage `json:"custom,omitempty"`
}

// MaxStateBytes bounds the encoded State.
const MaxStateBytes = 4096

// AddUsage records one model call's usage.
func (s *State) AddUsage(m ModelRef, u Usage) {
	if s.Usage == nil {
		s.Usage = UsageTracker{}
	}
	s.Usage.Add(m, u)
}

// GetCustom decodes the agent's own state into v (left as is when unset).
func (s *State) GetCustom(v any) error {
	if len(s.Custom) == 0 {
		return nil
	}
	return json.Unmarshal(s.Custom, v)
}

// SetCustom stores v as the agent's own state.
func (s *State) SetCustom(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	s.Custom = b
	return nil
}

// ChangeOneStep is the runtime's change that gives "step" its one
// meaning (seed 001's step_number): a step is one model call together
// with the tool calls it asks for. The first prompt is step 0; the n-th
// model call's answer, the tool calls it asks for and their results are
// all step n, so messages and tool calls of one turn share the number;
// an execution's stepCount is the steps it has taken, counted on across
// resumes; config.maxSteps budgets steps per resume and config.maxTurns
// the steps that answer one user input. The runtime counts (State.Steps
// goes up with each model call); an agent reads the version only to stop
// counting itself. Before it (version DefaultVersion), State.Steps and a
// tool call's step number counted tool calls answered.
const ChangeOneStep = "agentree.one-step"

// RuntimeChanges are the changes the runtime guards in every execution,
// at their highest versions: every run records them, and an agent asks
// for them without declaring them (Versioned).
var RuntimeChanges = map[string]int{ChangeOneStep: 1, ChangeApprovalDeadline: 1}

// ChangeApprovalDeadline is the runtime's change that gives approval
// waits config.approvalTimeout's deadline: RequestApproval returns when
// the calls were first asked about, and the wait wakes on a timer then.
const ChangeApprovalDeadline = "agentree.approval-deadline"
