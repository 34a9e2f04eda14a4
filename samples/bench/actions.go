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
// upserts other than the SDK's own for TemporalChangeVersion. Version and
// side-effect markers are free.
type actions struct {
	Starts, WorkflowTasks, Activities, LocalActivityTasks, Timers, Signals, Upserts int
	// LocalActivities counts the local activities themselves (not billed
	// one by one).
	LocalActivities int
}

// total is the billable actions (workflow tasks are not billed; they are
// the load the server carries).
func (a actions) total() int {
	return a.Starts + a.Activities + a.LocalActivityTasks + a.Timers + a.Signals + a.Upserts
}

// add counts one run's events.
func (a *actions) add(evs []*historypb.HistoryEvent) {
	taskHasLocal := false
	for _, e := range evs {
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
			a.Starts++
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
			a.WorkflowTasks++
			taskHasLocal = false
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
				if !taskHasLocal {
					a.LocalActivityTasks++
					taskHasLocal = true
				}
			}
		}
	}
}

// actionsOf counts the actions of an outcome's runs.
func actionsOf(ctx context.Context, s system, o outcome) (actions, error) {
	var a actions
	return a, a.addRuns(ctx, s.temporal(), o.ID, o.Runs)
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
		"", "per turn", "starts", "activities", "local-activity tasks", "timers", "signals", "upserts", "(local activities)", "(workflow tasks)")
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
			per(a.Upserts), per(a.LocalActivities), per(a.WorkflowTasks))
	}
	return nil
}
