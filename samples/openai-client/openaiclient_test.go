package openaiclient_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/adapter"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/react"
	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/internal/temporaltest"
	"github.com/agentree/agentree/samples/internal/sampletest"
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
		err := sampletest.RunWorker(os.Getenv(envWorkerDB), os.Getenv("TEMPORAL_ADDRESS"), os.Getenv(envWorkerQueue), workerOptions())
		if err != nil {
			fmt.Fprintln(os.Stderr, "worker:", err)
			os.Exit(1)
		}
		return
	}
	os.Exit(m.Run())
}

// workerOptions are what the sample's worker runs (worker/main.go).
func workerOptions() adapter.Options {
	return adapter.Options{
		Agents:    []agentsdk.Agent{react.New(react.Options{})},
		Providers: []agentsdk.Provider{scripted.New(openaiclient.Script())},
	}
}

// waitWorkers polls the gateway's capabilities until n workers serve it.
func waitWorkers(t *testing.T, e *sampletest.Env, n int) {
	t.Helper()
	deadline := time.Now().Add(sampletest.Timeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		var caps struct{ Workers []struct{ TaskQueue string } }
		require.NoError(t, e.API.Do(e.Context(), http.MethodGet, "/capabilities", nil, &caps))
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
	e := sampletest.NewGateway(t)
	e.StartWorker(workerOptions())
	waitWorkers(t, e, 1)
	var out strings.Builder
	res, err := openaiclient.Stream(e.Context(), e.Gateway.URL+"/v1", e.Gateway.Key, openaiclient.Question, &out, nil)
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
	e := sampletest.NewGateway(t)
	victim := exec.Command(os.Args[0], "-test.run=^$")
	// Slow tokens, so the kill lands mid-answer.
	victim.Env = append(os.Environ(), envWorker+"=1", envWorkerDB+"="+e.DatabaseURL, envWorkerQueue+"="+e.TaskQueue,
		"TEMPORAL_ADDRESS="+temporaltest.Address(t), scripted.EnvTokenDelay+"=200ms")
	victim.Stdout, victim.Stderr = os.Stderr, os.Stderr
	require.NoError(t, victim.Start())
	t.Cleanup(func() { _ = victim.Process.Kill(); _ = victim.Wait() })
	waitWorkers(t, e, 1)

	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	var out strings.Builder
	killed := false
	res, err := openaiclient.Stream(ctx, e.Gateway.URL+"/v1", e.Gateway.Key, openaiclient.Question, &out, func(string) {
		if killed {
			return
		}
		require.NoError(t, victim.Process.Signal(syscall.SIGKILL))
		_ = victim.Wait()
		killed = true
		e.StartWorker(workerOptions())
	})
	require.NoError(t, err)
	require.True(t, killed, "no token arrived before the kill")
	require.Equal(t, openaiclient.Answer, res.Text, "the completed response holds the whole answer")
	// The retried call streams its answer again from the start; the
	// gateway sends only what the client has not had, so a client that
	// prints deltas shows the answer once too.
	require.Equal(t, openaiclient.Answer+"\n", out.String(), "the deltas hold the answer once")
}
