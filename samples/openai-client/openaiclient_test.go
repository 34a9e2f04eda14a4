package openaiclient_test

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/apiclient"
	"github.com/agentree/agentree/gateway"
	"github.com/agentree/agentree/internal/pgtest"
	"github.com/agentree/agentree/internal/temporaltest"
	"github.com/agentree/agentree/samples/internal/sampleworker"
	openaiclient "github.com/agentree/agentree/samples/openai-client"
)

// A test binary started with envWorker set is the sample's worker alone
// (no gateway), on the queue and database the environment names: the
// process TestStreamSurvivesWorkerKill kills.
const (
	envWorker      = "OPENAICLIENT_TEST_WORKER"
	envWorkerDB    = "OPENAICLIENT_TEST_DATABASE_URL"
	envWorkerQueue = "OPENAICLIENT_TEST_QUEUE"
)

func TestMain(m *testing.M) {
	if os.Getenv(envWorker) != "" {
		if err := runWorker(os.Getenv(envWorkerDB), os.Getenv(envWorkerQueue)); err != nil {
			os.Stderr.WriteString("worker: " + err.Error() + "\n")
			os.Exit(1)
		}
		return
	}
	os.Exit(m.Run())
}

// newWorker is the sample's worker (what worker/main.go runs) on queue.
func newWorker(ctx context.Context, dbURL, queue string) (worker.Worker, func(), error) {
	store, err := adapter.OpenStore(ctx, dbURL)
	if err != nil {
		return nil, nil, err
	}
	plugin, err := adapter.NewPlugin(adapter.Options{Store: store,
		Agents:    []agentsdk.Agent{react.New(react.Options{})},
		Providers: []agentsdk.Provider{scripted.New(openaiclient.Script())},
	})
	if err != nil {
		store.Pool().Close()
		return nil, nil, err
	}
	addr := os.Getenv("TEMPORAL_ADDRESS")
	tc, err := client.Dial(client.Options{HostPort: addr, Plugins: []client.Plugin{plugin}, Logger: temporaltest.Logger{}})
	if err != nil {
		store.Pool().Close()
		return nil, nil, err
	}
	w := worker.New(tc, queue, worker.Options{})
	return w, func() { w.Stop(); tc.Close(); store.Pool().Close() }, nil
}

func runWorker(dbURL, queue string) error {
	w, _, err := newWorker(context.Background(), dbURL, queue)
	if err != nil {
		return err
	}
	return w.Run(worker.InterruptCh())
}

// env is a gateway in the test's process for a queue whose workers the
// test starts.
type env struct {
	dbURL, queue string
	gw           *sampleworker.Gateway
	api          *apiclient.Client
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{dbURL: pgtest.URL(t), queue: "openai-client-test-" + uuid.NewString()[:8]}
	t.Setenv("TEMPORAL_ADDRESS", temporaltest.Address(t))
	store, err := adapter.OpenStore(t.Context(), e.dbURL)
	require.NoError(t, err)
	t.Cleanup(store.Pool().Close)
	tc, err := client.Dial(client.Options{HostPort: temporaltest.Address(t), Logger: temporaltest.Logger{}})
	require.NoError(t, err)
	t.Cleanup(tc.Close)
	e.gw, err = sampleworker.Listen(t.Context(), gateway.Options{Store: store, Temporal: tc, TaskQueue: e.queue}, "sample-"+uuid.NewString()[:8], "127.0.0.1:0")
	require.NoError(t, err)
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- e.gw.Serve(ctx) }()
	t.Cleanup(func() {
		stop()
		require.NoError(t, <-served)
	})
	e.api, err = apiclient.New(e.gw.URL, e.gw.Org, e.gw.Key)
	require.NoError(t, err)
	return e
}

// startWorker runs the sample's worker in the test's process.
func (e *env) startWorker(t *testing.T) {
	t.Helper()
	w, stop, err := newWorker(t.Context(), e.dbURL, e.queue)
	require.NoError(t, err)
	require.NoError(t, w.Start())
	t.Cleanup(stop)
}

// waitWorkers polls the gateway's capabilities until n workers serve it.
func (e *env) waitWorkers(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		var caps struct{ Workers []struct{ TaskQueue string } }
		require.NoError(t, e.api.Do(t.Context(), http.MethodGet, "/capabilities", nil, &caps))
		if len(caps.Workers) >= n {
			return
		}
		require.True(t, time.Now().Before(deadline), "no worker recorded its capabilities in time")
		<-tick.C
	}
}

// TestStreamFromAgentree: the sample's OpenAI-SDK program streams the
// scripted answer from Agentree, token by token, and the response is
// there to GET afterwards.
func TestStreamFromAgentree(t *testing.T) {
	e := newEnv(t)
	e.startWorker(t)
	e.waitWorkers(t, 1)
	var out strings.Builder
	res, err := openaiclient.Stream(t.Context(), e.gw.URL+"/v1", e.gw.Key, openaiclient.Question, &out, nil)
	require.NoError(t, err)
	require.Equal(t, openaiclient.Answer, res.Text)
	require.Greater(t, res.Deltas, 10, "the answer streamed token by token")
	require.Equal(t, openaiclient.Answer+"\n", out.String())
	require.True(t, strings.HasPrefix(res.ID, "resp_"), res.ID)
}

// TestStreamSurvivesWorkerKill: the worker process answering the
// program's streamed response is SIGKILLed after the first token; a
// worker started afterwards takes the turn over and the program, which
// knows nothing of it, gets the whole answer in its completed response.
func TestStreamSurvivesWorkerKill(t *testing.T) {
	e := newEnv(t)
	victim := exec.Command(os.Args[0], "-test.run=^$")
	// Slow tokens, so the kill lands mid-answer.
	victim.Env = append(os.Environ(), envWorker+"=1", envWorkerDB+"="+e.dbURL, envWorkerQueue+"="+e.queue,
		scripted.EnvTokenDelay+"=200ms")
	victim.Stdout, victim.Stderr = os.Stderr, os.Stderr
	require.NoError(t, victim.Start())
	t.Cleanup(func() { _ = victim.Process.Kill(); _ = victim.Wait() })
	e.waitWorkers(t, 1)

	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	var out strings.Builder
	killed := false
	res, err := openaiclient.Stream(ctx, e.gw.URL+"/v1", e.gw.Key, openaiclient.Question, &out, func(string) {
		if killed {
			return
		}
		require.NoError(t, victim.Process.Signal(syscall.SIGKILL))
		_ = victim.Wait()
		killed = true
		e.startWorker(t)
	})
	require.NoError(t, err)
	require.True(t, killed, "no token arrived before the kill")
	require.Equal(t, openaiclient.Answer, res.Text, "the completed response holds the whole answer")
	// The deltas are the cut call's first tokens, then the retried call's
	// whole answer: a client that prints deltas shows the start twice,
	// one that keeps the completed response has the answer once.
	before, ok := strings.CutSuffix(out.String(), openaiclient.Answer+"\n")
	require.True(t, ok, "the retried call streamed the whole answer: %q", out.String())
	require.NotEmpty(t, before, "the first worker's tokens arrived before the kill")
	require.True(t, strings.HasPrefix(openaiclient.Answer, before), "before the kill, the start of the answer: %q", before)
}
