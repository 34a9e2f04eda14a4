package main

import (
	"context"
	"time"

	"go.temporal.io/sdk/workflow"
)

// The floor's workflow and activity names.
const (
	FloorWorkflowName = "bench.Floor"
	NoopActivity      = "bench.Noop"
)

// FloorInput asks for Calls no-op activities, one after another: local
// activities when Local.
type FloorInput struct {
	PlanID string
	Calls  int
	Local  bool
}

// NoopInput names one no-op activity call.
type NoopInput struct {
	PlanID string
	Step   int
}

// FloorWorkflow runs no-op activities in sequence: the time between their
// starts is the least a workflow step of that kind costs on this server
// and worker. Chained local activities run in one workflow task (but for
// its heartbeats): their floor is the worker's, the server's part
// shared by all of them.
func FloorWorkflow(ctx workflow.Context, in FloorInput) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
	ctx = workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{StartToCloseTimeout: time.Minute})
	for i := range in.Calls {
		noop := NoopInput{PlanID: in.PlanID, Step: i}
		var f workflow.Future
		if in.Local {
			f = workflow.ExecuteLocalActivity(ctx, NoopActivity, noop)
		} else {
			f = workflow.ExecuteActivity(ctx, NoopActivity, noop)
		}
		if err := f.Get(ctx, nil); err != nil {
			return err
		}
	}
	return nil
}

// floorActivities hold the no-op activity's recorder.
type floorActivities struct{ rec recorder }

// Noop records when it ran and does nothing else.
func (a *floorActivities) Noop(_ context.Context, in NoopInput) error {
	a.rec(in.PlanID, in.Step, time.Now())
	return nil
}
