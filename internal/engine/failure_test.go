package engine_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/internal/engine"
)

func TestClassifyModel(t *testing.T) {
	ctx := context.Background()
	m := agentsdk.ModelRef{Provider: "p", ModelID: "m"}
	overloaded := &agentsdk.ModelError{Provider: "p", StatusCode: 529, Message: "overloaded", Retryable: true}

	f := engine.ClassifyModel(ctx, overloaded, m, 0, 3)
	require.Equal(t, engine.RetryCounted, f.Verdict)
	require.Equal(t, int32(1), f.Failures)
	require.Equal(t, time.Second, f.Delay)

	f = engine.ClassifyModel(ctx, &agentsdk.ModelError{Retryable: true, RetryAfter: 7 * time.Second}, m, 1, 3)
	require.Equal(t, 7*time.Second, f.Delay, "the server's Retry-After wins")

	f = engine.ClassifyModel(ctx, overloaded, m, 2, 3)
	require.Equal(t, engine.Exhausted, f.Verdict)
	require.Contains(t, f.Message, "p/m failed 3 times")

	f = engine.ClassifyModel(ctx, &agentsdk.ModelError{StatusCode: 400, Message: "bad"}, m, 0, 3)
	require.Equal(t, engine.Final, f.Verdict, "a bad request fails the same on every model")

	// Not a model's failure: the store's, never counted.
	down := fmt.Errorf("path: %w", engine.ErrStoreUnavailable)
	f = engine.ClassifyModel(ctx, down, m, 2, 3)
	require.Equal(t, engine.Retry, f.Verdict)
	require.Equal(t, int32(2), f.Failures)
	require.Equal(t, engine.Final, engine.ClassifyModel(ctx, errors.New("no such row"), m, 0, 3).Verdict)
}

func TestClassifyTool(t *testing.T) {
	ctx := context.Background()
	flaky := agentsdk.Retryable(errors.New("flaky"))
	require.Equal(t, engine.RetryCounted, engine.ClassifyTool(ctx, flaky, "c", 0, 2).Verdict)
	require.Equal(t, engine.Exhausted, engine.ClassifyTool(ctx, flaky, "c", 1, 2).Verdict)
	require.Equal(t, engine.Retry, engine.ClassifyTool(ctx, engine.ErrStoreUnavailable, "c", 1, 2).Verdict)
	bad := fmt.Errorf("%w: %w", agentsdk.ErrInvalidInput, engine.ErrStoreUnavailable)
	require.Equal(t, engine.Final, engine.ClassifyStore(bad, 0).Verdict, "bad input is never retried")
}

func TestBackoffDoublesToThirtySeconds(t *testing.T) {
	require.Equal(t, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 30 * time.Second},
		[]time.Duration{engine.Backoff(1), engine.Backoff(2), engine.Backoff(3), engine.Backoff(9)})
}
