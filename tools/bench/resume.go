package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
)

// resume kills a worker process in the middle of a small and of a large
// conversation and times how long its replacement takes to get back to the
// model.
func (b *bench) resume(ctx context.Context, r *report, trace io.Writer) error {
	c := b.cfg
	dir, err := os.MkdirTemp("", "agentree-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	systems := []system{agentree{b: b}}
	if c.ResumeNaive {
		// The naive worker dies during a tool call that is an activity,
		// as Agentree's does, whatever the set.
		nv := b.naiveSystem(c.ResumeHeartbeat)
		nv.mode.NaiveLocalTools = false
		systems = append(systems, nv)
	}
	t := r.table(fmt.Sprintf("resume: worker killed at call %d of %d and at call %d of %d (%s conversation, %s per tool output); median of %d",
		c.ResumeSmallKill, c.ResumeSmallCalls, c.ResumeLargeKill, c.ResumeLargeCalls,
		formatBytes(int64(c.ResumeConversation)), formatBytes(int64(c.ResumeToolOutput)), c.ResumeRepeat),
		"system", "small", "large", "large / small", "samples (small; large)")
	for _, s := range systems {
		var small, large []time.Duration
		for range c.ResumeRepeat {
			d, err := b.resumeOnce(ctx, dir, s, c.ResumeSmallCalls, c.ResumeSmallKill, trace)
			if err != nil {
				return err
			}
			small = append(small, d)
			if d, err = b.resumeOnce(ctx, dir, s, c.ResumeLargeCalls, c.ResumeLargeKill, trace); err != nil {
				return err
			}
			large = append(large, d)
		}
		name := "resume_"
		if s.name() != nameAgentree {
			name += s.name() + "_"
		}
		sm, lg := percentile(small, .5), percentile(large, .5)
		r.add(name+"small_ms", sm)
		r.add(name+"large_ms", lg)
		r.add(name+"ratio", ratio(lg, sm))
		t.row(s.name(), sm, lg, ratio(lg, sm), samples(small)+"; "+samples(large))
	}
	return nil
}

// resumeOnce runs a conversation of calls model calls on a worker process
// that dies (SIGKILL) during the tool call of model call kill, and returns
// the time from its replacement's start to the next model call.
//
// A killed worker cannot tell the server it is gone: the server learns it
// from the tool call's heartbeat timeout, and would send the execution's
// next workflow task to the dead worker's sticky queue until that
// schedule-to-start timeout (5 s) passed. Those waits are the same for any
// conversation and are not what is measured: the bench resets the sticky
// queue, as a worker that shuts down cleanly does, and starts the
// replacement once the tool call's retry is due. What remains is the
// replacement's work: take the retried tool call, replay the run, schedule
// and start the next model call.
func (b *bench) resumeOnce(ctx context.Context, dir string, s system, calls, kill int, trace io.Writer) (time.Duration, error) {
	p := plan{ID: b.newPlanID("resume-" + s.name()), Calls: calls, ToolBytes: int(b.cfg.ResumeToolOutput)}
	fail := func(err error) (time.Duration, error) {
		return 0, fmt.Errorf("bench: resume %s at call %d of %d: %w", s.name(), kill, calls, err)
	}
	doomed, err := b.startChild(dir, p.ID+"-doomed", kill-1)
	if err != nil {
		return fail(err)
	}
	defer doomed.kill()
	id, err := s.start(ctx, b.resumeQueues().of(s.name()), p, int(b.cfg.ResumeConversation))
	if err != nil {
		return fail(err)
	}
	if _, err := doomed.await(ctx, "block", "-", kill-1); err != nil {
		return fail(err)
	}
	doomed.kill()
	killed := time.Now()
	if err := resetSticky(ctx, s.temporal(), id); err != nil {
		return fail(err)
	}
	if err := retryDue(ctx, s.temporal(), id, s.toolActivity()); err != nil {
		return fail(err)
	}

	repl, err := b.startChild(dir, p.ID+"-replacement", -1)
	if err != nil {
		return fail(err)
	}
	defer repl.stop()
	began, err := repl.await(ctx, "start", "-", -1)
	if err != nil {
		return fail(err)
	}
	next, err := repl.await(ctx, "call", p.ID, kill)
	if err != nil {
		return fail(err)
	}
	if err := traceResume(ctx, trace, s, id, killed, began, next); err != nil {
		return fail(err)
	}
	if kill < calls-1 {
		return next.Sub(began), s.stop(ctx, id)
	}
	status, reason, err := s.wait(ctx, id)
	if err == nil && status != "COMPLETED" {
		err = fmt.Errorf("the conversation ended %s %s", status, reason)
	}
	if err != nil {
		return fail(err)
	}
	return next.Sub(began), nil
}

// resumeQueues are the task queues of the worker processes, which the
// bench's own workers do not poll.
func (b *bench) resumeQueues() queues {
	return queues{Agentree: b.queues.Agentree + "-resume", Naive: b.queues.Naive + "-resume"}
}

// resetSticky sends the execution's next workflow task to its task queue,
// where any worker takes it, instead of the dead worker's sticky queue.
func resetSticky(ctx context.Context, tc client.Client, id string) error {
	_, err := tc.WorkflowService().ResetStickyTaskQueue(ctx, &workflowservice.ResetStickyTaskQueueRequest{
		Namespace: client.DefaultNamespace, Execution: &commonpb.WorkflowExecution{WorkflowId: id},
	})
	if err != nil {
		return fmt.Errorf("reset sticky queue: %w", err)
	}
	return nil
}

// retryDue polls until the tool call the dead worker held is due again
// and waiting in its task queue: its attempt timed out, the retry's
// backoff has passed, and the server has put the retry's task on the
// queue. The server does that last step when its retry timer fires,
// which can be a few hundred milliseconds after the retry is due; a
// replacement started before then would be timed waiting on the server's
// timers, not resuming.
func retryDue(ctx context.Context, tc client.Client, id, activityType string) error {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	var queue *taskqueuepb.TaskQueue // the execution's, once its retry is due
	for {
		if queue == nil {
			d, err := tc.DescribeWorkflowExecution(ctx, id, "")
			if err != nil {
				return fmt.Errorf("describe: %w", err)
			}
			for _, a := range d.PendingActivities {
				if a.GetActivityType().GetName() == activityType && a.Attempt > 1 &&
					a.State == enumspb.PENDING_ACTIVITY_STATE_SCHEDULED && a.NextAttemptScheduleTime == nil {
					queue = d.GetExecutionConfig().GetTaskQueue()
				}
			}
		}
		if queue != nil {
			q, err := tc.WorkflowService().DescribeTaskQueue(ctx, &workflowservice.DescribeTaskQueueRequest{
				Namespace: client.DefaultNamespace, TaskQueue: queue,
				TaskQueueType: enumspb.TASK_QUEUE_TYPE_ACTIVITY, ReportStats: true,
			})
			if err != nil {
				return fmt.Errorf("describe task queue: %w", err)
			}
			if q.GetStats().GetApproximateBacklogCount() > 0 {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the tool call's retry: %w", ctx.Err())
		case <-tick.C:
		}
	}
}

// traceResume prints the events the server recorded between the kill and
// the next model call, in ms since the replacement started. A nil w prints
// nothing.
func traceResume(ctx context.Context, w io.Writer, s system, id string, killed, began, next time.Time) error {
	if w == nil {
		return nil
	}
	runs, err := runChain(ctx, s.temporal(), id)
	if err != nil {
		return err
	}
	var evs []*historypb.HistoryEvent
	for _, run := range runs[max(len(runs)-2, 0):] {
		all, err := historyOf(ctx, s.temporal(), id, run.RunID)
		if err != nil {
			return err
		}
		for _, e := range all {
			if t := e.GetEventTime().AsTime(); !t.Before(killed) && !t.After(next) {
				evs = append(evs, e)
			}
		}
	}
	dumpHistory(w, fmt.Sprintf("%s resumed %s; the next model call began at %.1f ms", s.name(), id, ms(next.Sub(began))), evs, began)
	return nil
}

// samples lists durations in milliseconds.
func samples(ds []time.Duration) string {
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = fmt.Sprintf("%.0f", ms(d))
	}
	return strings.Join(s, " ")
}
