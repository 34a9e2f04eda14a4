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

// FloorInput asks for Calls no-op activities, one after another.
type FloorInput struct {
	PlanID string
	Calls  int
}

// NoopInput names one no-op activity call.
type NoopInput struct {
	PlanID string
	Step   int
}

// FloorWorkflow runs no-op activities in sequence: the time between their
// starts is the least any workflow step costs on this server and worker.
func FloorWorkflow(ctx workflow.Context, in FloorInput) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
	for i := range in.Calls {
		if err := workflow.ExecuteActivity(ctx, NoopActivity, NoopInput{PlanID: in.PlanID, Step: i}).Get(ctx, nil); err != nil {
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
