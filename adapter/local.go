package adapter

import (
	"context"
	"encoding/json"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/internal/domain"
	"github.com/agentree/agentree/internal/engine"
	"github.com/agentree/agentree/internal/step"
)

// The store operations' inputs and outputs are the engine's.
type (
	BeginInput      = engine.BeginInput
	BeginOutput     = engine.BeginOutput
	AppendInput     = engine.AppendInput
	ConsumeInput    = engine.ConsumeInput
	CheckpointInput = engine.CheckpointInput
	FinishInput     = engine.FinishInput
	FinishOutput    = engine.FinishOutput
	PublishInput    = engine.PublishInput
)

// localOps are the engine's store operations as local activities: no
// task-queue round trip, recorded as markers, repeat-safe. Each turns a
// store failure into the error the retry policy acts on (storeError).
// Their names are the local-activity types recorded in histories: keep
// them.
type localOps struct {
	ops *engine.Ops
	// ended is Options.ExecutionEnded.
	ended func(ctx context.Context, orgID, executionID string)
}

func (l localOps) Begin(ctx context.Context, in engine.BeginInput) (engine.BeginOutput, error) {
	out, err := l.ops.Begin(ctx, in)
	return out, storeError(err)
}

func (l localOps) Append(ctx context.Context, in engine.AppendInput) (agentsdk.EntryRef, error) {
	out, err := l.ops.Append(ctx, in)
	return out, storeError(err)
}

func (l localOps) ConsumeSignal(ctx context.Context, in engine.ConsumeInput) (engine.ConsumeOutput, error) {
	out, err := l.ops.ConsumeSignal(ctx, in)
	return out, storeError(err)
}

func (l localOps) SignalValue(ctx context.Context, in engine.SignalValueInput) (json.RawMessage, error) {
	out, err := l.ops.SignalValue(ctx, in)
	return out, storeError(err)
}

func (l localOps) Checkpoint(ctx context.Context, in engine.CheckpointInput) error {
	return storeError(l.ops.Checkpoint(ctx, in))
}

func (l localOps) Finish(ctx context.Context, in engine.FinishInput) (engine.FinishOutput, error) {
	out, err := l.ops.Finish(ctx, in)
	// Paused is terminal but may resume: its files stay.
	if err == nil && len(out.Pending) == 0 && l.ended != nil &&
		(in.Status == domain.StatusCompleted || in.Status == domain.StatusFailed || in.Status == domain.StatusCancelled) {
		l.ended(ctx, in.OrgID, in.ExecutionID)
	}
	return out, storeError(err)
}

func (l localOps) Publish(ctx context.Context, in engine.PublishInput) error {
	return storeError(l.ops.Publish(ctx, in))
}

func (l localOps) Entry(ctx context.Context, in engine.EntryInput) (agentsdk.EntryRef, error) {
	out, err := l.ops.Entry(ctx, in)
	return out, storeError(err)
}

func (l localOps) AppendToolResults(ctx context.Context, in step.AppendResultsInput) ([]agentsdk.ToolResult, error) {
	out, err := l.ops.AppendToolResults(ctx, in)
	return out, storeError(err)
}

func (l localOps) RequestApproval(ctx context.Context, in engine.ApprovalInput) (engine.ApprovalOutput, error) {
	out, err := l.ops.RequestApproval(ctx, in)
	return out, storeError(err)
}

func (l localOps) ExpireApprovals(ctx context.Context, in engine.ExpireInput) (engine.ExpireOutput, error) {
	out, err := l.ops.ExpireApprovals(ctx, in)
	return out, storeError(err)
}

func (l localOps) Decisions(ctx context.Context, in engine.DecisionsInput) ([]agentsdk.DecisionRef, error) {
	out, err := l.ops.Decisions(ctx, in)
	return out, storeError(err)
}

func (l localOps) ApplyDecision(ctx context.Context, in engine.DecideInput) (agentsdk.EntryRef, error) {
	out, err := l.ops.ApplyDecision(ctx, in)
	return out, storeError(err)
}

func (l localOps) RejectCall(ctx context.Context, in engine.RejectInput) (agentsdk.ToolResult, error) {
	out, err := l.ops.RejectCall(ctx, in)
	return out, storeError(err)
}

func (l localOps) PlanSpawn(ctx context.Context, in engine.SpawnInput) (engine.SpawnPlan, error) {
	out, err := l.ops.PlanSpawn(ctx, in)
	return out, storeError(err)
}

func (l localOps) AnswerSpawn(ctx context.Context, in engine.AnswerInput) (agentsdk.ToolResult, error) {
	out, err := l.ops.AnswerSpawn(ctx, in)
	return out, storeError(err)
}

func (l localOps) PlanSleep(ctx context.Context, in engine.SleepInput) (engine.SleepPlan, error) {
	out, err := l.ops.PlanSleep(ctx, in)
	return out, storeError(err)
}

func (l localOps) ClientResults(ctx context.Context, in engine.ClientResultsInput) (engine.ClientResultsOutput, error) {
	out, err := l.ops.ClientResults(ctx, in)
	return out, storeError(err)
}

func (l localOps) RestoreWorkspace(ctx context.Context, in engine.RestoreWorkspaceInput) error {
	return storeError(l.ops.RestoreWorkspace(ctx, in))
}

// fn is the local activity function of op.
func (l localOps) fn(op engine.Op) any {
	switch op {
	case engine.OpBegin:
		return l.Begin
	case engine.OpAppend:
		return l.Append
	case engine.OpConsumeSignal:
		return l.ConsumeSignal
	case engine.OpSignalValue:
		return l.SignalValue
	case engine.OpCheckpoint:
		return l.Checkpoint
	case engine.OpFinish:
		return l.Finish
	case engine.OpPublish:
		return l.Publish
	case engine.OpEntry:
		return l.Entry
	case engine.OpToolResults:
		return l.AppendToolResults
	case engine.OpRequestApproval:
		return l.RequestApproval
	case engine.OpDecisions:
		return l.Decisions
	case engine.OpExpireApprovals:
		return l.ExpireApprovals
	case engine.OpApplyDecision:
		return l.ApplyDecision
	case engine.OpRejectCall:
		return l.RejectCall
	case engine.OpPlanSpawn:
		return l.PlanSpawn
	case engine.OpAnswerSpawn:
		return l.AnswerSpawn
	case engine.OpPlanSleep:
		return l.PlanSleep
	case engine.OpClientResults:
		return l.ClientResults
	case engine.OpRestoreWorkspace:
		return l.RestoreWorkspace
	}
	panic("adapter: unknown store operation " + string(op))
}
