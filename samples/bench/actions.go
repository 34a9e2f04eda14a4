package main

import (
	"context"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
)

// actions are the Temporal actions of a conversation, by kind, counted
// from its runs' histories: what a Temporal Cloud user pays for. Version
// and side-effect markers are not counted; local activities are.
type actions struct {
	// Starts are workflow starts and continue-as-new runs.
	Starts, WorkflowTasks, Activities, LocalActivities, Signals int
}

// total is the billable actions: starts, activities, local activities
// and signals (workflow tasks are not billed; they are the load the
// server carries).
func (a actions) total() int { return a.Starts + a.Activities + a.LocalActivities + a.Signals }

// add counts one run's events.
func (a *actions) add(evs []*historypb.HistoryEvent) {
	for _, e := range evs {
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
			a.Starts++
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
			a.WorkflowTasks++
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			a.Activities++
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
			a.Signals++
		case enumspb.EVENT_TYPE_MARKER_RECORDED:
			if e.GetMarkerRecordedEventAttributes().GetMarkerName() == "LocalActivity" {
				a.LocalActivities++
			}
		}
	}
}

// actionsOf counts the actions of an outcome's runs.
func actionsOf(ctx context.Context, s system, o outcome) (actions, error) {
	var a actions
	for _, r := range o.Runs {
		evs, err := historyOf(ctx, s.temporal(), o.ID, r.RunID)
		if err != nil {
			return a, err
		}
		a.add(evs)
	}
	return a, nil
}

// reportActions adds the actions per model turn of each system's last
// short conversation to r.
func (b *bench) reportActions(ctx context.Context, r *report, systems []system, last map[string]outcome) error {
	t := r.table("actions: Temporal actions per model turn (last short conversation; starts + activities + local activities + signals)",
		"", "per turn", "starts", "activities", "local activities", "signals", "workflow tasks")
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
		t.row(s.name(), per(a.total()), per(a.Starts), per(a.Activities), per(a.LocalActivities), per(a.Signals), per(a.WorkflowTasks))
	}
	return nil
}
