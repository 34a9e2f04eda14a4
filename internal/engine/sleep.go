package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/event"
	"github.com/agentree/agentree/internal/step"
)

// Sleep (agentsdk.ToolSleep). A sleep call is answered in two segments:
// PlanSleep (a store operation) reads the call and says when it wakes,
// the segment ends WAITING on a durable timer (agentsdk.WaitUntil), and
// the segment after the wake answers the call through AnswerSpawn. The
// wake time lives in the agent's State (and, while a run hands its wait
// to the next, in SegmentInput.WakeAt), so a run continued as new re-arms
// the same timer.

// SleepInput names a sleep call and the workflow's clock when it is read.
type SleepInput struct {
	OrgID, ExecutionID, AssistantID, ToolCallID string
	Now                                         time.Time
}

// SleepPlan is when a sleep call wakes; Problem, when set, is why it
// does not sleep: the call is answered with it as an error.
type SleepPlan struct {
	WakeAt        time.Time
	WakeOnMessage bool   `json:",omitempty"`
	Problem       string `json:",omitempty"`
}

// PlanSleep reads a sleep call and checks it against the worker's longest
// sleep (Ops.MaxSleep) and the call's policy (step.Refusal, as for every
// path that runs a tool).
func (o *Ops) PlanSleep(ctx context.Context, in SleepInput) (SleepPlan, error) {
	call, assistant, err := o.toolCall(ctx, in.OrgID, in.AssistantID, in.ToolCallID)
	if err != nil {
		return SleepPlan{}, err
	}
	policy := step.AnswerMetaOf(assistant).Policy(call.ID)
	refusal, err := step.Refusal(ctx, o.Store, in.OrgID, in.ExecutionID, assistant, call, policy, false)
	if err != nil {
		return SleepPlan{}, fmt.Errorf("engine: sleep: %w", err)
	}
	if refusal != "" {
		return SleepPlan{Problem: strings.TrimPrefix(refusal, "error: ")}, nil
	}
	o.publish(ctx, in.OrgID, in.ExecutionID, event.TaskStarted{AgentExecutionID: in.ExecutionID, TaskExecutionID: call.ID,
		Kind: call.Name, Arguments: call.Arguments})
	var args agentsdk.SleepArgs
	if err := json.Unmarshal(call.Arguments, &args); err != nil {
		return SleepPlan{Problem: fmt.Sprintf("the arguments are not sleep arguments: %v", err)}, nil
	}
	at, err := args.WakeAt(in.Now, o.MaxSleep)
	if err != nil {
		return SleepPlan{Problem: err.Error()}, nil
	}
	return SleepPlan{WakeAt: at, WakeOnMessage: args.WakeOnMessage}, nil
}

// WaitMeta is the metadata of a checkpoint that waits: what for, and
// until when for a timer. The gateway shows it as the execution's
// waitingFor and wakeAt.
func WaitMeta(reason string, wakeAt *time.Time) json.RawMessage {
	b, _ := json.Marshal(struct {
		Reason     string     `json:"reason"`
		WaitingFor string     `json:"waitingFor,omitempty"`
		WakeAt     *time.Time `json:"wakeAt,omitempty"`
	}{"wait", reason, wakeAt})
	return b
}

// Sleep implements agentsdk.Context.
func (c *segment) Sleep(assistantID string, call agentsdk.ToolCallRef) (*agentsdk.ToolResult, *agentsdk.Outcome, error) {
	in := AnswerInput{OrgID: c.in.OrgID, ExecutionID: c.in.ExecutionID, AssistantID: assistantID,
		ToolCallID: call.ID, StepNumber: c.toolStep(0)}
	if sl := c.state.Sleep; sl != nil && sl.ToolCallID == call.ID {
		now := c.port.Now().UTC()
		in.Text = fmt.Sprintf("woke on time at %s (asked to sleep until %s)", now.Format(time.RFC3339), sl.WakeAt.Format(time.RFC3339))
		if now.Before(sl.WakeAt) {
			in.Text = fmt.Sprintf("woke early at %s for a user's message (asked to sleep until %s)", now.Format(time.RFC3339), sl.WakeAt.Format(time.RFC3339))
		}
		res, err := c.answerCall(in)
		if err == nil {
			c.state.Sleep = nil
		}
		return res, nil, err
	}
	var plan SleepPlan
	if err := c.port.Local(OpPlanSleep, SleepInput{OrgID: c.in.OrgID, ExecutionID: c.in.ExecutionID,
		AssistantID: assistantID, ToolCallID: call.ID, Now: c.port.Now()}, &plan); err != nil {
		return nil, nil, err
	}
	if plan.Problem != "" {
		in.Problem = plan.Problem
		res, err := c.answerCall(in)
		return res, nil, err
	}
	c.state.Sleep = &agentsdk.SleepState{ToolCallID: call.ID, WakeAt: plan.WakeAt, WakeOnMessage: plan.WakeOnMessage}
	var wakers []string
	if plan.WakeOnMessage {
		wakers = append(wakers, agentsdk.SignalUserMessage)
	}
	out := agentsdk.WaitUntil(plan.WakeAt, agentsdk.WaitTimer, wakers...)
	return nil, &out, nil
}

// answerCall appends the tool_result of a call the agent answers itself
// under the leaf (AnswerSpawn) and moves the leaf to it.
func (c *segment) answerCall(in AnswerInput) (*agentsdk.ToolResult, error) {
	in.ParentID, in.Key = c.leafID(), c.key()
	var res agentsdk.ToolResult
	if err := c.port.Local(OpAnswerSpawn, in, &res); err != nil {
		return nil, err
	}
	c.leaf = &res.Entry
	return &res, nil
}
