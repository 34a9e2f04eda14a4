package adapter_test

import (
	"context"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"

	"github.com/agentree/agentree/agentsdk"
)

// approvalKind is the test's custom agent: it runs a task of its own,
// drafts with the model, publishes data and waits for its own "approve"
// signal, whose value it reads from the inbox. It stands for the custom
// agents users write, whose waiting executions a deploy must not break.
const approvalKind = "upgrade-approval"

// stampActivity is the approval agent's own activity (run by name).
const stampActivity = "upgrade.stamp"

func approvalActivities() map[string]any {
	return map[string]any{stampActivity: func(_ context.Context, executionID string) (string, error) {
		return "stamped " + executionID, nil
	}}
}

type approvalAgent struct{}

type approvalState struct {
	Stamp   string `json:"stamp"`
	DraftID string `json:"draftId,omitempty"`
}

func (approvalAgent) Kind() string { return approvalKind }

func (approvalAgent) RunSegment(ctx agentsdk.Context) (agentsdk.Outcome, error) {
	var st approvalState
	if err := ctx.State().GetCustom(&st); err != nil {
		return agentsdk.Outcome{}, err
	}
	for _, s := range ctx.Signals() {
		if s.Name != "approve" {
			continue
		}
		var d struct {
			By string `json:"by"`
		}
		if err := ctx.SignalValue(s, &d); err != nil {
			return agentsdk.Outcome{}, err
		}
		msg := agentsdk.TextMessage(agentsdk.RoleUser, "Approved by "+d.By+".")
		if _, err := ctx.ConsumeSignal(s, agentsdk.NewEntry{Type: agentsdk.EntryMessage, Message: &msg}); err != nil {
			return agentsdk.Outcome{}, err
		}
		if err := ctx.StreamData(map[string]any{"approved": st.DraftID}); err != nil {
			return agentsdk.Outcome{}, err
		}
		return agentsdk.Complete("approved"), nil
	}
	if st.DraftID == "" {
		if err := ctx.RunActivity(stampActivity, ctx.ExecutionID(), &st.Stamp); err != nil {
			return agentsdk.Outcome{}, err
		}
		res, err := ctx.CallModel(agentsdk.ModelCall{TurnID: "draft-1"})
		if err != nil {
			return agentsdk.Outcome{}, err
		}
		ctx.State().Turn++
		ctx.State().AddUsage(res.Model, res.Usage)
		st.DraftID = res.Entry.ID
		if err := ctx.State().SetCustom(st); err != nil {
			return agentsdk.Outcome{}, err
		}
		if err := ctx.StreamData(map[string]any{"draft": st.DraftID}); err != nil {
			return agentsdk.Outcome{}, err
		}
	}
	return agentsdk.Wait("approval", "approve"), nil
}

// pendingActivities are the types of the activities scheduled and not
// closed in h, in order.
func pendingActivities(h *historypb.History) []string {
	scheduled := map[int64]string{}
	var order []int64
	for _, e := range h.Events {
		if a := e.GetActivityTaskScheduledEventAttributes(); a != nil {
			scheduled[e.EventId] = a.GetActivityType().GetName()
			order = append(order, e.EventId)
		}
		for _, id := range []int64{
			e.GetActivityTaskCompletedEventAttributes().GetScheduledEventId(),
			e.GetActivityTaskFailedEventAttributes().GetScheduledEventId(),
			e.GetActivityTaskTimedOutEventAttributes().GetScheduledEventId(),
			e.GetActivityTaskCanceledEventAttributes().GetScheduledEventId(),
		} {
			delete(scheduled, id)
		}
	}
	var out []string
	for _, id := range order {
		if name, ok := scheduled[id]; ok {
			out = append(out, name)
		}
	}
	return out
}

// completedActivities counts the completed activities of one type in h.
func completedActivities(h *historypb.History, activityType string) int {
	types := map[int64]string{}
	n := 0
	for _, e := range h.Events {
		if a := e.GetActivityTaskScheduledEventAttributes(); a != nil {
			types[e.EventId] = a.GetActivityType().GetName()
		}
		if a := e.GetActivityTaskCompletedEventAttributes(); a != nil && types[a.GetScheduledEventId()] == activityType {
			n++
		}
	}
	return n
}

func countEvents(h *historypb.History, typ enumspb.EventType) int {
	n := 0
	for _, e := range h.Events {
		if e.EventType == typ {
			n++
		}
	}
	return n
}

// continuedAsNew reports whether h is a run that an earlier run of its
// chain continued into.
func continuedAsNew(h *historypb.History) bool {
	return h.Events[0].GetWorkflowExecutionStartedEventAttributes().GetContinuedExecutionRunId() != ""
}

// closedRun reports whether h holds the event that closes its run.
func closedRun(h *historypb.History) bool {
	for _, e := range h.Events {
		switch e.EventType {
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED,
			enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED,
			enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW:
			return true
		}
	}
	return false
}

// lastWorkflowTaskCompleted reports whether h's latest workflow task
// event is its completion: the worker had nothing left to decide.
func lastWorkflowTaskCompleted(h *historypb.History) bool {
	for i := len(h.Events) - 1; i >= 0; i-- {
		switch h.Events[i].EventType {
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
			return true
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED, enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED,
			enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED, enumspb.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT:
			return false
		}
	}
	return false
}
