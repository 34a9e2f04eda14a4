package engine

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/internal/domain"
)

// Approval deadlines (config.approvalTimeout, seed 003). The wait for a
// decision wakes on a Temporal timer at the deadline (the first request
// time plus the timeout, so asking again does not move it); the expiry
// then writes the configured decision into the inbox as a toolApproval
// signal, decidedBy "timeout", which the agent applies as it would a
// person's (ApplyDecision). A person's decision that came first wins:
// the call is decided, or its pending signal makes the store refuse the
// timeout's.

// ApprovalOutput is when the calls of a request were first asked about:
// the earliest, which the deadline counts from.
type ApprovalOutput struct {
	FirstRequestedAt time.Time `json:",omitempty"`
}

// firstRequested reads the earliest request time of in's calls.
func (o *Ops) firstRequested(ctx context.Context, in ApprovalInput) (ApprovalOutput, error) {
	var out ApprovalOutput
	for _, id := range in.ToolCallIDs {
		rec, err := o.Store.ToolCall(ctx, in.OrgID, in.ExecutionID, in.AssistantID, id)
		if err != nil {
			return out, fmt.Errorf("engine: approval: record of %s: %w", id, err)
		}
		if a := rec.Approval; a != nil && !a.RequestedAt.IsZero() && (out.FirstRequestedAt.IsZero() || a.RequestedAt.Before(out.FirstRequestedAt)) {
			out.FirstRequestedAt = a.RequestedAt.UTC()
		}
	}
	return out, nil
}

// approvalTimeout is the execution's approval timeout when this run
// gives approval waits a deadline (agentsdk.ChangeApprovalDeadline).
func (c *segment) approvalTimeout() *agentsdk.ApprovalTimeout {
	if c.cfg.ApprovalTimeout == nil {
		return nil
	}
	if c.port.Version(agentsdk.ChangeApprovalDeadline, agentsdk.RuntimeChanges[agentsdk.ChangeApprovalDeadline]) == agentsdk.DefaultVersion {
		return nil
	}
	return c.cfg.ApprovalTimeout
}

// withDeadline is outcome with the pending approval's deadline as its
// timer, when it waits for approval and has one.
func (c *segment) withDeadline(outcome agentsdk.Outcome) agentsdk.Outcome {
	if outcome.Kind == agentsdk.OutcomeWait && outcome.Reason == agentsdk.WaitApproval && outcome.WakeAt == nil &&
		c.approval != nil && c.approval.Deadline != nil {
		at := *c.approval.Deadline
		outcome.WakeAt = &at
	}
	return outcome
}

// ExpireInput names calls whose approval wait passed its deadline.
type ExpireInput struct {
	OrgID, ExecutionID, AssistantID string
	ToolCallIDs                     []string
}

// ExpireOutput is the decisions the expiry put in the inbox.
type ExpireOutput struct {
	Signals []agentsdk.Signal `json:",omitempty"`
}

// ExpireApprovals writes the timeout's decision on each call of in still
// undecided into the inbox, under an ID fixed by the call, so a retry
// writes it once. A call decided already, or with a person's decision
// pending in the inbox, is left to that decision.
func (o *Ops) ExpireApprovals(ctx context.Context, in ExpireInput) (ExpireOutput, error) {
	var out ExpireOutput
	ex, err := o.Store.Execution(ctx, in.OrgID, in.ExecutionID)
	if err != nil {
		return out, fmt.Errorf("engine: expire approval: %w", err)
	}
	cfg, err := DecodeConfig(ex.Config)
	if err != nil {
		return out, err
	}
	t := cfg.ApprovalTimeout
	if t == nil || (t.Outcome != agentsdk.TimeoutReject && t.Outcome != agentsdk.TimeoutApprove) {
		// Escalation decides nothing: the call keeps waiting.
		return out, nil
	}
	now := time.Now().UTC()
	for _, id := range in.ToolCallIDs {
		rec, err := o.Store.ToolCall(ctx, in.OrgID, in.ExecutionID, in.AssistantID, id)
		if err != nil {
			return out, fmt.Errorf("engine: expire approval: record of %s: %w", id, err)
		}
		if rec.Status != agentsdk.ToolAwaitingApproval || (rec.Approval != nil && rec.Approval.Decision != "") {
			continue
		}
		d := agentsdk.Decision{ToolCallID: id, Decision: t.Outcome, DecidedBy: agentsdk.DecidedByTimeout, DecidedAt: &now}
		if d.Decision == agentsdk.TimeoutReject {
			d.Reason = agentsdk.TimeoutReason(t.Duration())
		}
		value, _ := json.Marshal(d)
		sigID := ExpiryID(in.ExecutionID, in.AssistantID, id)
		err = o.Store.PutSignal(ctx, in.OrgID, in.ExecutionID, sigID, agentsdk.SignalToolApproval, value)
		if errors.Is(err, domain.ErrConflict) {
			// Written by an earlier attempt (then it is ours to
			// deliver), or refused for a person's pending decision.
			if _, verr := o.Store.SignalValue(ctx, in.OrgID, sigID); verr != nil {
				continue
			}
			err = nil
		}
		if err != nil {
			return out, fmt.Errorf("engine: expire approval of %s: %w", id, err)
		}
		out.Signals = append(out.Signals, agentsdk.Signal{ID: sigID, Name: agentsdk.SignalToolApproval})
	}
	return out, nil
}

// ExpiryID is the inbox ID of the timeout's decision on a call: fixed
// by the call, so the decision is written once.
func ExpiryID(executionID, assistantID, toolCallID string) string {
	sum := sha256.Sum256([]byte("approval-timeout\x00" + executionID + "\x00" + assistantID + "\x00" + toolCallID))
	return uuid.NewSHA1(uuid.Nil, sum[:]).String()
}

// expire applies the deadline of p, which has passed: the decisions it
// writes join the segment's signals.
func (r *runner) expire(p *PendingApproval) (int, error) {
	if p == nil || p.Deadline == nil {
		return 0, nil
	}
	var out ExpireOutput
	in := ExpireInput{OrgID: r.seg.in.OrgID, ExecutionID: r.seg.in.ExecutionID, AssistantID: p.AssistantID, ToolCallIDs: p.ToolCallIDs}
	if err := r.port.Local(OpExpireApprovals, in, &out); err != nil {
		return 0, err
	}
	for _, s := range out.Signals {
		r.seg.addSignal(s)
	}
	return len(out.Signals), nil
}
