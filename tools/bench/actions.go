package main

import (
	"context"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
)

// actions are the Temporal actions of a conversation, by kind, counted
// from its runs' histories by Temporal Cloud's billing rules: what a
// Temporal Cloud user pays for. Workflow starts (continue-as-new
// included); each activity attempt; all the local activities of one
// workflow task together as one; timers; signals received and sent; search-attribute
// upserts other than the SDK's own for TemporalChangeVersion; each
// workflow task completed only to heartbeat a local activity still
// running (a new task to extend the lease: another action, counted once
// whether or not it carries the markers of local activities done by
// then); each activity heartbeat that reaches the server (not in
// history: counted at the worker's client, heartbeatCounter). Version
// and side-effect markers are free.
type actions struct {
	Starts, WorkflowTasks, Activities, LocalActivityTasks, Timers, Signals, Upserts int
	TaskHeartbeats, Heartbeats                                                      int
	// LocalActivities counts the local activities themselves (not billed
	// one by one).
	LocalActivities int
}

// total is the billable actions (workflow tasks are not billed; they are
// the load the server carries).
func (a actions) total() int {
	return a.Starts + a.Activities + a.LocalActivityTasks + a.Timers + a.Signals + a.Upserts + a.TaskHeartbeats + a.Heartbeats
}

// commandEvents are the events a workflow task's completion records
// (its commands), which follow its WorkflowTaskCompleted event.
var commandEvents = map[enumspb.EventType]bool{
	enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED: true, enumspb.EVENT_TYPE_ACTIVITY_TASK_CANCEL_REQUESTED: true,
	enumspb.EVENT_TYPE_TIMER_STARTED: true, enumspb.EVENT_TYPE_TIMER_CANCELED: true, enumspb.EVENT_TYPE_MARKER_RECORDED: true,
	enumspb.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES: true, enumspb.EVENT_TYPE_WORKFLOW_PROPERTIES_MODIFIED: true,
	enumspb.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED:         true,
	enumspb.EVENT_TYPE_REQUEST_CANCEL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED: true,
	enumspb.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:             true,
	enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:                   true, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED: true,
}

// taskHeartbeat says whether the workflow task completed at evs[i] asked
// for a new task of its own accord: after its commands, the next event
// is that task's scheduling, with nothing (an activity's result, a
// signal, a timer) to wake it. That is a workflow-task heartbeat.
func taskHeartbeat(evs []*historypb.HistoryEvent, i int) bool {
	for _, e := range evs[i+1:] {
		if !commandEvents[e.GetEventType()] {
			return e.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED
		}
	}
	return false
}

// add counts one run's events.
func (a *actions) add(evs []*historypb.HistoryEvent) {
	// taskBilled: the workflow task last completed is billed already (a
	// heartbeat, or holding a local activity).
	taskBilled := false
	for i, e := range evs {
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
			a.Starts++
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
			a.WorkflowTasks++
			taskBilled = taskHeartbeat(evs, i)
			if taskBilled {
				a.TaskHeartbeats++
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
			a.Activities += max(1, int(e.GetActivityTaskStartedEventAttributes().GetAttempt()))
		case enumspb.EVENT_TYPE_TIMER_STARTED:
			a.Timers++
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED, enumspb.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED:
			// A signal received, or one sent (runs recorded before
			// commitChange 2 send one to themselves each turn, which
			// Temporal refuses: billed all the same).
			a.Signals++
		case enumspb.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES:
			fields := e.GetUpsertWorkflowSearchAttributesEventAttributes().GetSearchAttributes().GetIndexedFields()
			if _, ok := fields["TemporalChangeVersion"]; !ok || len(fields) > 1 {
				a.Upserts++
			}
		case enumspb.EVENT_TYPE_MARKER_RECORDED:
			if e.GetMarkerRecordedEventAttributes().GetMarkerName() == "LocalActivity" {
				a.LocalActivities++
				if !taskBilled {
					a.LocalActivityTasks++
					taskBilled = true
				}
			}
		}
	}
}

// actionsOf counts the actions of an outcome's runs.
func actionsOf(ctx context.Context, s system, o outcome) (actions, error) {
	a := actions{Heartbeats: int(o.Heartbeats)}
	err := a.addRuns(ctx, s.temporal(), o.ID, o.Runs)
	return a, err
}

// addRuns counts the actions of runs, runs of workflow id.
func (a *actions) addRuns(ctx context.Context, tc client.Client, id string, runs []runStat) error {
	for _, r := range runs {
		evs, err := historyOf(ctx, tc, id, r.RunID)
		if err != nil {
			return err
		}
		a.add(evs)
	}
	return nil
}

// reportActions adds the actions per model turn of each system's last
// short conversation to r.
func (b *bench) reportActions(ctx context.Context, r *report, systems []system, last map[string]outcome) error {
	t := r.table("actions: Temporal Cloud actions per model turn (last short conversation; Cloud's billing rules, see actions.go)",
		"", "per turn", "starts", "activities", "local-activity tasks", "timers", "signals", "upserts", "task heartbeats", "activity heartbeats",
		"(local activities)", "(workflow tasks)")
	for _, s := range systems {
		o := last[s.name()]
		if o.Calls == 0 {
			continue
		}
		a, err := actionsOf(ctx, s, o)
		if err != nil {
			return err
		}
		per := func(n int) float64 { return float64(n) / float64(o.Calls) }
		r.add("actions_per_turn_"+s.name(), float64(a.total())/float64(o.Calls))
		t.row(s.name(), per(a.total()), per(a.Starts), per(a.Activities), per(a.LocalActivityTasks), per(a.Timers), per(a.Signals),
			per(a.Upserts), per(a.TaskHeartbeats), per(a.Heartbeats), per(a.LocalActivities), per(a.WorkflowTasks))
	}
	return nil
}
