package adapter

import (
	"context"
	"errors"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"go.temporal.io/sdk/temporal"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/internal/engine"
)

// Error types a workflow sees for activity failures. Only ErrTypeModel and
// ErrTypeTool failures count against Options.ModelAttempts and ToolAttempts;
// ErrTypeStoreUnavailable is retried until the store is back.
const (
	// ErrTypeInvalidInput: bad input; fails at once.
	ErrTypeInvalidInput = "AgentreeInvalidInput"
	// ErrTypeModel: a model error. Retryable ones are retried until
	// ModelAttempts; a non-retryable one (a bad request) fails at once and
	// does not fall back, as it would fail the same on any model.
	ErrTypeModel = "AgentreeModelError"
	// ErrTypeModelExhausted: a model that kept failing with retryable
	// errors for ModelAttempts attempts; the next model is tried.
	ErrTypeModelExhausted = "AgentreeModelExhausted"
	// ErrTypeTool: a tool's Retryable error, retried until ToolAttempts;
	// the last becomes an error tool result (step.GiveUpTool), never the
	// execution's failure.
	ErrTypeTool = "AgentreeToolError"
	// ErrTypeStoreUnavailable: Postgres could not be reached (refused,
	// reset, timed out, shutting down). Never counted, never a fallback.
	ErrTypeStoreUnavailable = "AgentreeStoreUnavailable"
	// ErrTypeStoreRejected: the store answered no (a missing row, a
	// conflict, a bad value): retrying cannot help.
	ErrTypeStoreRejected = "AgentreeStoreRejected"
	// ErrTypeCancelRequested: a call run as a local activity stopped
	// because a client asked to cancel its execution (cancelWatch).
	ErrTypeCancelRequested = "AgentreeCancelRequested"
)

// storeUnavailable reports whether err is the store being out of reach
// rather than the store saying no: a refused, reset or closed connection,
// a dial or read timeout, and the Postgres answers that mean "not now"
// (connection exceptions, shutdown, too many connections, serialization
// failures and deadlocks). Anything else — a missing row, a bad value, a
// bug — is not, and fails the call instead of retrying forever.
func storeUnavailable(err error) bool {
	if entrystore.Unreachable(err) || errors.Is(err, engine.ErrStoreUnavailable) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	// A transaction rolled back by a serialization failure or deadlock
	// (class 40) succeeds when tried again: a workflow write may retry it
	// though a gateway request would not.
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && strings.HasPrefix(pgErr.Code, "40")
}

// storeError turns a store failure into the application error the retry
// policy acts on: unavailable is retried without limit, anything else
// fails the call at once.
func storeError(err error) error {
	if err == nil || errors.Is(err, context.Canceled) {
		return err
	}
	if errors.Is(err, agentsdk.ErrInvalidInput) {
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeInvalidInput, err)
	}
	if storeUnavailable(err) {
		return temporal.NewApplicationErrorWithCause(err.Error(), ErrTypeStoreUnavailable, err)
	}
	return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeStoreRejected, err)
}

// isErrType reports whether err is an application error of type typ.
func isErrType(err error, typ string) bool {
	var appErr *temporal.ApplicationError
	return errors.As(err, &appErr) && appErr.Type() == typ
}
