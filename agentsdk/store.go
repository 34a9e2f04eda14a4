package agentsdk

import (
	"encoding/json"
	"errors"
	"time"
)

// PrevEntry as a ParentID in AppendEntries means "the entry before this one".
const PrevEntry = "$prev"

// ErrNotFound is a store's answer for a missing row (the runtime's store
// port, and what Context methods return for a missing entry).
var ErrNotFound = errors.New("not found")

// ToolCallStatus is a tool call's state.
type ToolCallStatus string

// The tool call states.
const (
	ToolRunning   ToolCallStatus = "running"
	ToolCompleted ToolCallStatus = "completed"
	ToolError     ToolCallStatus = "error"
	ToolCancelled ToolCallStatus = "cancelled"
	// ToolAwaitingApproval: the call waits for a person's decision.
	ToolAwaitingApproval ToolCallStatus = "awaiting_approval"
	// ToolAwaitingResult: a client tool call waits for the client's
	// output (SignalToolResult).
	ToolAwaitingResult ToolCallStatus = "awaiting_result"
	// ToolRejected: a person rejected the call; it never ran.
	ToolRejected ToolCallStatus = "rejected"
)

// Ended reports whether a call in this state has its outcome: completed,
// or an error result the model reads.
func (s ToolCallStatus) Ended() bool {
	return s == ToolCompleted || s == ToolError || s == ToolRejected
}

// ToolCallRecord is the observability record of one tool call (seed 001):
// what was asked, what came back, how long it took.
type ToolCallRecord struct {
	OrgID         string
	ExecutionID   string
	MessageID     string // the assistant entry that asked
	ResultEntryID string
	ToolCallID    string
	ToolName      string
	Status        ToolCallStatus
	Input         json.RawMessage
	Output        json.RawMessage
	// OutputSHA256 references the full output in the content store when the
	// entry holds a truncated copy.
	OutputSHA256 string
	OutputSize   int64
	Truncated    bool
	DurationMs   int64
	StepNumber   int
	// Policy is the call's tool policy, when known.
	Policy ToolPolicy
	// Approval, for a call whose policy is ask: when it was asked for and
	// what a person decided.
	Approval *Approval `json:",omitempty"`
}

// Approval is the approval part of a tool-call record.
type Approval struct {
	Risk        string     `json:"risk,omitempty"`
	RequestedAt time.Time  `json:"requestedAt"`
	Decision    string     `json:"decision,omitempty"`
	Reason      string     `json:"reason,omitempty"`
	DecidedBy   string     `json:"decidedBy,omitempty"`
	DecidedAt   *time.Time `json:"decidedAt,omitempty"`
	Always      bool       `json:"always,omitempty"`
	// EditedArguments are the arguments the call runs with when the
	// person who approved it edited them; the record's Input stays the
	// model's.
	EditedArguments json.RawMessage `json:"editedArguments,omitempty"`
	// StandingApprovalID is the standing approval (per definition or
	// organization) that approved the call, when one did.
	StandingApprovalID string `json:"standingApprovalId,omitempty"`
}

// Merge is the record a store keeps when r is recorded over old, the
// rules every store follows: an ended call never goes back to running or
// awaiting approval; running replaces awaiting approval (the call was
// approved); a decision, once recorded, stays; other fields keep their
// old value where r leaves them unset.
func (old ToolCallRecord) Merge(r ToolCallRecord) ToolCallRecord {
	out := r
	switch {
	case (r.Status == ToolAwaitingApproval || r.Status == ToolAwaitingResult) && old.Status != "":
		out.Status = old.Status
	case r.Status == ToolRunning && old.Status != "" && old.Status != ToolAwaitingApproval:
		out.Status = old.Status
	}
	if out.ResultEntryID == "" {
		out.ResultEntryID = old.ResultEntryID
	}
	if len(out.Input) == 0 {
		out.Input = old.Input
	}
	if len(out.Output) == 0 {
		out.Output = old.Output
	}
	if out.OutputSHA256 == "" {
		out.OutputSHA256 = old.OutputSHA256
	}
	out.OutputSize = max(out.OutputSize, old.OutputSize)
	out.Truncated = out.Truncated || old.Truncated
	out.DurationMs = max(out.DurationMs, old.DurationMs)
	if old.StepNumber != 0 {
		out.StepNumber = old.StepNumber
	}
	if old.Policy != "" {
		out.Policy = old.Policy
	}
	switch {
	case old.Approval == nil:
	case out.Approval == nil:
		out.Approval = old.Approval
	default:
		a := *old.Approval
		if a.Decision == "" {
			a.Decision, a.Reason, a.DecidedBy, a.DecidedAt, a.Always = out.Approval.Decision, out.Approval.Reason,
				out.Approval.DecidedBy, out.Approval.DecidedAt, out.Approval.Always
			a.EditedArguments, a.StandingApprovalID = out.Approval.EditedArguments, out.Approval.StandingApprovalID
		}
		out.Approval = &a
	}
	return out
}
