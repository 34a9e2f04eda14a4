package wire

import (
	"time"

	"github.com/agentree/agentree/agentsdk"
)

// SignalName is the one Temporal signal Agentree sends. It carries only an
// agentsdk.Signal (the inbox row's ID and the signal's name).
const SignalName = "agentree.signal"

// SegmentInput is all a segment run carries: references and small state.
type SegmentInput struct {
	ExecutionID string `json:"executionId"`
	OrgID       string `json:"orgId"`
	// Sequence is the checkpoint this segment starts from (0: none yet).
	Sequence int            `json:"sequence"`
	LeafID   string         `json:"leafId"`
	State    agentsdk.State `json:"state"`
	// Signals received and not yet consumed, in arrival order.
	Signals []agentsdk.Signal `json:"signals,omitempty"`
	// Resumed is set on the segment that follows a wait.
	Resumed bool `json:"resumed,omitempty"`
	// Waiting: the run that handed over this input checkpointed and ended
	// as its execution began to wait; this run records Waiting (the same
	// checkpoint, which marks the execution WAITING) and waits for one of
	// WaitFor (any signal when empty) before its segment.
	Waiting *CheckpointInput `json:"waiting,omitempty"`
	WaitFor []string         `json:"waitFor,omitempty"`
	// WakeAt, with Waiting, also ends the wait at that time (a durable
	// timer, agentsdk.WaitUntil); with it an empty WaitFor means the timer
	// alone.
	WakeAt *time.Time `json:"wakeAt,omitempty"`
	// Local: the execution keeps its conversation on the worker that
	// first ran it (persistenceMode local), and its runs go to that
	// worker's queue.
	Local bool `json:"local,omitempty"`
	// ShortKeys: the execution's idempotency keys are
	// {sequence}/{step}, without the execution ID the store keys them
	// under anyway (issue 18: 37 bytes less per entry). An execution
	// started before keeps {execution}/{sequence}/{step} in every run:
	// a replay or a retry of its steps must find what they wrote.
	ShortKeys bool `json:"shortKeys,omitempty"`
}

// CheckpointInput records a checkpoint. It is the input of the checkpoint
// store operation and, in SegmentInput.Waiting, the checkpoint a run hands
// to the next one; its fields have no JSON tags, and histories hold them
// under their Go names.
type CheckpointInput struct {
	OrgID, ExecutionID, LeafID string
	Sequence                   int
	State                      agentsdk.State
	Steps                      int // steps done in this segment
	// Wait, when set, also marks the execution WAITING for WaitReason.
	Wait       bool
	WaitReason string
	// WakeAt, when waiting on a timer, is when it fires.
	WakeAt *time.Time `json:",omitempty"`
	// Approval, when waiting for decisions, names the calls waiting.
	Approval *PendingApproval `json:",omitempty"`
	// ClientCalls, when waiting for client tool outputs, names the client
	// tool calls waiting (their StepNumber unused).
	ClientCalls *PendingApproval `json:",omitempty"`
}

// PendingApproval is what a segment waits on: calls of one assistant
// entry awaiting approval, listed in the agent.waiting event.
type PendingApproval struct {
	AssistantID string
	ToolCallIDs []string
	StepNumber  int
	// Deadline is when the wait ends by itself (config.approvalTimeout);
	// nil: it waits for a person.
	Deadline *time.Time `json:",omitempty"`
}

// Result is an execution's workflow result.
type Result struct {
	ExecutionID string `json:"executionId"`
	Status      string `json:"status"`
	StopReason  string `json:"stopReason,omitempty"`
	Error       string `json:"error,omitempty"`
	LeafID      string `json:"leafId,omitempty"`
	// Text is the final answer of a completed execution.
	Text string `json:"text,omitempty"`
	// Usage is what the run's last segment counted, by model: the whole
	// execution's, for a parent to add to its own.
	Usage agentsdk.UsageTracker `json:"usage,omitempty"`
}

// BranchSummaryWorkflow is the workflow that writes a branch's summary
// (issue 40): one model call, as an activity, on the execution's queue, so
// the call is durable and its usage counted like every other.
const BranchSummaryWorkflow = "agentree.BranchSummary"

// BranchSummaryInput asks for the summary of the path from EntryID to
// AbandonedLeafID (the entries a branch back to EntryID leaves), written
// by Model and appended under EntryID with the idempotency key Key.
type BranchSummaryInput struct {
	OrgID           string            `json:"orgId"`
	ExecutionID     string            `json:"executionId"`
	EntryID         string            `json:"entryId"`
	AbandonedLeafID string            `json:"abandonedLeafId"`
	Model           agentsdk.ModelRef `json:"model"`
	Key             string            `json:"key"`
}

// BranchSummaryResult is the branch_summary entry written.
type BranchSummaryResult struct {
	EntryID string `json:"entryId"`
}
