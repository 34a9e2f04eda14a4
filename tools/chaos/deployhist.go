package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
)

// What a deploy did to the runs, read from their Temporal histories: which
// build took and completed each workflow task (a task's worker identity
// begins with its process's pid, and the run knows which build each pid
// ran), which tasks failed and for how long.

// taskStats are one execution's workflow tasks, over its whole chain of
// runs.
type taskStats struct {
	failed int
	// failingMax is the longest stretch from a failed workflow task to the
	// next completed one (or to now, when none completed since).
	failingMax time.Duration
	// newerAtRollback: a new-build worker completed one of its tasks before
	// the rollback began.
	newerAtRollback bool
	// rollbackTasks are the tasks the rolled-back worker started once a
	// new-build worker had completed one; rollbackFailed, those it failed.
	rollbackTasks, rollbackFailed int
}

// scan reads one execution's events, oldest run first.
func (d *deployment) scan(events []*historypb.HistoryEvent, now time.Time) taskStats {
	d.mu.Lock()
	rbStart, rbEnd := d.rollbackStart, d.rollbackEnd
	d.mu.Unlock()
	if rbEnd.IsZero() {
		rbEnd = now
	}
	var s taskStats
	var failingSince time.Time
	newerSeen, lastByRollback := false, false
	for _, e := range events {
		at := e.GetEventTime().AsTime()
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED:
			lastByRollback = !rbStart.IsZero() && at.After(rbStart) && at.Before(rbEnd) &&
				d.build(e.GetWorkflowTaskStartedEventAttributes().GetIdentity()) == "old"
			if lastByRollback && newerSeen {
				s.rollbackTasks++
			}
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
			if d.build(e.GetWorkflowTaskCompletedEventAttributes().GetIdentity()) == "new" {
				newerSeen = true
				if !rbStart.IsZero() && at.Before(rbStart) {
					s.newerAtRollback = true
				}
			}
			if !failingSince.IsZero() {
				s.failingMax = max(s.failingMax, at.Sub(failingSince))
				failingSince = time.Time{}
			}
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED:
			s.failed++
			if lastByRollback && newerSeen {
				s.rollbackFailed++
			}
			if failingSince.IsZero() {
				failingSince = at
			}
		}
	}
	if !failingSince.IsZero() {
		s.failingMax = max(s.failingMax, now.Sub(failingSince))
	}
	return s
}

// chainEvents are the events of every run of execution id, oldest run
// first (the latest run names the one it continued, and so on back).
func (c *cluster) chainEvents(ctx context.Context, id string, latestOnly bool) ([]*historypb.HistoryEvent, error) {
	var runs [][]*historypb.HistoryEvent
	runID := ""
	for {
		it := c.tc.GetWorkflowHistory(ctx, id, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		var evs []*historypb.HistoryEvent
		for it.HasNext() {
			e, err := it.Next()
			if err != nil {
				return nil, fmt.Errorf("chaos: history of %s: %w", id, err)
			}
			evs = append(evs, e)
		}
		runs = append(runs, evs)
		if latestOnly || len(evs) == 0 {
			break
		}
		if runID = evs[0].GetWorkflowExecutionStartedEventAttributes().GetContinuedExecutionRunId(); runID == "" {
			break
		}
	}
	slices.Reverse(runs)
	return slices.Concat(runs...), nil
}

// rollbackTook counts the tasks of execution id's latest run the
// rolled-back worker started after a new-build worker completed one.
func (d *deployment) rollbackTook(ctx context.Context, c *cluster, id string) (int, error) {
	events, err := c.chainEvents(ctx, id, true)
	if err != nil {
		return 0, err
	}
	return d.scan(events, time.Now()).rollbackTasks, nil
}

// deployOutcome is the deploy's part of the report.
type deployOutcome struct {
	from       string
	migrations []string
	stopFirst  bool
	window     time.Duration
	// wftFailed counts failed workflow tasks; wftFailingMax is the longest
	// any execution's kept failing.
	wftFailed     int
	wftFailingMax time.Duration
	// newerRuns are the executions a new-build worker had advanced when a
	// worker was rolled back; rollbackRuns, those the rolled-back worker
	// then took a task of (rollbackTasks tasks, rollbackFailed failed);
	// rollbackUnfinished, those of them that did not finish (not waiting
	// with their last message answered, nor completed).
	newerRuns, rollbackRuns, rollbackTasks, rollbackFailed int
	rollbackUnfinished                                     int
	rollbackHeld                                           time.Duration
	// resume are, per worker replaced and execution with a call in flight
	// on the workers then, the time to its next stored progress (as a
	// worker kill's recovery is timed), unless another fault cut in.
	resume     []time.Duration
	stepErrors int
	examples   []string
}

// analyse reads every execution's histories after the run.
func (d *deployment) analyse(ctx context.Context, c *cluster, convs []*conversation, faults []*fault) (*deployOutcome, error) {
	d.mu.Lock()
	o := &deployOutcome{from: d.from, migrations: d.migrations, stopFirst: d.stopFirst,
		window: d.windowEnd.Sub(d.windowStart), rollbackHeld: d.rollbackEnd.Sub(d.rollbackStart)}
	for _, st := range d.steps {
		if st.Err != "" {
			o.stepErrors++
		}
	}
	d.mu.Unlock()
	if o.window < 0 {
		o.window = 0
	}
	for _, st := range faults {
		if !slices.Contains([]string{deployWorker, rollbackWorker, redeployWorker, deployStopAll}, st.Kind) {
			continue
		}
		for _, id := range slices.Compact(slices.Sorted(slices.Values(st.InFlight))) {
			next, err := nextProgress(ctx, c, id, st.At)
			if err != nil {
				return nil, err
			}
			if next != nil && !overlapped(faults, st, *next) {
				o.resume = append(o.resume, next.Sub(st.At))
			}
		}
	}
	now := time.Now()
	for _, cv := range convs {
		if cv.ExecID == "" {
			continue
		}
		events, err := c.chainEvents(ctx, cv.ExecID, false)
		if err != nil {
			return nil, err
		}
		s := d.scan(events, now)
		o.wftFailed += s.failed
		o.wftFailingMax = max(o.wftFailingMax, s.failingMax)
		o.rollbackTasks += s.rollbackTasks
		o.rollbackFailed += s.rollbackFailed
		if s.newerAtRollback {
			o.newerRuns++
		}
		if s.rollbackTasks == 0 {
			continue
		}
		o.rollbackRuns++
		var status string
		if err := c.pool.QueryRow(ctx, `SELECT status FROM agent_execution WHERE id = $1`, cv.ExecID).Scan(&status); err != nil {
			return nil, fmt.Errorf("chaos: status of %s: %w", cv.ExecID, err)
		}
		if finished := status == "COMPLETED" || (status == "WAITING" && (cv.OneShot || cv.Answered)); !finished {
			o.rollbackUnfinished++
			o.examples = append(o.examples, fmt.Sprintf("%s (%s): taken by the rolled-back worker, then %s", cv.Tag, cv.ExecID, status))
		}
	}
	return o, nil
}

// ok reports whether the deploy kept its promises: every step done, no
// workflow task failing for longer than the deploy window, every run the
// rolled-back worker touched finished. A run without -deploy has none.
func (o *deployOutcome) ok() bool {
	return o == nil || (o.stepErrors == 0 && o.wftFailingMax <= o.window && o.rollbackUnfinished == 0)
}

// print writes the deploy's figures after the run's.
func (o *deployOutcome) print(w io.Writer) {
	if o == nil {
		return
	}
	mode := "rolling"
	if o.stopFirst {
		mode = "stop-all" // a migration is not additive
	}
	for _, e := range o.examples {
		fmt.Fprintln(w, "deploy: "+e)
	}
	figures := []figure{
		{"chaos_deploy_from", o.from},
		{"chaos_deploy_mode", mode},
		{"chaos_deploy_migrations", len(o.migrations)},
		{"chaos_deploy_step_errors", o.stepErrors},
		{"chaos_deploy_window_s", seconds(o.window)},
		{"chaos_deploy_wft_failed", o.wftFailed},
		{"chaos_deploy_wft_failing_max_s", seconds(o.wftFailingMax)},
		{"chaos_deploy_newer_runs", o.newerRuns},
		{"chaos_deploy_rollback_held_s", seconds(o.rollbackHeld)},
		{"chaos_deploy_rollback_runs", o.rollbackRuns},
		{"chaos_deploy_rollback_tasks", o.rollbackTasks},
		{"chaos_deploy_rollback_failed_tasks", o.rollbackFailed},
		{"chaos_deploy_rollback_unfinished", o.rollbackUnfinished},
		{"chaos_deploy_resume_samples", len(o.resume)},
		{"chaos_deploy_resume_p50_s", seconds(percentile(o.resume, 0.5))},
		{"chaos_deploy_resume_max_s", seconds(percentile(o.resume, 1))},
	}
	printFigures(w, figures)
}

// withDeploySteps puts the deploy's steps among the faults, in time order:
// a step stops a process as a fault does, so the recovery check sets
// aside what it overlaps.
func withDeploySteps(faults, steps []*fault) []*fault {
	all := slices.Concat(faults, steps)
	slices.SortStableFunc(all, func(a, b *fault) int { return a.At.Compare(b.At) })
	return all
}
