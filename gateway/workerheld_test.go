package gateway_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/adapter/workerstore"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/temporaltest"
)

// startHoldingWorker runs a worker named name with a worker store under dir:
// one worker.Worker on the shared queue and one on its own queue. It
// returns the store and a stop that ends both, as a worker process
// stopping would.
func (e *env) startHoldingWorker(name, dir string, grace time.Duration, providers []agentsdk.Provider, tools []*agentsdk.Tool) (*workerstore.Store, func()) {
	t := e.t
	pool, err := pgxpool.New(context.Background(), e.dbURL)
	require.NoError(t, err)
	store, err := workerstore.Open(dir, name)
	require.NoError(t, err)
	plugin, err := adapter.NewPlugin(adapter.Options{
		Store: entrystore.New(pool), Agents: []agentsdk.Agent{react.New(react.Options{})}, Providers: providers, Tools: tools,
		WorkerStore: store, WorkerName: name, HolderGrace: grace, ReconcileInterval: 200 * time.Millisecond,
	})
	require.NoError(t, err)
	wc, err := client.Dial(client.Options{HostPort: temporaltest.Address(t), Plugins: []client.Plugin{plugin}, Logger: temporaltest.Logger{}})
	require.NoError(t, err)
	shared := worker.New(wc, e.queue, worker.Options{})
	own := worker.New(wc, adapter.WorkerQueue(e.queue, name), worker.Options{})
	require.NoError(t, shared.Start())
	require.NoError(t, own.Start())
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		own.Stop()
		shared.Stop()
		wc.Close()
		pool.Close()
	}
	t.Cleanup(stop)
	t.Cleanup(func() { store.Close() })
	return store, stop
}

// TestWorkerHeldKeepsEntriesOnTheWorker: an execution in persistenceMode
// local keeps its conversation in its worker's store — not one entry,
// tool call or checkpoint leaf in Postgres — and converses as any other;
// the gateway reads them from the worker; another
// worker cannot take it over, and once its worker is gone past the grace
// period it fails, saying so.
func TestWorkerHeldKeepsEntriesOnTheWorker(t *testing.T) {
	ctx := context.Background()
	model := scripted.New(func(_ int, req agentsdk.ModelRequest) scripted.Turn {
		last := req.Messages[len(req.Messages)-1]
		if last.Role == agentsdk.RoleUser {
			return scripted.Turn{Text: "Echoing.", ToolCalls: echoCall("call_"+strings.Fields(last.Text())[0], last.Text())}
		}
		return scripted.Turn{Text: "Done: " + last.Text()}
	})
	providers, tools := []agentsdk.Provider{model}, []*agentsdk.Tool{echoTool()}
	e := newEnv(t, envOptions{noWorker: true})
	storeA, stopA := e.startHoldingWorker("wa", t.TempDir(), 2*time.Second, providers, tools)

	base := "/api/orgs/" + e.orgA.Slug + "/agent-executions"
	ex := e.ok(e.keyA, http.MethodPost, base, map[string]any{
		"kind": "react-agent", "userPrompt": "first message", "models": scriptedModel, "tools": []string{"echo"},
		"config": map[string]any{"mode": "multi-turn", "persistenceMode": "local"},
	})
	id := ex["id"].(string)
	path := base + "/" + id
	seq := 0.0
	waitTurn := func() map[string]any {
		var got map[string]any
		poll(t, time.Minute, func() bool {
			got = e.ok(e.keyA, http.MethodGet, path, nil)
			require.NotEqual(t, "FAILED", got["status"], "%v", got["errorMessage"])
			return got["status"] == "WAITING" && got["currentCheckpointSeq"].(float64) > seq
		}, "the turn never ended")
		seq = got["currentCheckpointSeq"].(float64)
		return got
	}
	got := waitTurn()
	require.Equal(t, "wa", got["localWorker"])
	e.ok(e.keyA, http.MethodPost, path+"/signal", map[string]any{"signalName": "userMessage", "signalValue": map[string]any{"text": "second message"}})
	waitTurn()

	// The conversation is on the worker, and only there.
	n, err := storeA.Count(ctx, id)
	require.NoError(t, err)
	require.Equal(t, 2*4, n, "two turns of a user message, two answers (each holding its call's record) and a tool result")
	var pgEntries, pgCalls, pgLeaves int
	require.NoError(t, e.es.Pool().QueryRow(ctx, `SELECT count(*) FROM agent_entry WHERE agent_execution_id = $1`, id).Scan(&pgEntries))
	require.NoError(t, e.es.Pool().QueryRow(ctx, `SELECT count(*) FROM agent_tool_call WHERE agent_execution_id = $1`, id).Scan(&pgCalls))
	require.NoError(t, e.es.Pool().QueryRow(ctx, `SELECT count(leaf_entry_id) FROM agent_checkpoint WHERE agent_execution_id = $1`, id).Scan(&pgLeaves))
	require.Zero(t, pgEntries, "no entry row in Postgres")
	require.Zero(t, pgCalls, "no tool-call row in Postgres")
	require.Zero(t, pgLeaves, "no checkpoint in Postgres points at an entry")

	// The gateway reads it from the worker
	// (TestWorkerHeldExecutionIsReadableOverREST has the rest).
	msgs := e.ok(e.keyA, http.MethodGet, path+"/messages", nil)["messages"].([]any)
	require.Len(t, msgs, 2*4)

	// Its worker goes; another comes and cannot take it over. A follow-up
	// is taken by the inbox, and after the grace period the execution
	// fails, saying where its store is.
	stopA()
	storeB, _ := e.startHoldingWorker("wb", t.TempDir(), 2*time.Second, providers, tools)
	e.ok(e.keyA, http.MethodPost, path+"/signal", map[string]any{"signalName": "userMessage", "signalValue": map[string]any{"text": "third message"}})
	var end map[string]any
	poll(t, time.Minute, func() bool {
		end = e.ok(e.keyA, http.MethodGet, path, nil)
		return end["status"] == "FAILED"
	}, "the execution never failed")
	require.Contains(t, end["errorMessage"], "its worker store lives on worker wa, which is unavailable")
	n, err = storeB.Count(ctx, id)
	require.NoError(t, err)
	require.Zero(t, n, "the other worker took nothing over")
	require.NoError(t, e.es.Pool().QueryRow(ctx, `SELECT count(*) FROM agent_entry WHERE agent_execution_id = $1`, id).Scan(&pgEntries))
	require.Zero(t, pgEntries)
	tc, err := client.Dial(client.Options{HostPort: temporaltest.Address(t), Logger: temporaltest.Logger{}})
	require.NoError(t, err)
	defer tc.Close()
	poll(t, 30*time.Second, func() bool {
		desc, err := tc.DescribeWorkflowExecution(ctx, id, "")
		require.NoError(t, err)
		return desc.WorkflowExecutionInfo.GetStatus().String() == "Terminated"
	}, "Temporal shows the same end")
}
