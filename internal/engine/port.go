package engine

import (
	"time"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/internal/step"
)

// Port is what a runtime gives the engine: how each kind of durable step
// runs, the clock, the logger, cancellation and signals. Everything else —
// Context, the run loop, outcomes, fallback, keys, statuses, events — is
// the engine's.
type Port interface {
	// Local runs the store operation op (one of Ops' methods, named by an
	// Op constant) durably: a Temporal local activity, a direct call in
	// memory. out points at the operation's output type, or is nil.
	Local(op Op, in any, out any) error
	// CallModel runs one model's attempts. An error that wraps
	// ErrModelExhausted means the model kept failing with retryable model
	// errors: the engine tries the next model. Any other error is final.
	CallModel(in step.ModelInput) (agentsdk.ModelResult, error)
	// RunTool runs one tool call's attempts.
	RunTool(in step.ToolInput) (agentsdk.ToolResult, error)
	// ExecuteTools runs tool calls at once (step.ExecuteTool each) and
	// returns their outcomes in order; the first error, if any.
	ExecuteTools(ins []step.ToolInput) ([]step.ToolOutcome, error)
	// RunChildren starts the children as child executions of the
	// execution parentID (once, whatever the replays) and waits for all of
	// them, or with first for the first to end (the rest are cancelled);
	// outcomes in the children's order.
	RunChildren(orgID, parentID string, children []ChildStart, first bool) ([]ChildOutcome, error)
	// RunActivity runs a registered activity by name.
	RunActivity(name string, input any, output any) error

	Now() time.Time
	Logger() agentsdk.Logger
	// Cancelled reports whether cancellation was requested.
	Cancelled() bool
	// Detach lets later store operations run after cancellation (to
	// record CANCELLED).
	Detach()
	// Received returns the signals delivered since the last call, without
	// blocking.
	Received() []agentsdk.Signal
	// Await blocks until a signal is delivered (returned) or cancellation
	// is requested (false).
	Await() (agentsdk.Signal, bool)
	// AwaitUntil is Await that also ends when the run's clock reaches at
	// (a durable timer: a Temporal timer, no workflow task meanwhile):
	// fired reports that.
	AwaitUntil(at time.Time) (s agentsdk.Signal, fired, ok bool)
	// Room is how many more history events and bytes this run may take
	// before its hard limit.
	Room() (events, bytes int)
	// Version is workflow.GetVersion: DefaultVersion for code recorded
	// before changeID, maxSupported otherwise.
	Version(changeID string, maxSupported int) int
	// RoomForAnother reports whether this run may hold another segment;
	// when not, the engine hands back the next segment's input (continue
	// as new). idle: the execution is about to wait for input, and a run
	// that ends there hands its successor the wait (SegmentInput.WaitFor),
	// so the new run starts while nobody waits on it.
	RoomForAnother(idle bool) bool
}

// Op names a store operation of Ops.
type Op string

// The store operations.
const (
	OpBegin         Op = "Begin"
	OpAppend        Op = "Append"
	OpConsumeSignal Op = "ConsumeSignal"
	OpSignalValue   Op = "SignalValue"
	OpCheckpoint    Op = "Checkpoint"
	OpFinish        Op = "Finish"
	OpPublish       Op = "Publish"
	OpEntry         Op = "Entry"
	OpToolResults   Op = "AppendToolResults"
	// Tool-call approvals.
	OpRequestApproval Op = "RequestApproval"
	OpDecisions       Op = "Decisions"
	OpApplyDecision   Op = "ApplyDecision"
	OpRejectCall      Op = "RejectCall"
	OpExpireApprovals Op = "ExpireApprovals"
	// Client tool calls.
	OpClientResults Op = "ClientResults"
	// Sub-agents.
	OpPlanSpawn   Op = "PlanSpawn"
	OpAnswerSpawn Op = "AnswerSpawn"
	// Workspace snapshots.
	OpRestoreWorkspace Op = "RestoreWorkspace"
	// Sleep (agentsdk.ToolSleep).
	OpPlanSleep Op = "PlanSleep"
)
