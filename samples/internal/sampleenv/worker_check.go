package sampleenv

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
)

// workerGrace is how long a starter waits for a worker to poll its task
// queue before it says none is running: long enough for a worker started
// alongside it, short enough that nobody stares at a silent terminal.
const workerGrace = 3 * time.Second

// WatchForWorker reports on w, once, when no worker has polled taskQueue
// within workerGrace, with the command that starts the sample's worker;
// a starter would otherwise wait in silence. It returns at once, stops
// watching when ctx ends, and closes the channel it returns when done.
func WatchForWorker(ctx context.Context, tc client.Client, taskQueue string, w io.Writer) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		deadline := time.NewTimer(workerGrace)
		defer deadline.Stop()
		select {
		case <-ctx.Done():
			return
		case <-deadline.C:
		}
		if has, err := hasPollers(ctx, tc, taskQueue); err == nil && !has {
			fmt.Fprintf(w, "\nno worker is polling task queue %q, so nothing runs yet; start one in another terminal:\n  %s\n(this starter keeps waiting)\n\n",
				taskQueue, WorkerCommand(taskQueue))
		}
	}()
	return done
}

// hasPollers reports whether any worker polled taskQueue for workflow or
// activity tasks recently (the server keeps pollers for about a minute).
func hasPollers(ctx context.Context, tc client.Client, taskQueue string) (bool, error) {
	for _, typ := range []enumspb.TaskQueueType{enumspb.TASK_QUEUE_TYPE_WORKFLOW, enumspb.TASK_QUEUE_TYPE_ACTIVITY} {
		resp, err := tc.DescribeTaskQueue(ctx, taskQueue, typ)
		if err != nil {
			return false, err
		}
		if len(resp.GetPollers()) > 0 {
			return true, nil
		}
	}
	return false, nil
}

// WorkerCommand is how to start the worker of the sample whose task queue
// is taskQueue ("agentree-research" → the research sample).
func WorkerCommand(taskQueue string) string {
	return "eval \"$(make -s env)\" && go run ./samples/" + strings.TrimPrefix(taskQueue, "agentree-") + "/worker"
}
