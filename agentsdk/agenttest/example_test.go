package agenttest_test

import (
	"context"
	"fmt"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/agenttest"
	"github.com/agentree/agentree/agentsdk/scripted"
)

// parrot is a custom agent: it answers each user message with the model
// and waits for the next, until the user says "bye". A segment decides
// from the tree and the pending signals alone, so it can be run again
// after any crash.
type parrot struct{}

func (parrot) Kind() string { return "parrot" }

func (parrot) RunSegment(ctx agentsdk.Context) (agentsdk.Outcome, error) {
	for _, s := range ctx.Signals() {
		var m agentsdk.UserMessage
		if err := ctx.SignalValue(s, &m); err != nil {
			return agentsdk.Outcome{}, err
		}
		// A zero entry appends the message as a user message; its text
		// stays in the store, out of workflow history.
		if _, err := ctx.ConsumeSignal(s, agentsdk.NewEntry{}); err != nil {
			return agentsdk.Outcome{}, err
		}
		if m.Text == "bye" {
			return agentsdk.Complete("said goodbye"), nil
		}
	}
	if _, err := ctx.CallModel(agentsdk.ModelCall{}); err != nil {
		return agentsdk.Outcome{}, err
	}
	return agentsdk.Wait("input", agentsdk.SignalUserMessage), nil
}

// ExampleStart_customAgent runs a custom agent in the in-memory runtime,
// the same engine the Temporal plugin runs: registered with
// adapter.Options.Agents, parrot would be a workflow type.
func ExampleStart_customAgent() {
	x, err := agenttest.Start(agenttest.Options{
		Agent: parrot{},
		Providers: []agentsdk.Provider{scripted.New(scripted.Turns(
			scripted.Turn{Text: "Hello, Ada."},
			scripted.Turn{Text: "Green tea, noted."},
		))},
		Config:     agentsdk.Config{Models: []agentsdk.ModelRef{scripted.Model("")}},
		UserPrompt: "Hi, I'm Ada.",
	})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	for _, next := range []string{"I like green tea.", "bye", ""} {
		if err := x.Run(ctx); err != nil {
			panic(err)
		}
		fmt.Println(x.Status, x.Reason)
		if next != "" {
			_ = x.Signal(agentsdk.SignalUserMessage, agentsdk.UserMessage{Text: next})
		}
	}
	msgs, _ := x.Messages()
	for _, m := range msgs {
		fmt.Printf("%s: %s\n", m.Role, m.Text())
	}
	// Output:
	// WAITING input
	// WAITING input
	// COMPLETED said goodbye
	// user: Hi, I'm Ada.
	// assistant: Hello, Ada.
	// user: I like green tea.
	// assistant: Green tea, noted.
	// user: bye
}
