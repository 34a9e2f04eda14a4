package adapter_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/adapter/client"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/pgtest"
	"github.com/agentree/agentree/internal/temporaltest"
)

// TestSegmentIsAFunctionOfLeafAndState runs an execution one segment at a
// time in the Temporal test environment: each segment ends by continuing as
// new with the next leaf and state, and the next segment starts from there.
func TestSegmentIsAFunctionOfLeafAndState(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(temporaltest.Logger{})
	es := entrystore.New(pgtest.New(t))
	ctx := context.Background()
	org, err := es.CreateOrg(ctx, "unit-"+uuid.NewString()[:8], "")
	require.NoError(t, err)
	model := scripted.New(scripted.Turns(
		scripted.Turn{ToolCalls: []agentsdk.ToolCall{echoCall("a", "one")}},
		scripted.Turn{Text: "done"},
	))
	opts := adapter.Options{Store: es, Agents: []agentsdk.Agent{react.New(react.Options{})},
		Providers: []agentsdk.Provider{model}, Tools: []*agentsdk.Tool{echoTool()},
		RunEvents: 1} // continue as new at every checkpoint

	// The first user entry and the row, as client.Client.Start writes them.
	ex, err := es.CreateExecution(ctx, entrystore.Execution{OrgID: org.ID, Kind: react.Kind,
		Config: []byte(`{"tools":["echo"],"models":[{"provider":"scripted","modelId":"scripted-1"}]}`)})
	require.NoError(t, err)
	first, _, err := es.AppendEntry(ctx, entrystore.Entry{OrgID: org.ID, ExecutionID: ex.ID, Type: "message", Role: "user",
		Content: []byte(`{"role":"user","content":[{"type":"text","text":"hi"}]}`), IdempotencyKey: "input"})
	require.NoError(t, err)

	in := client.SegmentInput{ExecutionID: ex.ID, OrgID: org.ID, LeafID: first.ID}
	var segments int
	var result client.Result
	for done := false; !done; segments++ {
		env := suite.NewTestWorkflowEnvironment()
		require.NoError(t, adapter.Register(env, opts))
		env.ExecuteWorkflow(react.Kind, in)
		require.True(t, env.IsWorkflowCompleted())
		var can *workflow.ContinueAsNewError
		switch err := env.GetWorkflowError(); {
		case errors.As(err, &can):
			var next client.SegmentInput
			require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(can.Input, &next))
			require.Equal(t, in.Sequence+1, next.Sequence)
			require.NotEqual(t, in.LeafID, next.LeafID, "the leaf moved")
			in = next
		case err == nil:
			require.NoError(t, env.GetWorkflowResult(&result))
			done = true
		default:
			t.Fatalf("segment %d failed: %v", segments, err)
		}
	}
	require.Equal(t, 2, segments)
	require.Equal(t, "COMPLETED", result.Status)
	require.Equal(t, "done", result.Text)
	require.Equal(t, 1, in.State.Turn, "state carried between segments")
	require.Equal(t, 2, model.Calls())

	row, err := es.GetExecution(ctx, org.ID, ex.ID)
	require.NoError(t, err)
	require.Equal(t, entrystore.StatusCompleted, row.Status)
	require.Equal(t, 2, row.CheckpointSeq, "one checkpoint after the tool turn, one with the final answer")
}
