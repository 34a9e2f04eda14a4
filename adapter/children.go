package adapter

import (
	"errors"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agentree/agentree/adapter/client"
	"github.com/agentree/agentree/internal/domain"
	"github.com/agentree/agentree/internal/engine"
)

// RunChildren starts each child as a child workflow of this run — its row
// and first entry written by PrepareExecution under the ID the plan
// derived from the call, so a replay or a retry never starts one twice —
// and waits for all of them, or for the first to end (the others are then
// cancelled). A child that fails or is cancelled is an outcome, not an
// error: the parent's model reads it. Cancelling the parent cancels them
// (ParentClosePolicy REQUEST_CANCEL, and the cancelled wait).
func (p *temporalPort) RunChildren(orgID, parentID string, children []engine.ChildStart, first bool) ([]engine.ChildOutcome, error) {
	kind := workflow.GetInfo(p.ctx).WorkflowType.Name
	p.showRunning()
	cctx, cancel := workflow.WithCancel(p.ctx)
	defer cancel()
	futures := make([]workflow.Future, len(children))
	for i, c := range children {
		if c.Remote != "" {
			futures[i] = p.startRemote(cctx, orgID, parentID, c)
			continue
		}
		f, _, err := StartChildAgent(cctx, client.StartRequest{
			OrgID: orgID, ExecutionID: c.ExecutionID, Kind: kind, ParentID: parentID, Config: c.Config, UserPrompt: c.Prompt,
			ResumedFrom: c.ResumedFrom, ResumeLeafID: c.ResumeLeafID, StepCount: c.StepCount,
		})
		if err != nil {
			return nil, err
		}
		futures[i] = f
	}
	outs := make([]engine.ChildOutcome, len(children))
	done := make([]bool, len(children))
	sel := workflow.NewSelector(p.ctx)
	for i, f := range futures {
		sel.AddFuture(f, func(workflow.Future) {
			outs[i], done[i] = childOutcome(p.ctx, f, children[i]), true
		})
	}
	for n := 0; n < len(futures); n++ {
		sel.Select(p.ctx)
		if p.ctx.Err() != nil {
			return nil, p.ctx.Err()
		}
		if first {
			break
		}
	}
	if first {
		cancel()
		for i, f := range futures {
			if !done[i] {
				outs[i] = childOutcome(p.ctx, f, children[i])
			}
		}
	}
	return outs, nil
}

// childOutcome waits for a child's end (a child workflow's, or a remote
// child's activity's) and says how it went.
func childOutcome(ctx workflow.Context, f workflow.Future, c engine.ChildStart) engine.ChildOutcome {
	out := engine.ChildOutcome{ExecutionID: c.ExecutionID, Name: c.Name, Remote: c.Remote}
	var res RemoteResult
	err := f.Get(ctx, &res)
	var app *temporal.ApplicationError
	var canceled *temporal.CanceledError
	switch {
	case err == nil:
	case errors.As(err, &app) && app.HasDetails() && app.Details(&res.Result) == nil:
	case errors.As(err, &canceled):
		res.Status = string(domain.StatusCancelled)
	default:
		res.Status, res.Error = string(domain.StatusFailed), err.Error()
	}
	out.Status, out.StopReason, out.Text, out.Error, out.Usage = res.Status, res.StopReason, res.Text, res.Error, res.Usage
	out.RemoteTaskID = res.TaskID
	return out
}
