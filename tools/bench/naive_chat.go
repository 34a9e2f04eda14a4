package main

import (
	"go.temporal.io/sdk/workflow"

	"github.com/agentree/agentree/agentsdk"
)

// NaiveChatWorkflowName is the multi-turn naive agent's workflow name.
const NaiveChatWorkflowName = "bench.NaiveChat"

// NaiveChatInput is the multi-turn naive agent's input: MaxCalls bounds
// each user turn's model calls, Turns the user turns (the first is in
// Messages; each next one comes as a userMessage signal).
type NaiveChatInput struct {
	NaiveInput
	Turns int
}

// NaiveChat is the naive pattern of a chat (the concurrent scenario): one
// workflow answers each user message as NaiveAgent answers its one, then
// waits for a userMessage signal carrying the next message's text. All
// of the conversation stays in its state and goes into every model call.
func NaiveChat(ctx workflow.Context, in NaiveChatInput) (NaiveResult, error) {
	next := workflow.GetSignalChannel(ctx, agentsdk.SignalUserMessage)
	msgs := in.Messages
	var res NaiveResult
	for turn := 1; ; turn++ {
		var answer agentsdk.Message
		var calls int
		var err error
		msgs, answer, calls, err = naiveTurn(ctx, in.NaiveInput, msgs)
		res.Calls += calls
		res.Text = answer.Text()
		if err != nil || turn >= in.Turns {
			return res, err
		}
		var text string
		next.Receive(ctx, &text)
		msgs = append(msgs, agentsdk.TextMessage(agentsdk.RoleUser, text))
	}
}
