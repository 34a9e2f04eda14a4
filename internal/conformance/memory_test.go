package conformance_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/agenttest"
	"github.com/agentree/agentree/internal/conformance"
)

// runMemory plays a scenario on the in-memory runtime.
func runMemory(t *testing.T, sc conformance.Scenario) conformance.Record {
	t.Helper()
	primary, backup := sc.Models()
	var x *agenttest.Execution
	hooks := conformance.Hooks{
		BlockStarted: func() { require.NoError(t, x.Cancel()) },
		Steer: func(text string) {
			require.NoError(t, x.Signal(agentsdk.SignalUserMessage, agentsdk.UserMessage{Text: text}))
		},
	}
	var err error
	x, err = agenttest.Start(agenttest.Options{
		Agent: sc.AgentOf(), Providers: []agentsdk.Provider{primary, backup},
		Tools: conformance.Tools(hooks, func() string { return sc.Steer }), Config: sc.ConfigOf(),
		UserPrompt: sc.Prompt, ModelAttempts: sc.ModelAttempts, ExecutionID: uuid.NewString(),
		Budget: budgetOf(sc),
	})
	require.NoError(t, err)
	if sc.StoreErrorOnce {
		var failed atomic.Bool
		x.Store.FailAppend = func(e agentsdk.Entry) error {
			if e.Role == agentsdk.RoleAssistant && failed.CompareAndSwap(false, true) {
				return agenttest.ErrUnavailable
			}
			return nil
		}
	}
	ctx := context.Background()
	require.NoError(t, x.Run(ctx))
	for _, f := range sc.FollowUps {
		require.Equal(t, agenttest.StatusWaiting, x.Status)
		require.NoError(t, x.Signal(f.Name, f.Value))
		require.NoError(t, x.Run(ctx))
	}

	var entries []conformance.Entry
	for _, e := range x.Store.Entries() {
		entries = append(entries, conformance.Entry{ID: e.ID, ParentID: e.ParentID, Type: string(e.Type), Role: string(e.Role),
			TurnID: e.TurnID, Key: e.IdempotencyKey, Content: e.Content, Metadata: e.Metadata})
	}
	var calls []conformance.ToolCall
	for _, c := range x.Store.ToolCalls() {
		calls = append(calls, conformance.ToolCall{MessageID: c.MessageID, ResultEntryID: c.ResultEntryID, ToolCallID: c.ToolCallID,
			ToolName: c.ToolName, Status: string(c.Status), Input: c.Input, Output: c.Output, OutputSHA256: c.OutputSHA256,
			OutputSize: c.OutputSize, Truncated: c.Truncated, StepNumber: c.StepNumber})
	}
	cps := x.Store.Checkpoints()
	var evs []conformance.Event
	for _, e := range x.Store.Events() {
		evs = append(evs, conformance.Event{Name: e.Name, Data: e.Data})
	}
	return conformance.Normalize(x.ExecutionID(), string(x.Status), entries, calls, cps, evs)
}

// budgetOf refuses the model calls past sc.BudgetCalls, as a spent daily
// quota does; nil when the scenario has no budget.
func budgetOf(sc conformance.Scenario) func(context.Context, string) error {
	if sc.BudgetCalls == 0 {
		return nil
	}
	var calls atomic.Int32
	return func(context.Context, string) error {
		if int(calls.Add(1)) > sc.BudgetCalls {
			return &agentsdk.BudgetError{Reason: "the budget is spent"}
		}
		return nil
	}
}
