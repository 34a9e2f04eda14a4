package adapter

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"
	"github.com/google/uuid"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/domain"
	"github.com/agentree/agentree/internal/engine"
)

// RemoteAgentActivity runs a spawn_agents child on a remote A2A agent.
// It is an activity, not a local one: a remote task may take hours, and
// it heartbeats so a dead worker's call is taken up elsewhere within the
// heartbeat timeout.
const RemoteAgentActivity = "agentree.RunRemoteAgent"

// ErrTypeRemoteUnavailable: the remote agent could not be reached; the
// call is retried (counted against ToolAttempts, as a tool's failures).
const ErrTypeRemoteUnavailable = "RemoteUnavailable"

// RemoteInput is RemoteAgentActivity's input: the child (execution, tool
// call, index in the call: the key of its remote task), the remote agent's
// name and the task's prompt.
type RemoteInput struct {
	OrgID, ExecutionID, ToolCallID string
	Index                          int
	Remote, Prompt                 string
}

// RemoteResult is how the remote task ended: a child's Result (its
// status, answer or error, and usage), with the remote's task ID.
type RemoteResult struct {
	Result
	TaskID string `json:"taskId,omitempty"`
}

// startRemote schedules a remote child's activity.
func (p *temporalPort) startRemote(ctx workflow.Context, orgID, parentID string, c engine.ChildStart) workflow.Future {
	timeout := time.Hour
	if r, ok := p.opts.remotes[c.Remote]; ok {
		timeout = r.Timeout
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		// The activity ends the task at Timeout itself, as the child's
		// failure; this only catches a worker that stopped and heartbeats on.
		StartToCloseTimeout:    timeout + time.Minute,
		ScheduleToCloseTimeout: p.opts.OutageLimit,
		HeartbeatTimeout:       p.opts.ToolHeartbeatTimeout,
		RetryPolicy:            infraRetry(),
	})
	return workflow.ExecuteActivity(actx, RemoteAgentActivity, RemoteInput{OrgID: orgID, ExecutionID: parentID,
		ToolCallID: c.ToolCallID, Index: c.Index, Remote: c.Remote, Prompt: c.Prompt})
}

// RunRemoteAgent implements RemoteAgentActivity. The child's record is
// claimed first, with a message ID, and the remote's task ID written as
// soon as the remote answers the message: an attempt that finds the task
// ID (the worker died mid-call) re-attaches to that task with tasks/get
// instead of sending the message again. The one window left is between
// the remote's answer and that write (milliseconds): a retry then sends
// the message again with the same message ID.
//
// A cancelled call (the parent was cancelled) or one past the agent's
// Timeout cancels the remote task, best-effort; a worker that stops does
// not, so its retry finds the task running.
func (a *Activities) RunRemoteAgent(ctx context.Context, in RemoteInput) (RemoteResult, error) {
	r, ok := a.remotes[in.Remote]
	if !ok {
		return remoteFailed("", fmt.Sprintf("this worker has no remote agent %q", in.Remote)), nil
	}
	failures := previousFailures(ctx, 0)
	stop := startHeartbeat(ctx, a.toolHeartbeat, failures)
	defer stop()
	rec, err := a.store.ClaimRemoteTask(ctx, entrystore.RemoteTask{OrgID: in.OrgID, ExecutionID: in.ExecutionID,
		ToolCallID: in.ToolCallID, ChildIndex: in.Index, RemoteAgent: in.Remote, MessageID: uuid.NewString()})
	if err != nil {
		return RemoteResult{}, storeError(err)
	}
	tctx, cancel := context.WithTimeout(ctx, r.Timeout)
	defer cancel()
	c, err := dialRemote(tctx, r)
	if err == nil {
		defer func() { _ = c.Destroy() }()
		var res RemoteResult
		if res, err = a.followRemote(tctx, c, r, &rec, in.Prompt); err == nil {
			return res, nil
		}
	}
	select {
	case <-activity.GetWorkerStopChannel(ctx):
		return RemoteResult{}, err // the next attempt re-attaches
	default:
	}
	switch {
	case ctx.Err() != nil:
		cancelRemote(c, r, rec.TaskID)
		return RemoteResult{TaskID: rec.TaskID}, ctx.Err()
	case tctx.Err() != nil:
		cancelRemote(c, r, rec.TaskID)
		return remoteFailed(rec.TaskID, fmt.Sprintf("remote agent %s did not finish within %s", r.Name, r.Timeout)), nil
	case isErrType(err, ErrTypeStoreUnavailable) || isErrType(err, ErrTypeStoreRejected):
		return RemoteResult{}, err
	}
	// The remote's own words may name internal addresses: the model reads
	// the class, the operator finds the cause in the activity's failure.
	n := failures.Add(1)
	activity.RecordHeartbeat(ctx, n)
	msg := fmt.Sprintf("remote agent %s could not be reached", r.Name)
	if n >= a.toolAttempts {
		return remoteFailed(rec.TaskID, msg), nil
	}
	return RemoteResult{}, temporal.NewApplicationErrorWithCause(msg, ErrTypeRemoteUnavailable, err)
}

// followRemote sends the prompt (unless rec has a task already) and polls
// the task until it settles.
func (a *Activities) followRemote(ctx context.Context, c *a2aclient.Client, r agentsdk.RemoteAgent, rec *entrystore.RemoteTask, prompt string) (RemoteResult, error) {
	var task *a2a.Task
	if rec.TaskID == "" {
		msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: prompt})
		msg.ID = rec.MessageID
		sent, err := c.SendMessage(ctx, &a2a.MessageSendParams{Message: msg})
		if err != nil {
			return RemoteResult{}, fmt.Errorf("message/send: %w", err)
		}
		switch v := sent.(type) {
		case *a2a.Message: // answered at once, without a task
			return RemoteResult{Result: Result{Status: string(domain.StatusCompleted), Text: partsText(v.Parts)}}, nil
		case *a2a.Task:
			if err := a.store.SetRemoteTaskID(ctx, *rec, string(v.ID)); err != nil {
				return RemoteResult{}, storeError(err)
			}
			rec.TaskID, task = string(v.ID), v
		default:
			return RemoteResult{}, fmt.Errorf("message/send answered %T", sent)
		}
	}
	for task == nil || !settled(task.Status.State) {
		if task != nil {
			t := time.NewTimer(r.PollInterval)
			select {
			case <-ctx.Done():
				t.Stop()
				return RemoteResult{}, ctx.Err()
			case <-t.C:
			}
		}
		got, err := c.GetTask(ctx, &a2a.TaskQueryParams{ID: a2a.TaskID(rec.TaskID)})
		if err != nil {
			return RemoteResult{}, fmt.Errorf("tasks/get: %w", err)
		}
		task = got
	}
	return taskResult(r.Name, task), nil
}

// settled reports whether a task in state s needs nothing more from this
// side: it ended, or it waits for input or credentials this side cannot
// give.
func settled(s a2a.TaskState) bool {
	return s.Terminal() || s == a2a.TaskStateInputRequired || s == a2a.TaskStateAuthRequired
}

// taskResult maps a settled remote task onto a child's result: its
// artifacts' text (else its status message) is the answer. A task that
// asks for input or credentials is a failed child for now: the parent's
// model cannot answer it through spawn_agents.
func taskResult(name string, t *a2a.Task) RemoteResult {
	res := RemoteResult{TaskID: string(t.ID)}
	var texts []string
	for _, art := range t.Artifacts {
		if s := partsText(art.Parts); s != "" {
			texts = append(texts, s)
		}
	}
	status := ""
	if t.Status.Message != nil {
		status = partsText(t.Status.Message.Parts)
	}
	switch t.Status.State {
	case a2a.TaskStateCompleted:
		res.Status, res.Text = string(domain.StatusCompleted), strings.Join(texts, "\n")
		if res.Text == "" {
			res.Text = status
		}
	case a2a.TaskStateCanceled:
		res.Status, res.Error = string(domain.StatusCancelled), status
	case a2a.TaskStateInputRequired, a2a.TaskStateAuthRequired:
		res.Status = string(domain.StatusFailed)
		res.Error = fmt.Sprintf("remote agent %s asked for %s, which sub-agents cannot give yet", name, t.Status.State)
		res.Text = status
	default: // failed, rejected, unknown
		res.Status, res.Error = string(domain.StatusFailed), fmt.Sprintf("remote task %s", t.Status.State)
		if status != "" {
			res.Error += ": " + status
		}
	}
	return res
}

// remoteFailed is a failed remote child's result.
func remoteFailed(taskID, msg string) RemoteResult {
	return RemoteResult{Result: Result{Status: string(domain.StatusFailed), Error: msg}, TaskID: taskID}
}

// partsText is the text of a message's or artifact's text parts.
func partsText(parts a2a.ContentParts) string {
	var texts []string
	for _, p := range parts {
		switch v := p.(type) {
		case a2a.TextPart:
			texts = append(texts, v.Text)
		case *a2a.TextPart:
			texts = append(texts, v.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// cancelRemote asks the remote to cancel the task, best-effort: the
// call's own context has ended, so it gets a request's time of its own.
func cancelRemote(c *a2aclient.Client, r agentsdk.RemoteAgent, taskID string) {
	if c == nil || taskID == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.RequestTimeout)
	defer cancel()
	_, _ = c.CancelTask(ctx, &a2a.TaskIDParams{ID: a2a.TaskID(taskID)})
}
