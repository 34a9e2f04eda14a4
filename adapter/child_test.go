package adapter_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/agentree/agentree/adapter"
	aclient "github.com/agentree/agentree/adapter/client"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/entrystore"
)

// TestChildAgent: an ordinary workflow starts an agent as its child and
// uses its answer.
func TestChildAgent(t *testing.T) {
	model := scripted.New(scripted.Turns(
		scripted.Turn{ToolCalls: []agentsdk.ToolCall{echoCall("a", "x")}},
		scripted.Turn{Text: "the child's answer"},
	))
	h := newHarness(t, adapter.Options{Providers: []agentsdk.Provider{model}, Tools: []*agentsdk.Tool{echoTool()}}, true)
	parent := func(ctx workflow.Context, orgID string) (string, error) {
		fut, _, err := adapter.StartChildAgent(ctx, aclient.StartRequest{
			OrgID: orgID, Kind: react.Kind, UserPrompt: "help the parent",
			Config: agentsdk.Config{Models: []agentsdk.ModelRef{scripted.Model("")}, Tools: []string{"echo"}},
		})
		if err != nil {
			return "", err
		}
		var res aclient.Result
		if err := fut.Get(ctx, &res); err != nil {
			return "", err
		}
		return "parent got: " + res.Text, nil
	}
	w := worker.New(h.tc, h.taskQueue, worker.Options{})
	w.RegisterWorkflowWithOptions(parent, workflow.RegisterOptions{Name: "parent"})
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, err := h.tc.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: h.taskQueue}, "parent", h.org.ID)
	require.NoError(t, err)
	var out string
	require.NoError(t, run.Get(ctx, &out))
	require.Equal(t, "parent got: the child's answer", out)

	list, _, err := h.es.ListExecutions(ctx, h.org.ID, entrystore.ExecutionFilter{Kind: react.Kind}, entrystore.Page{})
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, entrystore.StatusCompleted, list[0].Status)
}
