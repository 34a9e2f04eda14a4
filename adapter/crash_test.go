package adapter_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/agentree/agentree/adapter"
	aclient "github.com/agentree/agentree/adapter/client"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/temporaltest"
)

// The crash test re-runs this test binary as a worker process.
const (
	envWorker    = "AGENTREE_TEST_WORKER"
	envDB        = "AGENTREE_TEST_DB"
	envQueue     = "AGENTREE_TEST_QUEUE"
	envCallLog   = "AGENTREE_TEST_CALL_LOG"
	envBlockTool = "AGENTREE_TEST_BLOCK_TOOL"
	envToolMark  = "AGENTREE_TEST_TOOL_MARK"
	// envBlockModel makes the first model call of turn 0, in whichever
	// worker process gets it, write its pid to the mark and hang.
	envBlockModel = "AGENTREE_TEST_BLOCK_MODEL"
	// envAskSlow makes the worker's tool policy ask for the slow tool.
	envAskSlow = "AGENTREE_TEST_ASK_SLOW"
	// envSpawn makes the model a parent that spawns two children, each of
	// which calls the slow tool once.
	envSpawn = "AGENTREE_TEST_SPAWN"
)

func TestMain(m *testing.M) {
	if os.Getenv(envWorker) == "1" {
		if err := runWorkerProcess(); err != nil {
			fmt.Fprintln(os.Stderr, "worker process:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// crashScript: turn 0 calls the slow tool, turn 1 echoes, turn 2 answers.
func crashScript() scripted.Script {
	return scripted.Turns(
		scripted.Turn{ToolCalls: []agentsdk.ToolCall{{ID: "s1", Name: "slow"}}},
		scripted.Turn{ToolCalls: []agentsdk.ToolCall{echoCall("e1", "after crash")}},
		scripted.Turn{Text: "survived"},
	)
}

// runWorkerProcess is a worker whose model logs every call it answers and
// whose slow tool, in the first process, blocks until the process dies.
func runWorkerProcess() error {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv(envDB))
	if err != nil {
		return err
	}
	logf, err := os.OpenFile(os.Getenv(envCallLog), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	model := scripted.New(crashScript())
	if os.Getenv(envBlockModel) == "1" {
		model = scripted.New(func(turn int, _ agentsdk.ModelRequest) scripted.Turn {
			if turn == 0 && claimMark(os.Getenv(envToolMark)) {
				return scripted.Turn{Text: "never sent", TokenDelay: time.Hour} // until SIGKILL
			}
			return scripted.Turn{Text: "resumed"}
		})
	}
	if os.Getenv(envSpawn) == "1" {
		model = scripted.New(spawnScript)
	}
	model.OnCall = func(turn int, _ agentsdk.ModelRequest) {
		fmt.Fprintf(logf, "%d\n", turn)
		_ = logf.Sync()
	}
	slow := agentsdk.NewTool("slow", "Slow.", func(ctx context.Context, _ agentsdk.ToolInvocation, _ struct{}) (string, error) {
		if err := os.WriteFile(os.Getenv(envToolMark), []byte("started"), 0o644); err != nil {
			return "", err
		}
		if err := appendLine(filepath.Join(filepath.Dir(os.Getenv(envCallLog)), "slow.log"), fmt.Sprint(os.Getpid())); err != nil {
			return "", err
		}
		if os.Getenv(envBlockTool) == "1" {
			<-ctx.Done() // until SIGKILL
			return "", ctx.Err()
		}
		return "slow done", nil
	})
	calls := &openSpans{}
	plugin, err := adapter.NewPlugin(adapter.Options{
		TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(calls)),
		Store:          entrystore.New(pool), Agents: []agentsdk.Agent{react.New(react.Options{})},
		Providers: []agentsdk.Provider{model}, Tools: []*agentsdk.Tool{slow, echoTool(), agentsdk.SpawnAgentsTool()},
		ToolHeartbeatTimeout: 2 * time.Second, ReconcileInterval: -1,
		ToolPolicy: map[bool]agentsdk.Policies{true: {"slow": agentsdk.PolicyAsk}}[os.Getenv(envAskSlow) == "1"],
	})
	if err != nil {
		return err
	}
	tc, err := client.Dial(client.Options{HostPort: os.Getenv("TEMPORAL_ADDRESS"), Plugins: []client.Plugin{plugin}, Logger: temporaltest.Logger{}})
	if err != nil {
		return err
	}
	defer tc.Close()
	w := worker.New(tc, os.Getenv(envQueue), worker.Options{})
	if err := w.Run(worker.InterruptCh()); err != nil {
		return err
	}
	// A graceful stop cancels the calls running and returns: the process
	// lives on until they have ended (their spans), as a worker's pool
	// does until their statements have, so their ends are seen.
	return calls.await(30 * time.Second)
}

// openSpans counts the spans started and not yet ended.
type openSpans struct {
	sdktrace.SpanProcessor
	open atomic.Int64
}

func (o *openSpans) OnStart(context.Context, sdktrace.ReadWriteSpan) { o.open.Add(1) }
func (o *openSpans) OnEnd(sdktrace.ReadOnlySpan)                     { o.open.Add(-1) }
func (o *openSpans) Shutdown(context.Context) error                  { return nil }
func (o *openSpans) ForceFlush(context.Context) error                { return nil }

// await waits until every span started has ended, for at most d.
func (o *openSpans) await(d time.Duration) error {
	deadline := time.After(d)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for o.open.Load() > 0 {
		select {
		case <-deadline:
			return fmt.Errorf("%d calls still running %s after the worker stopped", o.open.Load(), d)
		case <-tick.C:
		}
	}
	return nil
}

// appendLine appends a line to the file at path, durably.
func appendLine(path, line string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := fmt.Fprintln(f, line); err != nil {
		return err
	}
	return f.Sync()
}

// lines are the lines of the file at path (none when it is missing).
func lines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	return strings.Fields(string(b))
}

// claimMark creates the mark file holding this process's pid and reports
// whether this call created it (only the first, across processes, does).
func claimMark(path string) bool {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return false
	}
	defer f.Close()
	_, _ = fmt.Fprint(f, os.Getpid())
	return true
}

func startWorkerProcess(t *testing.T, h *harness, dir string, block bool, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	blockVal := "0"
	if block {
		blockVal = "1"
	}
	cmd.Env = append(os.Environ(), env...)
	cmd.Env = append(cmd.Env, envWorker+"=1", envDB+"="+h.dbURL, envQueue+"="+h.taskQueue,
		envCallLog+"="+filepath.Join(dir, "calls.log"), envBlockTool+"="+blockVal,
		envToolMark+"="+filepath.Join(dir, "tool.mark"), "TEMPORAL_ADDRESS="+temporaltest.Address(t))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd
}

// stopDuringTool starts an execution of crashScript on a worker process
// whose slow tool blocks, sends that process sig once the tool runs, and
// lets a second worker process finish the execution: its result, and
// the directory the processes log to.
func stopDuringTool(t *testing.T, sig syscall.Signal, prompt string) (*harness, string, entrystore.Execution, aclient.Result) {
	t.Helper()
	h := newHarness(t, adapter.Options{Providers: []agentsdk.Provider{scripted.New(crashScript())}}, true)
	dir := t.TempDir()
	first := startWorkerProcess(t, h, dir, true)
	ex := h.start(agentsdk.Config{Tools: []string{"slow", "echo"}}, prompt)

	mark := filepath.Join(dir, "tool.mark")
	require.Eventually(t, func() bool { _, err := os.Stat(mark); return err == nil }, time.Minute, 5*time.Millisecond, "the slow tool never started")
	require.NoError(t, first.Process.Signal(sig))
	_, _ = first.Process.Wait()
	require.NoError(t, os.Remove(mark))

	startWorkerProcess(t, h, dir, false)
	return h, dir, ex, h.wait(ex.ID, 2*time.Minute)
}

// TestWorkerCrashResumes kills a worker process with SIGKILL while a tool
// runs; a second worker finishes the execution with no entry lost or
// duplicated, and the model is never asked twice for one step.
func TestWorkerCrashResumes(t *testing.T) {
	h, dir, ex, res := stopDuringTool(t, syscall.SIGKILL, "survive a crash")
	require.Equal(t, "COMPLETED", res.Status)
	require.Equal(t, "survived", res.Text)

	msgs := h.path(res.LeafID)
	require.Equal(t, "user,assistant,tool_result,assistant,tool_result,assistant", roleList(msgs))
	require.Equal(t, "slow done", msgs[2].Text())

	entries, _, err := h.es.ListEntries(context.Background(), h.org.ID, ex.ID, entrystore.Page{Limit: 500})
	require.NoError(t, err)
	var messages int
	for _, e := range entries {
		if e.Type == string(agentsdk.EntryMessage) {
			messages++
		}
	}
	require.Equal(t, len(msgs), messages, "no entry written twice or off the path")

	f, err := os.Open(filepath.Join(dir, "calls.log"))
	require.NoError(t, err)
	defer f.Close()
	var turns []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		turns = append(turns, sc.Text())
	}
	require.Equal(t, "0,1,2", strings.Join(turns, ","), "each step's model call made exactly once across both workers")
}

// TestWorkerStopLeavesAToolCallToRunAgain stops a worker process
// gracefully (SIGTERM, as a deploy does) while its tool call runs: the
// call's context ends with the worker's shutdown, and the call is not
// ended by it. No task.failed is announced and the record is not ended,
// so a client never reads the call ended before another worker starts it
// again; that worker runs it to its result, announced once.
func TestWorkerStopLeavesAToolCallToRunAgain(t *testing.T) {
	h, dir, ex, res := stopDuringTool(t, syscall.SIGTERM, "survive a deploy")
	require.Equal(t, "COMPLETED", res.Status)
	require.Equal(t, "slow done", h.path(res.LeafID)[2].Text())
	require.Len(t, lines(t, filepath.Join(dir, "slow.log")), 2, "the call ran in both workers")

	require.Equal(t, "task.started,task.started,task.completed", taskEvents(t, h, ex.ID, "s1"),
		"the stopped worker's attempt announced no end")
}

// taskEvents are the task.* stream events stored for tool call callID of
// execution execID, in order, comma-separated.
func taskEvents(t *testing.T, h *harness, execID, callID string) string {
	t.Helper()
	evs, err := h.es.StreamEventsAfter(context.Background(), h.org.ID, execID, 0, 1000)
	require.NoError(t, err)
	var seen []string
	for _, e := range evs {
		var d struct {
			TaskExecutionID string `json:"taskExecutionId"`
		}
		require.NoError(t, json.Unmarshal(e.Data, &d))
		if d.TaskExecutionID == callID && strings.HasPrefix(e.Event, "task.") {
			seen = append(seen, e.Event)
		}
	}
	return strings.Join(seen, ",")
}

// TestModelCallResumesAfterWorkerKill SIGKILLs the worker process whose
// model call is in flight (a model that has not sent a token yet and will
// not for an hour); another worker, already running, must take the call
// over — within the model call's heartbeat timeout, as the call heartbeats
// on a timer, not on streamed tokens. The time from the kill to the
// second worker's model call is logged (a figure to report, not asserted).
func TestModelCallResumesAfterWorkerKill(t *testing.T) {
	h := newHarness(t, adapter.Options{Providers: []agentsdk.Provider{scripted.New(crashScript())}}, true)
	dir := t.TempDir()
	procs := map[int]*exec.Cmd{}
	for range 2 {
		cmd := startWorkerProcess(t, h, dir, false, envBlockModel+"=1")
		procs[cmd.Process.Pid] = cmd
	}
	ex := h.start(agentsdk.Config{}, "answer, slowly")

	mark := filepath.Join(dir, "tool.mark")
	var pid int
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(mark)
		if err != nil || len(b) == 0 {
			return false
		}
		_, err = fmt.Sscan(string(b), &pid)
		return err == nil
	}, time.Minute, 5*time.Millisecond, "no model call started")
	victim := procs[pid]
	require.NotNil(t, victim, "the mark names one of the workers")
	require.NoError(t, victim.Process.Signal(syscall.SIGKILL))
	killed := time.Now()
	_, _ = victim.Process.Wait()

	calls := filepath.Join(dir, "calls.log")
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(calls)
		return err == nil && strings.Count(string(b), "\n") >= 2
	}, 30*time.Second, 20*time.Millisecond, "the model call was not resumed on the other worker within 30 s")
	t.Logf("model call resumed on another worker %.1f s after SIGKILL", time.Since(killed).Seconds())

	res := h.wait(ex.ID, time.Minute)
	require.Equal(t, "COMPLETED", res.Status)
	require.Equal(t, "resumed", res.Text)
	require.Equal(t, "user,assistant", roleList(h.path(res.LeafID)), "one answer, from the second worker")
}

// TestApprovalSurvivesWorkerKill SIGKILLs the only worker while the
// execution waits for approval of a call (the worker's policy asks for
// the slow tool); the approval is sent while no worker runs; a new worker
// applies it and runs the tool exactly once.
func TestApprovalSurvivesWorkerKill(t *testing.T) {
	h := newHarness(t, adapter.Options{Providers: []agentsdk.Provider{scripted.New(crashScript())}}, true)
	dir := t.TempDir()
	first := startWorkerProcess(t, h, dir, false, envAskSlow+"=1")
	ex := h.start(agentsdk.Config{Tools: []string{"slow", "echo"}}, "ask before the slow tool")

	h.waitStatus(ex.ID, entrystore.StatusWaiting, time.Minute)
	var rec entrystore.ToolCall
	require.Eventually(t, func() bool {
		var err error
		rec, err = h.es.LatestToolCall(context.Background(), h.org.ID, ex.ID, "s1")
		return err == nil && rec.Status == entrystore.ToolCallAwaitingApproval
	}, time.Minute, 5*time.Millisecond, "the slow call never waited for approval")
	require.Equal(t, "ask", rec.Policy)
	require.NoError(t, first.Process.Signal(syscall.SIGKILL))
	_, _ = first.Process.Wait()
	require.Empty(t, lines(t, filepath.Join(dir, "slow.log")), "the slow tool ran before approval")

	_, err := h.ac.Signal(context.Background(), h.org.ID, ex.ID, agentsdk.SignalToolApproval,
		[]byte(`{"toolCallId":"s1","decision":"approve","decidedBy":"ana"}`))
	require.NoError(t, err, "a decision is accepted while no worker runs")

	startWorkerProcess(t, h, dir, false, envAskSlow+"=1")
	res := h.wait(ex.ID, 2*time.Minute)
	require.Equal(t, "COMPLETED", res.Status)
	require.Equal(t, "survived", res.Text)
	require.Len(t, lines(t, filepath.Join(dir, "slow.log")), 1, "the approved tool ran exactly once")
	rec, err = h.es.LatestToolCall(context.Background(), h.org.ID, ex.ID, "s1")
	require.NoError(t, err)
	require.Equal(t, entrystore.ToolCallCompleted, rec.Status)
	require.Equal(t, "approve", rec.Decision)
	require.Equal(t, "ana", rec.DecidedBy)
	require.NotNil(t, rec.ApprovalRequestedAt)
	require.Equal(t, "user,assistant,tool_result,assistant,tool_result,assistant", roleList(h.path(res.LeafID)))
}

// spawnScript: the parent ("spawn two") spawns children one and two; a
// child calls slow, then answers with its prompt; the parent then ends.
func spawnScript(_ int, req agentsdk.ModelRequest) scripted.Turn {
	prompt := req.Messages[0].Text()
	last := req.Messages[len(req.Messages)-1]
	answered := last.Role == agentsdk.RoleToolResult
	switch {
	case prompt == "spawn two" && !answered:
		return scripted.Turn{ToolCalls: []agentsdk.ToolCall{{ID: "call_spawn", Name: agentsdk.ToolSpawnAgents,
			Arguments: []byte(`{"agents":[{"name":"one","prompt":"child one"},{"name":"two","prompt":"child two"}]}`)}}}
	case prompt == "spawn two":
		return scripted.Turn{Text: "parent done"}
	case !answered:
		return scripted.Turn{ToolCalls: []agentsdk.ToolCall{{ID: "s_" + prompt, Name: "slow"}}}
	}
	return scripted.Turn{Text: "answered " + prompt}
}

// TestSpawnSurvivesWorkerKill SIGKILLs the only worker while the children
// of a spawn_agents call run; a new worker finishes them and the parent,
// and no child was started twice.
func TestSpawnSurvivesWorkerKill(t *testing.T) {
	h := newHarness(t, adapter.Options{Providers: []agentsdk.Provider{scripted.New(spawnScript)}}, true)
	dir := t.TempDir()
	first := startWorkerProcess(t, h, dir, true, envSpawn+"=1")
	ex := h.start(agentsdk.Config{Tools: []string{"slow", agentsdk.ToolSpawnAgents}}, "spawn two")

	mark := filepath.Join(dir, "tool.mark")
	require.Eventually(t, func() bool { _, err := os.Stat(mark); return err == nil }, time.Minute, 5*time.Millisecond, "no child's tool started")
	require.NoError(t, first.Process.Signal(syscall.SIGKILL))
	_, _ = first.Process.Wait()

	startWorkerProcess(t, h, dir, false, envSpawn+"=1")
	res := h.wait(ex.ID, 3*time.Minute)
	require.Equal(t, "COMPLETED", res.Status)
	require.Equal(t, "parent done", res.Text)

	children, _, err := h.es.ListExecutions(context.Background(), h.org.ID, entrystore.ExecutionFilter{ParentID: ex.ID}, entrystore.Page{Limit: 10})
	require.NoError(t, err)
	require.Len(t, children, 2)
	for _, c := range children {
		require.Equal(t, entrystore.StatusCompleted, c.Status)
	}
	var initiated int
	for _, run := range h.runs(ex.ID) {
		for _, e := range h.history(ex.ID, run.RunID).Events {
			if e.GetStartChildWorkflowExecutionInitiatedEventAttributes() != nil {
				initiated++
			}
		}
	}
	require.Equal(t, 2, initiated, "each child started once, across both workers")
	msgs := h.path(res.LeafID)
	result := msgs[len(msgs)-2].Text()
	require.Contains(t, result, "answered child one")
	require.Contains(t, result, "answered child two")
}
