package sampleenv_test

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/agentree/agentree/internal/temporaltest"
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

// TestStarterSaysNoWorkerRuns: with nobody polling its task queue, a
// starter says so within seconds, naming the command that starts the
// worker; with a worker polling, it says nothing (checked after the same
// watch has run: the warning comes before the watch ends or never).
func TestStarterSaysNoWorkerRuns(t *testing.T) {
	tc, err := client.Dial(client.Options{HostPort: temporaltest.Address(t), Logger: temporaltest.Logger{}})
	require.NoError(t, err)
	defer tc.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	idle := "agentree-research-" + uuid.NewString()[:8]
	var out lockedBuffer
	sampleenv.WatchForWorker(ctx, tc, idle, &out)
	require.Eventually(t, func() bool { return out.String() != "" }, 30*time.Second, 50*time.Millisecond)
	require.Contains(t, out.String(), `no worker is polling task queue "`+idle+`"`)
	require.Contains(t, out.String(), "go run ./samples/research-"+idle[len("agentree-research-"):]+"/worker")

	busy := "busy-" + uuid.NewString()[:8]
	w := worker.New(tc, busy, worker.Options{})
	w.RegisterWorkflowWithOptions(func(workflow.Context) error { return nil }, workflow.RegisterOptions{Name: "noop"})
	require.NoError(t, w.Start())
	defer w.Stop()
	require.Eventually(t, func() bool {
		d, err := tc.DescribeTaskQueue(ctx, busy, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
		return err == nil && len(d.GetPollers()) > 0
	}, 30*time.Second, 50*time.Millisecond)
	var quiet lockedBuffer
	wctx, wcancel := context.WithCancel(ctx)
	<-sampleenv.WatchForWorker(wctx, tc, busy, &quiet)
	wcancel()
	require.Empty(t, quiet.String())
}
