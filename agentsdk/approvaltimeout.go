package agentsdk

import (
	"fmt"
	"time"
)

// ApprovalTimeout gives a wait for a person's approval a deadline and
// what happens when it passes (seed 003: an approval nobody answers
// should not hold an execution forever, nor approve by silence unless
// configured to).
type ApprovalTimeout struct {
	// Seconds after the first request for approval; 1 to
	// MaxApprovalTimeout's seconds.
	Seconds int `json:"seconds"`
	// Outcome on expiry: TimeoutReject, TimeoutApprove or
	// TimeoutEscalate.
	Outcome string `json:"outcome"`
	// EscalateTo is the role (an API key role) that alone may decide the
	// call once it is escalated; required with TimeoutEscalate only.
	EscalateTo string `json:"escalateTo,omitempty"`
}

// The outcomes of an approval that times out.
const (
	// TimeoutReject rejects the call; the model reads that it timed out.
	TimeoutReject = "reject"
	// TimeoutApprove approves the call: it runs.
	TimeoutApprove = "approve"
	// TimeoutEscalate keeps the call waiting, decidable only by a key
	// with the role EscalateTo.
	TimeoutEscalate = "escalate"
)

// DecidedByTimeout is the decidedBy of a decision the deadline made.
const DecidedByTimeout = "timeout"

// MaxApprovalTimeout is the longest deadline a configuration may set: the
// operator's ceiling, as long as the longest sleep.
const MaxApprovalTimeout = DefaultMaxSleep

// TimeoutReason is the reason a rejection on expiry records, which the
// model reads in the call's tool result.
func TimeoutReason(d time.Duration) string {
	return fmt.Sprintf("nobody decided within %s: the approval timed out", d)
}

// Duration is the timeout as a duration.
func (t *ApprovalTimeout) Duration() time.Duration { return time.Duration(t.Seconds) * time.Second }

// Deadline is when an approval first requested at requested expires.
func (t *ApprovalTimeout) Deadline(requested time.Time) time.Time {
	return requested.Add(t.Duration()).UTC()
}

// Problems lists what is wrong with t, naming fields under field.
func (t *ApprovalTimeout) Problems(field string) []string {
	if t == nil {
		return nil
	}
	var problems []string
	if maxS := int(MaxApprovalTimeout / time.Second); t.Seconds < 1 || t.Seconds > maxS {
		problems = append(problems, fmt.Sprintf("%s.seconds must be a whole number from 1 to %d; got %d", field, maxS, t.Seconds))
	}
	switch t.Outcome {
	case TimeoutReject, TimeoutApprove:
		if t.EscalateTo != "" {
			problems = append(problems, fmt.Sprintf("%s.escalateTo applies to outcome %q only", field, TimeoutEscalate))
		}
	case TimeoutEscalate:
		if t.EscalateTo == "" {
			problems = append(problems, fmt.Sprintf("%s.escalateTo (a role) is required with outcome %q", field, TimeoutEscalate))
		}
	default:
		problems = append(problems, fmt.Sprintf("%s.outcome must be %q, %q or %q; got %q", field, TimeoutReject, TimeoutApprove, TimeoutEscalate, t.Outcome))
	}
	return problems
}

// EscalatedTo is the role that alone may decide a call first asked about
// at requested, at now: EscalateTo once an escalating timeout has passed,
// else "" (any approver may).
func (t *ApprovalTimeout) EscalatedTo(requested, now time.Time) string {
	if t == nil || t.Outcome != TimeoutEscalate || requested.IsZero() || now.Before(t.Deadline(requested)) {
		return ""
	}
	return t.EscalateTo
}
