package main

import (
	"context"
	"errors"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agentree/agentree/agentsdk"
)

// The naive pattern's workflow and activity names.
const (
	NaiveWorkflowName  = "bench.NaiveAgent"
	NaiveModelActivity = "bench.NaiveCallModel"
	NaiveToolActivity  = "bench.NaiveRunTool"
)

// NaiveInput is the naive agent's input: the whole initial conversation.
type NaiveInput struct {
	Model    agentsdk.ModelRef
	Tools    []agentsdk.ToolSpec
	Messages []agentsdk.Message
	// MaxCalls bounds the model calls, as the react agent's MaxTurns does.
	MaxCalls int
	// ToolHeartbeat is the tool activity's heartbeat timeout.
	ToolHeartbeat time.Duration
	// LocalModelCalls runs the model calls as local activities, as
	// openai_agents' ModelActivityParameters(use_local_activity=True)
	// does; LocalTools the tool calls.
	LocalModelCalls, LocalTools bool
}

// NaiveResult is the naive agent's result.
type NaiveResult struct {
	Calls int
	Text  string
}

// NaiveModelInput is every model call's input: the whole conversation, as
// the Temporal openai_agents and googleadk integrations pass it.
type NaiveModelInput struct {
	Model    agentsdk.ModelRef
	Tools    []agentsdk.ToolSpec
	Messages []agentsdk.Message
}

// NaiveToolOutput is a tool call's output, carried back into workflow state.
type NaiveToolOutput struct {
	Text    string
	IsError bool
}

// NaiveAgent is the pattern today's Temporal agent integrations use: the
// conversation lives in workflow state, goes whole into every model call
// and every tool output comes back into it, so history grows with the
// square of the number of calls.
func NaiveAgent(ctx workflow.Context, in NaiveInput) (NaiveResult, error) {
	_, answer, calls, err := naiveTurn(ctx, in, in.Messages)
	if err != nil {
		return NaiveResult{}, err
	}
	return NaiveResult{Calls: calls, Text: answer.Text()}, nil
}

// naiveTurn answers the last user message of msgs: model calls, each
// given the whole conversation, and the tool calls each asks for (those
// of one answer at once, as the react agent runs them), until an answer
// asks for none or in.MaxCalls calls were made. It returns the
// conversation with everything appended, the last answer and the calls.
func naiveTurn(ctx workflow.Context, in NaiveInput, msgs []agentsdk.Message) ([]agentsdk.Message, agentsdk.Message, int, error) {
	retry := &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second, MaximumAttempts: 4}
	// A minute per call, as the integrations' samples and pydantic-ai's
	// TemporalAgent set by default: an activity task the server handed to
	// a worker that never ran it (seen once with eager dispatch, the call
	// "started" and no heartbeat) is retried after it, not after ten.
	mctx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute, RetryPolicy: retry})
	tctx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute, HeartbeatTimeout: in.ToolHeartbeat, RetryPolicy: retry,
	})
	// A local activity cannot heartbeat: its workflow task does, while
	// the call runs past most of the task's timeout.
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{StartToCloseTimeout: 10 * time.Minute, RetryPolicy: retry})
	call := func(local bool, name string, arg any) workflow.Future {
		if local {
			return workflow.ExecuteLocalActivity(lctx, name, arg)
		}
		if name == NaiveToolActivity {
			return workflow.ExecuteActivity(tctx, name, arg)
		}
		return workflow.ExecuteActivity(mctx, name, arg)
	}
	var answer agentsdk.Message
	for calls := 1; calls <= in.MaxCalls; calls++ {
		answer = agentsdk.Message{}
		err := call(in.LocalModelCalls, NaiveModelActivity, NaiveModelInput{Model: in.Model, Tools: in.Tools, Messages: msgs}).Get(ctx, &answer)
		if err != nil {
			return msgs, answer, calls, err
		}
		msgs = append(msgs, answer)
		if len(answer.ToolCalls()) == 0 {
			return msgs, answer, calls, nil
		}
		var runs []workflow.Future
		for _, tc := range answer.ToolCalls() {
			runs = append(runs, call(in.LocalTools, NaiveToolActivity, tc))
		}
		for i, tc := range answer.ToolCalls() {
			var out NaiveToolOutput
			if err := runs[i].Get(ctx, &out); err != nil {
				return msgs, answer, calls, err
			}
			msgs = append(msgs, agentsdk.ToolResultMessage(tc, out.Text, out.IsError))
		}
	}
	return msgs, answer, in.MaxCalls, nil
}

// NaiveActivities are the naive pattern's model and tool calls.
type NaiveActivities struct {
	Model agentsdk.Provider
	Tools agentsdk.Tools
}

// CallModel asks the model to answer the conversation it is given.
func (a *NaiveActivities) CallModel(ctx context.Context, in NaiveModelInput) (agentsdk.Message, error) {
	resp, err := a.Model.Stream(ctx, agentsdk.ModelRequest{Model: in.Model, Messages: in.Messages, Tools: in.Tools},
		func(agentsdk.StreamEvent) {})
	return resp.Message, err
}

// RunTool runs one tool call; as in Agentree, a tool's own error is an
// output the model reads.
func (a *NaiveActivities) RunTool(ctx context.Context, call agentsdk.ToolCall) (NaiveToolOutput, error) {
	tool, err := a.Tools.Get(call.Name)
	if err == nil {
		err = tool.Validate(call.Arguments)
	}
	if err != nil {
		return NaiveToolOutput{Text: "error: " + err.Error(), IsError: true}, nil
	}
	out, err := tool.Run(ctx, agentsdk.ToolInvocation{ToolCallID: call.ID, Arguments: call.Arguments, Emit: func(any) {}})
	switch {
	case err == nil:
		return NaiveToolOutput{Text: out}, nil
	case ctx.Err() != nil || errors.Is(err, context.Canceled):
		return NaiveToolOutput{}, err
	default:
		return NaiveToolOutput{Text: "error: " + err.Error(), IsError: true}, nil
	}
}
