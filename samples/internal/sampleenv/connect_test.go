package sampleenv_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/apiclient"
	"github.com/agentree/agentree/samples/internal/sampleenv"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// fakeGateway answers the capabilities request Connect makes, for the
// organization and key it expects only.
func fakeGateway(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/orgs/samples/capabilities" || r.Header.Get("Authorization") != "Bearer k1" {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"code":"not_found","message":"no such thing"}`))
			return
		}
		_, _ = w.Write([]byte(`{}`))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestStarterSaysNoWorkerRuns: with no sample worker running, a starter
// says so within seconds, naming the command that starts the worker, and
// keeps waiting; once the worker publishes its gateway the starter
// connects. With the worker running from the start it says nothing.
func TestStarterSaysNoWorkerRuns(t *testing.T) {
	dir := t.TempDir()
	srv := fakeGateway(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	var out lockedBuffer
	got := make(chan *apiclient.Client, 1)
	go func() {
		c, err := sampleenv.ConnectIn(ctx, dir, "agentree-research", &out)
		if err != nil {
			t.Error(err)
		}
		got <- c
	}()
	require.Eventually(t, func() bool { return out.String() != "" }, 30*time.Second, 50*time.Millisecond)
	require.Contains(t, out.String(), `no worker of task queue "agentree-research" is running`)
	require.Contains(t, out.String(), "go run ./samples/research/worker")
	select {
	case <-got:
		t.Fatal("the starter connected with no worker running")
	default:
	}

	unpublish, err := sampleenv.Publish(dir, "agentree-research", sampleenv.Gateway{URL: srv.URL, Org: "samples", Key: "k1"})
	require.NoError(t, err)
	defer unpublish()
	c := <-got
	require.NotNil(t, c)
	require.Equal(t, srv.URL, c.Base())

	var quiet lockedBuffer
	c, err = sampleenv.ConnectIn(ctx, dir, "agentree-research", &quiet)
	require.NoError(t, err)
	require.Equal(t, "samples", c.Org())
	require.Empty(t, quiet.String())
}

// TestConnectRefusesAWrongKey: a published gateway that refuses the key
// is not a worker to wait for: Connect keeps looking until its context
// ends and says why.
func TestConnectRefusesAWrongKey(t *testing.T) {
	dir := t.TempDir()
	srv := fakeGateway(t)
	unpublish, err := sampleenv.Publish(dir, "agentree-chat", sampleenv.Gateway{URL: srv.URL, Org: "samples", Key: "stale"})
	require.NoError(t, err)
	defer unpublish()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err = sampleenv.ConnectIn(ctx, dir, "agentree-chat", &lockedBuffer{})
	require.ErrorContains(t, err, "not_found")
}

// TestWorkerCommandNamesTheProgram: a sample's task queue names its
// worker's program, a second deployment's after a dot.
func TestWorkerCommandNamesTheProgram(t *testing.T) {
	require.Equal(t, `eval "$(make -s env)" && go run ./samples/openai-client/worker`, sampleenv.WorkerCommand("agentree-openai-client"))
	require.Equal(t, `eval "$(make -s env)" && go run ./samples/a2a/specialist`, sampleenv.WorkerCommand("agentree-a2a.specialist"))
}
