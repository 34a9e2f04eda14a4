package childworkflow_test

import (
	"context"
	"flag"
	"io"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/agentree/agentree/adapter"
	aclient "github.com/agentree/agentree/adapter/client"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/temporaltest"
	"github.com/agentree/agentree/samples/childworkflow"
	"github.com/agentree/agentree/samples/childworkflow/triage"
	"github.com/agentree/agentree/samples/internal/sampleenv"
	"github.com/agentree/agentree/samples/internal/sampletest"
)

var updateHistory = flag.Bool("update-history", false, "record testdata/triage_high.json again from a run on the dev server")

const historyFile = "testdata/triage_high.json"

func register(log io.Writer) func(worker.Registry) {
	return func(r worker.Registry) {
		r.RegisterWorkflowWithOptions(triage.Workflow, workflow.RegisterOptions{Name: childworkflow.TriageWorkflowName})
		r.RegisterActivity(&childworkflow.Activities{Log: log})
	}
}

// newTestEnv is a test environment with the workflow, its activities and
// the adapter's workflows and activities (to be mocked) registered.
func newTestEnv(t *testing.T) *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	s.SetLogger(temporaltest.Logger{})
	env := s.NewTestWorkflowEnvironment()
	require.NoError(t, adapter.Register(env, adapter.Options{Store: &entrystore.Store{}, Agents: []agentsdk.Agent{react.New(react.Options{})}}))
	register(io.Discard)(env)
	return env
}

// TestTriageWorkflowDecides runs the parent workflow alone in the test
// environment: the adapter's activity that writes the child's execution
// row and the child agent itself are mocked, so only the decision is
// under test.
func TestTriageWorkflowDecides(t *testing.T) {
	for _, tc := range []struct {
		name, answer string
		want         childworkflow.TriageOutput
	}{
		{"high pages", "severity: high\nsummary: Checkout is down",
			childworkflow.TriageOutput{Verdict: childworkflow.Verdict{Severity: childworkflow.SeverityHigh, Summary: "Checkout is down"}, Action: "paged on-call: INC-T-1"}},
		{"low queues", "Severity: LOW\nSummary: a typo",
			childworkflow.TriageOutput{Verdict: childworkflow.Verdict{Severity: childworkflow.SeverityLow, Summary: "a typo"}, Action: "queued in support-low"}},
		{"unreadable goes to people", "I think this one is fairly bad.",
			childworkflow.TriageOutput{Verdict: childworkflow.Verdict{Severity: childworkflow.SeverityUnknown, Summary: "I think this one is fairly bad."}, Action: "queued in human-review"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newTestEnv(t)

			ticket := childworkflow.Ticket{ID: "T-1", Customer: "acme", Subject: "s", Body: "b"}
			var asked aclient.StartRequest
			env.OnActivity(adapter.PrepareExecutionActivity, mock.Anything, mock.Anything).Return(
				func(_ context.Context, in adapter.PrepareInput) (aclient.SegmentInput, error) {
					req := in.Request
					asked = req
					return aclient.SegmentInput{ExecutionID: req.ExecutionID, OrgID: req.OrgID, LeafID: "leaf"}, nil
				})
			env.OnWorkflow(react.Kind, mock.Anything, mock.Anything).Return(aclient.Result{Status: "COMPLETED", Text: tc.answer}, nil)

			env.ExecuteWorkflow(childworkflow.TriageWorkflowName, childworkflow.TriageInput{OrgID: "org", Ticket: ticket})
			require.True(t, env.IsWorkflowCompleted())
			require.NoError(t, env.GetWorkflowError())
			var out childworkflow.TriageOutput
			require.NoError(t, env.GetWorkflowResult(&out))
			require.NotEmpty(t, out.AgentExecutionID)
			tc.want.AgentExecutionID = out.AgentExecutionID
			require.Equal(t, tc.want, out)

			require.Equal(t, out.AgentExecutionID, asked.ExecutionID)
			require.Equal(t, react.Kind, asked.Kind)
			require.Equal(t, childworkflow.TriagePrompt(ticket), asked.UserPrompt)
			require.Equal(t, []string{childworkflow.LookupCustomerTool}, asked.Config.Tools)
		})
	}
}

func TestTriageWorkflowChildFails(t *testing.T) {
	env := newTestEnv(t)
	env.OnActivity(adapter.PrepareExecutionActivity, mock.Anything, mock.Anything).Return(aclient.SegmentInput{ExecutionID: "x"}, nil)
	env.OnWorkflow(react.Kind, mock.Anything, mock.Anything).Return(aclient.Result{}, temporal.NewNonRetryableApplicationError("model refused", "AgentFailed", nil))

	env.ExecuteWorkflow(childworkflow.TriageWorkflowName, childworkflow.TriageInput{OrgID: "org", Ticket: childworkflow.ExampleTickets[0]})
	require.True(t, env.IsWorkflowCompleted())
	err := env.GetWorkflowError()
	require.ErrorContains(t, err, "triage agent ")
	require.ErrorContains(t, err, "model refused", "the agent's failure is the cause")
}

func TestParseVerdict(t *testing.T) {
	require.Equal(t, childworkflow.Verdict{Severity: childworkflow.SeverityNormal, Summary: "x"}, childworkflow.ParseVerdict("  severity :  Normal \nsummary: x\n"))
	require.Equal(t, childworkflow.Verdict{Severity: childworkflow.SeverityUnknown, Summary: "y"}, childworkflow.ParseVerdict("severity: critical\nsummary: y"))
}

// syncWriter is a log the worker's activities and the test share.
type syncWriter struct {
	mu sync.Mutex
	b  strings.Builder
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// TestTriageEndToEnd triages the example tickets on a Temporal worker: each
// parent starts a real agent execution as its child.
func TestTriageEndToEnd(t *testing.T) {
	var log syncWriter
	env := sampletest.New(t, adapter.Options{
		Agents:    []agentsdk.Agent{react.New(react.Options{})},
		Providers: []agentsdk.Provider{scripted.New(childworkflow.TriageScript())},
		Tools:     []*agentsdk.Tool{childworkflow.LookupCustomer()},
	}, register(&log))
	ctx := env.Context()
	runs := make([]client.WorkflowRun, len(childworkflow.ExampleTickets))
	for i, ticket := range childworkflow.ExampleTickets {
		var err error
		runs[i], err = env.Temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "triage-" + uuid.NewString(), TaskQueue: env.TaskQueue},
			childworkflow.TriageWorkflowName, childworkflow.TriageInput{OrgID: env.OrgID, Ticket: ticket})
		require.NoError(t, err)
	}
	outs := make([]childworkflow.TriageOutput, len(runs))
	for i, run := range runs {
		require.NoError(t, run.Get(ctx, &outs[i]))
	}

	require.Equal(t, childworkflow.Verdict{Severity: childworkflow.SeverityHigh, Summary: "Checkout API is down for all our stores"}, outs[0].Verdict)
	require.Equal(t, "paged on-call: INC-T-1042", outs[0].Action)
	require.Equal(t, childworkflow.Verdict{Severity: childworkflow.SeverityLow, Summary: "Typo on the invoice page"}, outs[1].Verdict)
	require.Equal(t, "queued in support-low", outs[1].Action)
	require.Contains(t, log.String(), "paging on-call: Checkout API is down for all our stores (INC-T-1042)\n")
	require.Contains(t, log.String(), "queued T-1043 in support-low: Typo on the invoice page\n")

	// Each child is an ordinary execution: its row, its conversation.
	for i, out := range outs {
		ex, err := sampleenv.Get(ctx, env.API, out.AgentExecutionID)
		require.NoError(t, err)
		require.Equal(t, "COMPLETED", ex.GetStatus())
		meta, err := protojson.Marshal(ex.GetMetadata())
		require.NoError(t, err)
		require.JSONEq(t, `{"ticketId":"`+childworkflow.ExampleTickets[i].ID+`","workflowId":"`+runs[i].GetID()+`"}`, string(meta))
		msgs := env.Conversation(ex.GetId())
		require.Equal(t, string(agentsdk.RoleToolResult), msgs[2].GetRole())
		require.Contains(t, sampleenv.Text(msgs[2]), childworkflow.ExampleTickets[i].Customer+": ")
	}

	if *updateHistory {
		it := env.Temporal.GetWorkflowHistory(ctx, runs[0].GetID(), runs[0].GetRunID(), false, 0)
		hist := &historypb.History{}
		for it.HasNext() {
			e, err := it.Next()
			require.NoError(t, err)
			hist.Events = append(hist.Events, e)
		}
		b, err := protojson.MarshalOptions{Indent: "  "}.Marshal(hist)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(historyFile, b, 0o644))
	}
}

// TestReplayCheckedInHistory replays a recorded run of the workflow: a
// change that would break running workflows (a new step, a reordered one)
// fails here. After a deliberate change, record it again with
// `go test ./samples/childworkflow -run EndToEnd -update-history`.
func TestReplayCheckedInHistory(t *testing.T) {
	replayer := worker.NewWorkflowReplayer()
	replayer.RegisterWorkflowWithOptions(triage.Workflow, workflow.RegisterOptions{Name: childworkflow.TriageWorkflowName})
	require.NoError(t, replayer.ReplayWorkflowHistoryFromJSONFile(nil, historyFile))
}
