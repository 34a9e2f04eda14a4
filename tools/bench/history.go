package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
)

// runStat is one run's history as the server reports it.
type runStat struct {
	RunID  string
	Status string
	Events int64
	Bytes  int64
}

// runChain describes every run of a workflow ID's continue-as-new chain,
// oldest first.
func runChain(ctx context.Context, tc client.Client, id string) ([]runStat, error) {
	var out []runStat
	runID := ""
	for {
		d, err := tc.DescribeWorkflowExecution(ctx, id, runID)
		if err != nil {
			return nil, fmt.Errorf("bench: describe %s: %w", id, err)
		}
		info := d.WorkflowExecutionInfo
		out = append(out, runStat{
			RunID: info.Execution.RunId, Events: info.HistoryLength, Bytes: info.HistorySizeBytes,
			Status: statusName(info.Status),
		})
		first, err := tc.WorkflowService().GetWorkflowExecutionHistory(ctx, &workflowservice.GetWorkflowExecutionHistoryRequest{
			Namespace: client.DefaultNamespace, MaximumPageSize: 1,
			Execution: &commonpb.WorkflowExecution{WorkflowId: id, RunId: info.Execution.RunId},
		})
		if err != nil || len(first.GetHistory().GetEvents()) == 0 {
			return nil, fmt.Errorf("bench: first event of %s/%s: %v", id, info.Execution.RunId, err)
		}
		runID = first.History.Events[0].GetWorkflowExecutionStartedEventAttributes().GetContinuedExecutionRunId()
		if runID == "" {
			slices.Reverse(out)
			return out, nil
		}
	}
}

// historyOf reads one run's whole history.
func historyOf(ctx context.Context, tc client.Client, id, runID string) ([]*historypb.HistoryEvent, error) {
	it := tc.GetWorkflowHistory(ctx, id, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var evs []*historypb.HistoryEvent
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return nil, fmt.Errorf("bench: history of %s: %w", id, err)
		}
		evs = append(evs, e)
	}
	return evs, nil
}

// completedActivities counts the completed activities of one type, and
// the local activities of that type that returned a result.
func completedActivities(evs []*historypb.HistoryEvent, activityType string) int {
	scheduled := map[int64]string{}
	n := 0
	for _, e := range evs {
		if a := e.GetActivityTaskScheduledEventAttributes(); a != nil {
			scheduled[e.EventId] = a.GetActivityType().GetName()
		}
		if a := e.GetActivityTaskCompletedEventAttributes(); a != nil && scheduled[a.ScheduledEventId] == activityType {
			n++
		}
		if localActivityType(e) == activityType && e.GetMarkerRecordedEventAttributes().GetFailure() == nil {
			n++
		}
	}
	return n
}

// localActivityType is the activity type a local activity's marker
// records ("" for any other event): the SDK keeps it in the marker's
// "data" detail, a JSON object.
func localActivityType(e *historypb.HistoryEvent) string {
	m := e.GetMarkerRecordedEventAttributes()
	if m.GetMarkerName() != "LocalActivity" {
		return ""
	}
	var data struct{ ActivityType string }
	ps := m.GetDetails()["data"].GetPayloads()
	if len(ps) == 0 || json.Unmarshal(ps[0].GetData(), &data) != nil {
		return ""
	}
	return data.ActivityType
}

// closeReason is why a run ended, when the server or a failure ended it:
// the close event alone is read, not a history that may be 50 MB.
func closeReason(ctx context.Context, tc client.Client, id string) (string, error) {
	it := tc.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return "", fmt.Errorf("bench: close event of %s: %w", id, err)
		}
		if a := e.GetWorkflowExecutionTerminatedEventAttributes(); a != nil {
			return a.Reason, nil
		}
		if a := e.GetWorkflowExecutionFailedEventAttributes(); a != nil {
			return a.GetFailure().GetMessage(), nil
		}
	}
	return "", nil
}

// lastTaskFailure is why the run's last recorded workflow task failed or
// timed out ("" if none did): a task failing again and again records its
// first failure only, which is the one that says why (a completion past
// the gRPC message limit, for one).
func lastTaskFailure(ctx context.Context, tc client.Client, id string) (string, error) {
	evs, err := historyOf(ctx, tc, id, "")
	if err != nil {
		return "", err
	}
	for _, e := range slices.Backward(evs) {
		if a := e.GetWorkflowTaskFailedEventAttributes(); a != nil {
			msg := a.GetFailure().GetMessage()
			if len(msg) > 300 {
				msg = msg[:300] + "…"
			}
			return fmt.Sprintf("workflow task failed: %s: %s", strings.TrimPrefix(a.GetCause().String(), "WORKFLOW_TASK_FAILED_CAUSE_"), msg), nil
		}
		if e.GetWorkflowTaskTimedOutEventAttributes() != nil {
			return "workflow task timed out", nil
		}
	}
	return "", nil
}

// dumpHistory prints events with the milliseconds since t0 (the first
// event's time when zero), which show where a step's time goes.
func dumpHistory(w io.Writer, title string, evs []*historypb.HistoryEvent, t0 time.Time) {
	fmt.Fprintf(w, "== %s: %d events\n", title, len(evs))
	if len(evs) > 0 && t0.IsZero() {
		t0 = evs[0].GetEventTime().AsTime()
	}
	for _, e := range evs {
		detail := ""
		if a := e.GetActivityTaskScheduledEventAttributes(); a != nil {
			detail = a.GetActivityType().GetName()
		}
		if a := e.GetActivityTaskStartedEventAttributes(); a != nil && a.Attempt > 1 {
			detail = fmt.Sprintf("attempt %d", a.Attempt)
		}
		if a := e.GetMarkerRecordedEventAttributes(); a != nil {
			detail = a.GetMarkerName()
		}
		fmt.Fprintf(w, "%9.1f ms %4d  %s %s\n", ms(e.GetEventTime().AsTime().Sub(t0)),
			e.EventId, strings.TrimPrefix(enumspb.EventType_name[int32(e.EventType)], "EVENT_TYPE_"), detail)
	}
}

// statusName is a workflow status as people say it: COMPLETED, TERMINATED.
func statusName(s enumspb.WorkflowExecutionStatus) string {
	return strings.TrimPrefix(enumspb.WorkflowExecutionStatus_name[int32(s)], "WORKFLOW_EXECUTION_STATUS_")
}
