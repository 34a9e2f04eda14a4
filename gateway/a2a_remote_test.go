package gateway_test

import (
	"context"
	"net/http"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/temporaltest"
)

// blockingSpecialist is the remote deployment's model: its first call
// says it started and answers only once released (or cancelled), so the
// caller's worker can be stopped or killed, or the caller cancelled, while the
// remote task works.
type blockingSpecialist struct {
	*scripted.Provider
	started, release chan struct{}
	startOnce        sync.Once
	releaseOnce      sync.Once
}

func newBlockingSpecialist() *blockingSpecialist {
	return &blockingSpecialist{started: make(chan struct{}), release: make(chan struct{}),
		Provider: scripted.New(func(_ int, req agentsdk.ModelRequest) scripted.Turn {
			return scripted.Turn{Text: "specialist answer to: " + req.Messages[len(req.Messages)-1].Text()}
		})}
}

func (s *blockingSpecialist) Stream(ctx context.Context, req agentsdk.ModelRequest, onEvent agentsdk.StreamFunc) (agentsdk.ModelResponse, error) {
	s.startOnce.Do(func() { close(s.started) })
	select {
	case <-s.release:
	case <-ctx.Done():
		return agentsdk.ModelResponse{}, ctx.Err()
	}
	return s.Provider.Stream(ctx, req, onEvent)
}

func (s *blockingSpecialist) free() { s.releaseOnce.Do(func() { close(s.release) }) }

// remotePair is two deployments: the remote one serves a definition
// ("specialist", answered by spec) over A2A; the caller's has no worker
// yet (startRemoteCaller with remotes starts one).
func remotePair(t *testing.T) (spec *blockingSpecialist, remote, caller *env, remotes []agentsdk.RemoteAgent) {
	spec = newBlockingSpecialist()
	remote = newEnv(t, envOptions{providers: []agentsdk.Provider{spec}})
	remote.ok(remote.keyA, http.MethodPost, "/api/orgs/"+remote.orgA.Slug+"/agent-definitions", map[string]any{
		"name": "Specialist", "slug": "specialist", "description": "Answers one question.",
		"models": []any{map[string]any{"provider": scripted.Name, "modelId": "m"}},
		"config": map[string]any{"mode": "one-shot"}, "expose": map[string]any{"a2a": true},
	})
	caller = newEnv(t, envOptions{})
	// Registered last, so it runs first: nothing waits on a blocked call.
	t.Cleanup(spec.free)
	remotes = []agentsdk.RemoteAgent{specialistAgent(remote.base+"/a2a/"+remote.orgA.Slug+"/specialist", remote.keyA)}
	return spec, remote, caller, remotes
}

// specialistAgent is the remote specialist as a caller's worker (in this
// process or a worker process) is configured with it.
func specialistAgent(url, token string) agentsdk.RemoteAgent {
	return agentsdk.RemoteAgent{Name: "specialist", Description: "the other deployment's specialist",
		URL: url, Token: token, PollInterval: 50 * time.Millisecond}
}

// remoteHeartbeat is the callers' tool heartbeat timeout: a stopped or
// killed worker's remote call moves to the next worker this soon.
const remoteHeartbeat = 2 * time.Second

// startLead starts a lead execution on caller whose model spawns the
// remote specialist, and waits until the remote task works.
func startLead(t *testing.T, spec *blockingSpecialist, caller *env) string {
	ex := caller.ok(caller.keyA, http.MethodPost, "/api/orgs/"+caller.orgA.Slug+"/agent-executions", map[string]any{
		"kind": react.Kind, "models": []any{map[string]any{"provider": scripted.Name, "modelId": "m"}},
		"tools":      []string{agentsdk.ToolSpawnAgents},
		"userPrompt": `{"agents":[{"name":"s","remote":"specialist","prompt":"What is a checkpoint?"}]}`,
	})
	select {
	case <-spec.started:
	case <-time.After(time.Minute):
		t.Fatal("the remote task never started")
	}
	return ex["id"].(string)
}

// executionIDs are the IDs of the org's executions in e's schema.
func (e *env) executionIDs(org entrystore.Org) []string {
	e.t.Helper()
	rows, err := e.gwPool.Query(context.Background(), `SELECT id::text FROM agent_execution WHERE org_id = $1`, org.ID)
	require.NoError(e.t, err)
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(e.t, err)
	return ids
}

// spawnThenEcho is the caller's model: it spawns the sub-agents its
// prompt gives as spawn_agents' JSON, then answers with their result.
func spawnThenEcho(_ int, req agentsdk.ModelRequest) scripted.Turn {
	last := req.Messages[len(req.Messages)-1]
	if last.Role == agentsdk.RoleToolResult {
		return scripted.Turn{Text: "lead read: " + last.Text()}
	}
	return scripted.Turn{ToolCalls: []agentsdk.ToolCall{{ID: "call_remote", Name: agentsdk.ToolSpawnAgents,
		Arguments: []byte(req.Messages[0].Text())}}}
}

// startRemoteCaller runs a worker on e's queue with spawn_agents and the
// remote agents, and returns it to be stopped by the test.
func (e *env) startRemoteCaller(remotes []agentsdk.RemoteAgent) worker.Worker {
	e.t.Helper()
	plugin, err := adapter.NewPlugin(adapter.Options{
		Store: entrystore.New(newPool(e.t, e.dbURL)), Agents: []agentsdk.Agent{react.New(react.Options{})},
		Providers: []agentsdk.Provider{scripted.New(spawnThenEcho)}, Tools: []*agentsdk.Tool{agentsdk.SpawnAgentsTool()},
		ToolHeartbeatTimeout: remoteHeartbeat,
		RemoteAgents:         remotes,
	})
	require.NoError(e.t, err)
	wc, err := client.Dial(client.Options{HostPort: temporaltest.Address(e.t), Plugins: []client.Plugin{plugin}, Logger: temporaltest.Logger{}})
	require.NoError(e.t, err)
	e.t.Cleanup(wc.Close)
	w := worker.New(wc, e.queue, worker.Options{})
	require.NoError(e.t, w.Start())
	stopped := false
	e.t.Cleanup(func() {
		if !stopped {
			w.Stop()
		}
	})
	return stopOnce{Worker: w, stopped: &stopped}
}

// TestRemoteA2AAgentAsDurableChild: Agentree calls Agentree over A2A. A
// lead's spawn_agents child is a definition another deployment (its own
// schema, organization, task queue, worker and gateway) exposes over A2A,
// reached with the official Go A2A client. The lead's only worker is a
// process of its own, SIGKILLed (it cannot finish, cancel or clean up)
// while the remote task works; a new worker takes the call up and
// re-attaches to the recorded task: the remote deployment ran exactly one
// execution, the one the lead recorded, and the lead's answer holds the
// remote's.
func TestRemoteA2AAgentAsDurableChild(t *testing.T) {
	spec, remote, lead, remotes := remotePair(t)
	victim := execSelf(t, envWorkerProcess+"=1", envWorkerDB+"="+lead.dbURL, envWorkerQueue+"="+lead.queue,
		envWorkerRemoteURL+"="+remotes[0].URL, envWorkerRemoteKey+"="+remotes[0].Token,
		"TEMPORAL_ADDRESS="+temporaltest.Address(t))
	// The gateway starts no execution on a queue no live worker serves.
	poll(t, time.Minute, func() bool { return len(lead.capabilities().Workers) == 1 }, "the worker process never recorded its capabilities")
	id := startLead(t, spec, lead)
	taskID := lead.recordedRemoteTask(id)

	require.NoError(t, victim.Process.Signal(syscall.SIGKILL))
	_, _ = victim.Process.Wait()
	lead.startRemoteCaller(remotes)
	spec.free()

	requireReattached(t, remote, lead, id, taskID)
}

// TestRemoteA2AAgentSurvivesWorkerStop: a worker stopped gracefully
// (its activities' contexts cancelled, unlike a kill) leaves the remote
// task running rather than cancelling it as a cancelled lead would: the
// next worker re-attaches to it and the lead completes with its answer.
func TestRemoteA2AAgentSurvivesWorkerStop(t *testing.T) {
	spec, remote, lead, remotes := remotePair(t)
	first := lead.startRemoteCaller(remotes)
	id := startLead(t, spec, lead)
	taskID := lead.recordedRemoteTask(id)

	first.Stop()
	// The stopped attempt has returned (after any cancel it would send)
	// once the next is scheduled: only then may the remote answer, or a
	// wrongful cancel would lose the race to the answer.
	tc, err := client.Dial(client.Options{HostPort: temporaltest.Address(t), Logger: temporaltest.Logger{}})
	require.NoError(t, err)
	defer tc.Close()
	poll(t, time.Minute, func() bool {
		d, err := tc.DescribeWorkflowExecution(context.Background(), id, "")
		require.NoError(t, err)
		for _, pa := range d.PendingActivities {
			if pa.ActivityType.GetName() == adapter.RemoteAgentActivity && pa.Attempt >= 2 {
				return true
			}
		}
		return false
	}, "the stopped worker's remote call was never retried")
	// A cancel marks the remote execution CANCELLING at once but reaches
	// its model later (the answer below could beat it): the stopped
	// attempt sent none if the execution is still running now.
	var status string
	require.NoError(t, remote.gwPool.QueryRow(context.Background(), `SELECT status FROM agent_execution
		WHERE org_id = $1 AND id = $2`, remote.orgA.ID, taskID).Scan(&status))
	require.Equal(t, string(entrystore.StatusRunning), status, "the stopped worker cancelled the remote task")
	lead.startRemoteCaller(remotes)
	spec.free()

	requireReattached(t, remote, lead, id, taskID)
}

// recordedRemoteTask waits until execution id's remote child has its
// task ID recorded and returns it.
func (e *env) recordedRemoteTask(id string) string {
	e.t.Helper()
	var taskID string
	poll(e.t, time.Minute, func() bool {
		err := e.gwPool.QueryRow(context.Background(), `SELECT coalesce(task_id, '') FROM agent_remote_task
			WHERE org_id = $1 AND agent_execution_id = $2`, e.orgA.ID, id).Scan(&taskID)
		return err == nil && taskID != ""
	}, "the remote task ID was never recorded")
	return taskID
}

// requireReattached: lead's execution id completes with the remote's
// answer and task, and remote ran that one task only.
func requireReattached(t *testing.T, remote, lead *env, id, taskID string) {
	t.Helper()
	done := lead.waitStatus(id, "COMPLETED", 2*time.Minute)
	answer := done["output"].(map[string]any)["text"].(string)
	require.Contains(t, answer, "## s (COMPLETED, remote agent specialist, task "+taskID+")")
	require.Contains(t, answer, "specialist answer to: What is a checkpoint?")
	require.Equal(t, []string{taskID}, remote.executionIDs(remote.orgA),
		"one remote execution, the task the lead recorded, across both workers")
	var rows int
	require.NoError(t, lead.gwPool.QueryRow(context.Background(), `SELECT count(*) FROM agent_remote_task WHERE org_id = $1`, lead.orgA.ID).Scan(&rows))
	require.Equal(t, 1, rows, "one remote task row for the one child")
}

// TestRemoteA2AAgentCancelledWithLead: cancelling a lead whose child
// works on another Agentree cancels the remote execution, through the
// official Go client's tasks/cancel on our A2A server.
func TestRemoteA2AAgentCancelledWithLead(t *testing.T) {
	spec, remote, lead, remotes := remotePair(t)
	lead.startRemoteCaller(remotes)
	id := startLead(t, spec, lead)
	var remoteIDs []string
	poll(t, time.Minute, func() bool {
		remoteIDs = remote.executionIDs(remote.orgA)
		return len(remoteIDs) == 1
	}, "no remote execution")
	lead.ok(lead.keyA, http.MethodDelete, lead.execPath(lead.orgA, id), nil)
	lead.waitStatus(id, "CANCELLED", time.Minute)
	remote.waitStatus(remoteIDs[0], "CANCELLED", time.Minute)
	require.Len(t, remote.executionIDs(remote.orgA), 1)
}
