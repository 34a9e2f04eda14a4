package adapter_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/worker"

	"github.com/agentree/agentree/adapter"
	aclient "github.com/agentree/agentree/adapter/client"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/providertest"
	"github.com/agentree/agentree/agentsdk/tools/demo"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/gitbuild"
	"github.com/agentree/agentree/internal/pgtest"
	"github.com/agentree/agentree/internal/temporaltest"
	"github.com/agentree/agentree/internal/workerconfig"
	"github.com/agentree/agentree/migrations"
)

// preRefactorCommit is the last build before the segment engine's
// refactor: its executions, waiting in runs it started, must finish on
// every later build. It is an ancestor of main for good, so a clone of
// the repository always has it.
const preRefactorCommit = "efe88e3687f74cad4d91975461db7904ff1205eb"

// TestUpgradeFinishesOldExecutions plays a deploy. The worker binary of
// preRefactorCommit, built from git, migrates a fresh schema with its own
// migrations; this build's migrations follow while it runs, as `agentree
// migrate` or a new worker starting up applies them. The old worker then
// runs three executions, started through this build's client: a
// multi-turn one, left waiting for input in a run after a continue-as-new; a one-shot one whose tool call is
// in flight (the demo tools slowed to an hour); one whose model call is in
// flight (a fake OpenAI server holds the first request open). The old
// worker is killed with SIGKILL and this build's worker takes the task
// queue over: it must replay the old runs and finish the two one-shot
// executions COMPLETED, and answer the waiting one's next message (a
// multi-turn react execution never completes; it is cancelled at the end),
// with no entry written twice and every tool call's record completed.
func TestUpgradeFinishesOldExecutions(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	oldBin := buildPreRefactorWorker(t, dir)

	model := newHeldModel(t)
	queue := "agentree-upgrade-" + uuid.NewString()[:8]
	cfgPath := filepath.Join(dir, "worker.yaml")
	require.NoError(t, os.WriteFile(cfgPath, []byte(fmt.Sprintf(`taskQueue: %s
namespace: default
endpoints:
  - name: demo
    provider: scripted
    models: ["*"]
  - name: fake
    provider: openai
    baseUrl: %s/v1
    models: [fake-1]
    prices: {fake-1: {input: 1, output: 2}}
toolSets: [demo]
agents:
  - kind: react-agent
`, queue, model.url)), 0o644))

	dbURL := pgtest.EmptyURL(t)
	old := startOldWorker(t, oldBin, dir, cfgPath, dbURL)
	// The old worker migrated the schema with its own set and serves the
	// queue once its capabilities are recorded.
	require.Eventually(t, func() bool {
		old.requireRunning(t)
		return oldWorkerServes(t, dbURL, queue)
	}, time.Minute, 20*time.Millisecond, "the old worker never started serving %s", queue)
	require.NoError(t, migrations.ApplyURL(ctx, dbURL), "this build's migrations over the old build's schema")

	// This build's worker runs from the same configuration file; the tool
	// delay was the old worker's only.
	t.Setenv(demo.EnvToolDelay, "")
	cfg, err := workerconfig.Load(cfgPath)
	require.NoError(t, err)
	built, err := cfg.Build()
	require.NoError(t, err)
	h := newHarnessAt(t, dbURL, adapter.Options{Agents: built.Agents, Providers: built.Providers, Tools: built.Tools}, true, nil)
	h.taskQueue, h.ac = queue, aclient.NewClient(h.tc, h.es, queue)

	waiting := h.start(agentsdk.Config{Mode: agentsdk.ModeMultiTurn}, "question 1")
	midTool := h.start(demo.Config(), demo.Prompt)
	midModel := h.start(agentsdk.Config{Models: []agentsdk.ModelRef{{Provider: "openai", ModelID: "fake-1", Endpoint: "fake"}}}, "answer slowly")

	// The waiting execution is answered on the old worker until its run
	// budget makes it continue as new: it waits in the chain's second run.
	questions := []string{"question 1"}
	h.waitAnswered(waiting.ID, len(questions), "the old worker stopped answering before the upgrade")
	for len(h.runs(waiting.ID)) < 2 {
		require.Less(t, len(questions), 20, "the old worker never continued the waiting execution as new")
		questions = append(questions, fmt.Sprintf("question %d", len(questions)+1))
		_, err := h.ac.Signal(ctx, h.org.ID, waiting.ID, agentsdk.SignalUserMessage, []byte(fmt.Sprintf(`{"text":%q}`, questions[len(questions)-1])))
		require.NoError(t, err)
		h.waitAnswered(waiting.ID, len(questions), "the old worker stopped answering before the upgrade")
	}
	t.Logf("the waiting execution continued as new on the old worker after %d questions", len(questions))
	require.Eventually(t, func() bool {
		old.requireRunning(t)
		return h.activityStarted(midTool.ID, adapter.RunToolActivity)
	}, time.Minute, 20*time.Millisecond, "the old worker never started the tool call")
	model.waitHeld(t)
	old.kill(t)
	killed := time.Now()

	w := worker.New(h.tc, queue, worker.Options{})
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)
	questions = append(questions, "after the upgrade")
	_, err = h.ac.Signal(ctx, h.org.ID, waiting.ID, agentsdk.SignalUserMessage, []byte(`{"text":"after the upgrade"}`))
	require.NoError(t, err)

	res := h.waitOnNewBuild(midModel.ID)
	require.Equal(t, "COMPLETED", res.Status)
	require.Equal(t, "Answered after the upgrade.", res.Text)
	require.Equal(t, "user,assistant", roleList(h.path(res.LeafID)))
	require.Equal(t, 2, model.requests(), "the held call, then one on the new worker")
	h.requireNoDuplicateEntries(midModel.ID, res.LeafID)

	res = h.waitOnNewBuild(midTool.ID)
	require.Equal(t, "COMPLETED", res.Status)
	require.NotEmpty(t, res.Text)
	require.Equal(t, "user,assistant,tool_result,assistant,tool_result,assistant,tool_result,assistant", roleList(h.path(res.LeafID)))
	h.requireNoDuplicateEntries(midTool.ID, res.LeafID)
	calls, _, err := h.es.ListToolCalls(ctx, h.org.ID, midTool.ID, entrystore.ToolCallFilter{}, entrystore.Page{})
	require.NoError(t, err)
	var names []string
	for _, c := range calls {
		names = append(names, c.ToolName)
		require.Equal(t, entrystore.ToolCallCompleted, c.Status, "tool call %s", c.ToolCallID)
		require.NotEmpty(t, c.ResultEntryID)
	}
	require.Equal(t, []string{demo.SearchNotesTool, demo.FetchNoteTool, demo.WordCountTool}, names, "one record per call: the interrupted one finished, none repeated")

	msgs := h.waitAnswered(waiting.ID, len(questions), notReplayed)
	for i, q := range questions {
		require.Equal(t, "user: "+q, msgs[2*i], "the questions in order, each once")
		require.True(t, strings.HasPrefix(msgs[2*i+1], "assistant: ") && len(msgs[2*i+1]) > len("assistant: "), "answered: %s", msgs[2*i+1])
	}
	t.Logf("all three executions finished on this build %.1f s after the old worker was killed", time.Since(killed).Seconds())

	_, err = h.ac.Cancel(ctx, h.org.ID, waiting.ID)
	require.NoError(t, err)
	h.waitStatus(waiting.ID, entrystore.StatusCancelled, time.Minute)
	cp, err := h.es.LatestCheckpoint(ctx, h.org.ID, waiting.ID)
	require.NoError(t, err)
	h.requireNoDuplicateEntries(waiting.ID, cp.LeafEntryID)
}

// buildPreRefactorWorker builds cmd/agentree of preRefactorCommit from the
// repository's git history into dir and returns the binary's path
// (internal/gitbuild: -trimpath, so it hits the build cache whatever the
// temporary directory it is extracted to).
func buildPreRefactorWorker(t *testing.T, dir string) string {
	t.Helper()
	start := time.Now()
	wd, err := os.Getwd()
	require.NoError(t, err)
	root, err := gitbuild.Root(t.Context(), wd)
	require.NoError(t, err, "the upgrade test builds the worker of commit %s from git", preRefactorCommit)
	bin, err := gitbuild.Agentree(t.Context(), root, preRefactorCommit, dir)
	require.NoError(t, err, "the build before the engine refactor")
	t.Logf("built the worker of %s in %.1f s", preRefactorCommit[:7], time.Since(start).Seconds())
	return bin
}

// oldWorker is the pre-refactor worker process.
type oldWorker struct {
	cmd    *exec.Cmd
	log    string
	exited chan struct{}
	err    error
}

func startOldWorker(t *testing.T, bin, dir, cfgPath, dbURL string) *oldWorker {
	t.Helper()
	o := &oldWorker{log: filepath.Join(dir, "old-worker.log"), exited: make(chan struct{})}
	logf, err := os.Create(o.log)
	require.NoError(t, err)
	t.Cleanup(func() { _ = logf.Close() })
	o.cmd = exec.Command(bin, "worker", "--config", cfgPath)
	o.cmd.Env = append(os.Environ(), "DATABASE_URL="+dbURL, "TEMPORAL_ADDRESS="+temporaltest.Address(t),
		demo.EnvToolDelay+"=1h", workerconfig.EnvVar+"=")
	o.cmd.Stdout, o.cmd.Stderr = logf, logf
	require.NoError(t, o.cmd.Start())
	go func() { o.err = o.cmd.Wait(); close(o.exited) }()
	t.Cleanup(func() {
		_ = o.cmd.Process.Kill()
		<-o.exited
		if t.Failed() {
			b, _ := os.ReadFile(o.log)
			t.Logf("old worker's output:\n%s", b)
		}
	})
	return o
}

// requireRunning fails the test at once if the old worker has exited.
func (o *oldWorker) requireRunning(t *testing.T) {
	t.Helper()
	select {
	case <-o.exited:
		b, _ := os.ReadFile(o.log)
		t.Fatalf("the old worker exited (%v):\n%s", o.err, b)
	default:
	}
}

func (o *oldWorker) kill(t *testing.T) {
	t.Helper()
	o.requireRunning(t)
	require.NoError(t, o.cmd.Process.Signal(syscall.SIGKILL))
	<-o.exited
}

// oldWorkerServes reports whether a worker has recorded its capabilities
// for queue: it has migrated the schema and polls the queue.
func oldWorkerServes(t *testing.T, dbURL, queue string) bool {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dbURL)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	var n int
	err = conn.QueryRow(context.Background(), "SELECT count(*) FROM worker_capability WHERE task_queue = $1", queue).Scan(&n)
	return err == nil && n > 0
}

// activityStarted reports whether the execution's current run has an
// activity of that type started on a worker.
func (h *harness) activityStarted(id, activityType string) bool {
	h.t.Helper()
	d, err := h.tc.DescribeWorkflowExecution(context.Background(), id, "")
	require.NoError(h.t, err)
	for _, a := range d.PendingActivities {
		if a.GetActivityType().GetName() == activityType && a.State == enumspb.PENDING_ACTIVITY_STATE_STARTED {
			return true
		}
	}
	return false
}

// notReplayed says what an execution the old worker started and this build
// does not finish most likely means.
const notReplayed = "this build did not finish an execution the old worker started: a nondeterminism error " +
	"(or a workflow task failing over and over) in the log means it cannot replay the old build's runs; " +
	"guard the change with workflow.GetVersion"

// waitOnNewBuild waits for the execution's result on this build's worker.
func (h *harness) waitOnNewBuild(id string) adapter.Result {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := h.ac.Wait(ctx, id)
	require.NoError(h.t, err, "execution %s: %s", id, notReplayed)
	return res
}

// waitAnswered waits until the execution waits with n questions answered
// on its latest checkpoint's path, and returns that path's messages as
// "role: text"; why is what a timeout means.
func (h *harness) waitAnswered(id string, n int, why string) []string {
	h.t.Helper()
	var texts []string
	require.Eventually(h.t, func() bool {
		if h.status(id) != entrystore.StatusWaiting {
			return false
		}
		cp, err := h.es.LatestCheckpoint(context.Background(), h.org.ID, id)
		require.NoError(h.t, err)
		texts = texts[:0]
		for _, m := range h.path(cp.LeafEntryID) {
			texts = append(texts, string(m.Role)+": "+m.Text())
		}
		return len(texts) >= 2*n
	}, 2*time.Minute, 20*time.Millisecond, "execution %s never answered question %d: %s", id, n, why)
	require.Len(h.t, texts, 2*n, "execution %s: one answer per question", id)
	return texts
}

// requireNoDuplicateEntries asserts every message entry of the execution
// is on the path to leafID: none was written twice or left off the path.
func (h *harness) requireNoDuplicateEntries(id, leafID string) {
	h.t.Helper()
	entries, _, err := h.es.ListEntries(context.Background(), h.org.ID, id, entrystore.Page{Limit: 500})
	require.NoError(h.t, err)
	var messages int
	for _, e := range entries {
		if e.Type == string(agentsdk.EntryMessage) {
			messages++
		}
	}
	require.Equal(h.t, len(h.path(leafID)), messages, "execution %s: every message entry once, on the path", id)
}

// heldModel is a fake OpenAI server whose first request is held open, with
// no token sent, until the client goes away (the old worker dies); later
// requests are answered.
type heldModel struct {
	url  string
	held chan struct{}

	mu sync.Mutex
	n  int
}

func newHeldModel(t *testing.T) *heldModel {
	m := &heldModel{held: make(chan struct{})}
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model string `json:"model"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		m.mu.Lock()
		m.n++
		first := m.n == 1
		m.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		if first {
			w.(http.Flusher).Flush()
			close(m.held)
			select {
			case <-r.Context().Done():
			case <-stop:
			}
			return
		}
		_, _ = io.WriteString(w, providertest.NewOpenAIStream(req.Model).
			Text("Answered ", "after the upgrade.").Finish("stop").Usage(12, 4, 0).Done())
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(stop) })
	m.url = srv.URL
	return m
}

func (m *heldModel) waitHeld(t *testing.T) {
	t.Helper()
	select {
	case <-m.held:
	case <-time.After(time.Minute):
		t.Fatal("the old worker never called the model")
	}
}

func (m *heldModel) requests() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.n
}
