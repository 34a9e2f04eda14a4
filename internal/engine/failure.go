package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/agentree/agentree/agentsdk"
)

// ErrStoreUnavailable marks a store that could not be reached (as opposed
// to one that answered no). Steps and store operations that fail with it
// are retried until the store is back; it never counts as a model or tool
// failure and never triggers a fallback.
var ErrStoreUnavailable = errors.New("store unavailable")

// Verdict is what one failed attempt of a step means.
type Verdict int

// The verdicts.
const (
	// Retry: infrastructure (the store out of reach, cancellation
	// plumbing): try again, uncounted, without limit.
	Retry Verdict = iota + 1
	// RetryCounted: a counted model or tool failure: try again after
	// Failure.Delay.
	RetryCounted
	// Exhausted: the counted failures used up the attempts. For a model,
	// the engine falls back to the next one.
	Exhausted
	// Final: retrying cannot help (bad input, a non-retryable model
	// error, a store that said no).
	Final
)

// Failure classifies a failed step attempt for a runtime's retry policy.
type Failure struct {
	Verdict Verdict
	// Failures is the count of counted failures, this one included.
	Failures int32
	// Delay is the wait before the next attempt (RetryCounted).
	Delay time.Duration
	// Message describes the failure for the caller (Exhausted says how
	// many times).
	Message string
}

// ClassifyModel classifies a model step's error after `failures` earlier
// counted failures, with `attempts` allowed per model.
func ClassifyModel(ctx context.Context, err error, model agentsdk.ModelRef, failures, attempts int32) Failure {
	me, ok := agentsdk.AsModelError(err)
	if !ok || errors.Is(ctx.Err(), context.Canceled) {
		return ClassifyStore(err, failures)
	}
	if !me.Retryable {
		return Failure{Verdict: Final, Failures: failures, Message: me.Error()}
	}
	n := failures + 1
	if n >= attempts {
		return Failure{Verdict: Exhausted, Failures: n, Message: errAttempts(model.Key(), n, me)}
	}
	delay := me.RetryAfter
	if delay <= 0 {
		delay = Backoff(n)
	}
	return Failure{Verdict: RetryCounted, Failures: n, Delay: delay, Message: me.Error()}
}

// ClassifyTool classifies a tool step's error: a tool's Retryable error
// counts until `attempts`; anything else is the store's.
func ClassifyTool(ctx context.Context, err error, toolCallID string, failures, attempts int32) Failure {
	if !agentsdk.IsRetryable(err) || ctx.Err() != nil {
		return ClassifyStore(err, failures)
	}
	n := failures + 1
	if n >= attempts {
		return Failure{Verdict: Exhausted, Failures: n, Message: errAttempts("tool call "+toolCallID, n, err)}
	}
	return Failure{Verdict: RetryCounted, Failures: n, Delay: Backoff(n), Message: err.Error()}
}

// ClassifyStore classifies an error that is not a model's or a tool's:
// an unreachable store is retried, anything else is final.
func ClassifyStore(err error, failures int32) Failure {
	if errors.Is(err, ErrStoreUnavailable) && !errors.Is(err, agentsdk.ErrInvalidInput) {
		return Failure{Verdict: Retry, Failures: failures, Message: err.Error()}
	}
	return Failure{Verdict: Final, Failures: failures, Message: err.Error()}
}

// Backoff is the wait before retrying after the nth counted failure: 1 s,
// doubling, at most 30 s.
func Backoff(n int32) time.Duration {
	d := time.Duration(float64(time.Second) * math.Pow(2, float64(n-1)))
	return min(d, 30*time.Second)
}

func errAttempts(what string, n int32, err error) string {
	return fmt.Sprintf("%s failed %d times: %v", what, n, err)
}
