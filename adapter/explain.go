package adapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agentree/agentree/adapter/client"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/step"
)

// ExplainActivity is the activity that makes an explanation: the one
// model call, and the row's update with its text and record.
const ExplainActivity = "agentree.ExplainRun"

// Explanations are made by a workflow of their own (not an agent's
// segment) so that the model call runs on a worker, which has the model
// endpoints and their keys, outlives the gateway that asked for it and is
// retried there; its record goes on the explanation's row, where the
// usage queries count it (migration 0027).
const (
	// explainSystem frames the call; the row's prompt (the gateway's
	// replay of the execution) says what to answer.
	explainSystem = "You explain an AI agent's execution to the engineer debugging it. Be concrete, cite step numbers, and say only what the replay shows."
	// explainMaxTokens bounds an explanation's length.
	explainMaxTokens = 2048
)

// ExplainResult is what the explain workflow and activity return: the
// explanation's status once they are done.
type ExplainResult struct {
	Status string `json:"status"`
}

// explainWorkflow is the client.ExplainWorkflow: it makes the explanation in names: its activity, tried
// o.ModelAttempts times on the model's retryable failures, and without
// limit while the store is unreachable.
func (o *Options) explainWorkflow(ctx workflow.Context, in client.ExplainInput) (ExplainResult, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: o.ModelTimeout + time.Minute, ScheduleToCloseTimeout: o.OutageLimit, RetryPolicy: infraRetry(),
	})
	var out ExplainResult
	err := workflow.ExecuteActivity(actx, ExplainActivity, in).Get(ctx, &out)
	return out, err
}

// Explain makes one explanation: a pending row's prompt sent to its model,
// the answer and the call's record written back. A row no longer pending
// (a retry after the first attempt wrote it) is left as it is. The model's
// failures are counted against the worker's model attempts; the last, or
// one not worth retrying, fails the explanation with the model's reason.
func (a *Activities) Explain(ctx context.Context, in client.ExplainInput) (ExplainResult, error) {
	x, err := a.store.GetExplanation(ctx, in.OrgID, in.ExplanationID)
	if errors.Is(err, entrystore.ErrNotFound) {
		// Its execution was pruned or deleted: nothing to explain.
		return ExplainResult{}, temporal.NewNonRetryableApplicationError("explanation "+in.ExplanationID+" is gone", ErrTypeStoreRejected, err)
	}
	if err != nil {
		return ExplainResult{}, storeError(fmt.Errorf("explain: read: %w", err))
	}
	if x.Status != entrystore.ExplanationPending {
		return ExplainResult{Status: x.Status}, nil
	}
	if a.deps.Gate != nil {
		// The organization's daily quota bounds explanations as it
		// bounds its agents' calls.
		if _, err := a.deps.Gate(ctx, x.OrgID, x.ExecutionID, ""); errors.Is(err, agentsdk.ErrBudgetSpent) {
			return a.failExplanation(ctx, x, err.Error())
		} else if err != nil {
			return ExplainResult{}, storeError(fmt.Errorf("explain: budget: %w", err))
		}
	}
	var model agentsdk.ModelRef
	if err := json.Unmarshal(x.Model, &model); err != nil {
		return a.failExplanation(ctx, x, "the explanation's model is unreadable")
	}
	provider, err := a.deps.Endpoints.Resolve(model)
	if err != nil {
		return a.failExplanation(ctx, x, "the explain model is not served by this worker: "+err.Error())
	}
	ctx, cancel := context.WithTimeout(ctx, a.modelTimeout)
	defer cancel()
	start := time.Now()
	resp, err := provider.Stream(ctx, agentsdk.ModelRequest{
		Model: model, System: explainSystem, MaxTokens: explainMaxTokens,
		Messages: []agentsdk.Message{agentsdk.TextMessage(agentsdk.RoleUser, x.Prompt)},
	}, func(agentsdk.StreamEvent) {})
	if err != nil {
		var me *agentsdk.ModelError
		if errors.As(err, &me) && me.Retryable && activity.GetInfo(ctx).Attempt < a.modelAttempts {
			return ExplainResult{}, err
		}
		return a.failExplanation(ctx, x, "the explain model failed: "+err.Error())
	}
	usage := agentsdk.Usage{}
	if resp.Message.Usage != nil {
		usage = *resp.Message.Usage
	}
	record, err := json.Marshal(step.LLMCallMeta{
		Model: model, Usage: usage, Cost: usage.Cost, LatencyMs: time.Since(start).Milliseconds(),
		StopReason: resp.Message.StopReason, Purpose: PurposeExplanation,
	})
	if err != nil {
		return ExplainResult{}, fmt.Errorf("explain: record: %w", err)
	}
	if _, err := a.store.CompleteExplanation(ctx, x.OrgID, x.ID, strings.TrimSpace(resp.Message.Text()), record); err != nil {
		return ExplainResult{}, storeError(fmt.Errorf("explain: write: %w", err))
	}
	return ExplainResult{Status: entrystore.ExplanationCompleted}, nil
}

// PurposeExplanation marks an explanation's call record, as
// step.PurposeCompaction marks a compaction's.
const PurposeExplanation = "explanation"

// failExplanation records why x could not be made.
func (a *Activities) failExplanation(ctx context.Context, x entrystore.Explanation, reason string) (ExplainResult, error) {
	if _, err := a.store.FailExplanation(ctx, x.OrgID, x.ID, reason); err != nil {
		return ExplainResult{}, storeError(fmt.Errorf("explain: write failure: %w", err))
	}
	return ExplainResult{Status: entrystore.ExplanationFailed}, nil
}
