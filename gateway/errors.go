package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/agentree/agentree/adapter/client"
	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/entrystore"
)

// errorBody is every error response: a stable code and a message for
// people (agentreev1.Error in the OpenAPI document).
type errorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// httpStatus maps a gRPC code to the HTTP status and the error body's code.
func httpStatus(c codes.Code) (int, string) {
	switch c {
	case codes.InvalidArgument, codes.OutOfRange:
		return http.StatusBadRequest, "invalid_argument"
	case codes.Unauthenticated:
		return http.StatusUnauthorized, "unauthenticated"
	case codes.PermissionDenied:
		return http.StatusForbidden, "permission_denied"
	case codes.NotFound:
		return http.StatusNotFound, "not_found"
	case codes.AlreadyExists, codes.FailedPrecondition, codes.Aborted:
		return http.StatusConflict, "conflict"
	case codes.ResourceExhausted:
		return http.StatusRequestEntityTooLarge, "payload_too_large"
	case codes.Unimplemented:
		return http.StatusNotImplemented, "unimplemented"
	case codes.Canceled:
		return 499, "cancelled"
	case codes.DeadlineExceeded:
		return http.StatusGatewayTimeout, "deadline_exceeded"
	case codes.Unavailable:
		return http.StatusServiceUnavailable, "unavailable"
	}
	return http.StatusInternalServerError, "internal"
}

// retryAfter is the Retry-After of a 503, in seconds: about how long a
// Postgres restart or failover takes.
const retryAfter = "5"

// errUnavailable is the answer while the store cannot be reached: the
// client did nothing wrong and should retry.
var errUnavailable = status.Error(codes.Unavailable, "the store is unreachable; retry shortly")

// msgUnreachable is the log message of a store outage; throttleHandler
// lets one through per interval, not one per request.
const msgUnreachable = "gateway: the store is unreachable"

// errTemporalUnavailable is the answer while Temporal cannot take a
// request (down, restarting, its own persistence failing over): the
// client did nothing wrong and should retry. Temporal's own message is
// logged, never shown: it may name internal addresses.
var errTemporalUnavailable = status.Error(codes.Unavailable, "the workflow service is unavailable; retry shortly")

// msgTemporalUnreachable is the log message of a Temporal outage,
// throttled like msgUnreachable.
const msgTemporalUnreachable = "gateway: Temporal is unavailable"

// temporalUnavailable reports whether err is the Temporal service failing
// for now: its client's errors (go.temporal.io/api/serviceerror) carry a
// gRPC status but are not gRPC status errors, so they would otherwise
// fall through to a 500. Unavailable, a deadline its retries ran out
// against, its rate limits, and its internal errors (a persistence write
// that failed) are all a 503 to the client.
func temporalUnavailable(err error) bool {
	var se interface{ Status() *status.Status }
	if !errors.As(err, &se) || se.Status() == nil {
		return false
	}
	switch se.Status().Code() {
	case codes.Unavailable, codes.DeadlineExceeded, codes.ResourceExhausted, codes.Internal, codes.Unknown, codes.Aborted:
		return true
	}
	return false
}

// writeError writes an error body with its status.
func writeError(w http.ResponseWriter, code int, kind, msg string) {
	if code == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", retryAfter)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(errorBody{Code: kind, Message: msg})
}

// writeStatus writes err, a gRPC status error, as an HTTP error.
func writeStatus(w http.ResponseWriter, err error) {
	s := status.Convert(err)
	if writeQuotaRefused(w, s) {
		return
	}
	code, kind := httpStatus(s.Code())
	writeError(w, code, kind, s.Message())
}

// errorHandler is grpc-gateway's error handler: every error, including the
// mux's own decoding errors, becomes {code, message}.
func errorHandler(_ context.Context, _ *runtime.ServeMux, _ runtime.Marshaler, w http.ResponseWriter, _ *http.Request, err error) {
	writeStatus(w, pathParamError(err))
}

// pathParamError rewords grpc-gateway's own error for a path parameter
// that does not parse ("type mismatch, parameter: sequence, error:
// strconv.ParseInt: …"), which names Go internals.
func pathParamError(err error) error {
	s := status.Convert(err)
	rest, ok := strings.CutPrefix(s.Message(), "type mismatch, parameter: ")
	if s.Code() != codes.InvalidArgument || !ok {
		return err
	}
	name, _, _ := strings.Cut(rest, ",")
	return invalid("the path parameter %s must be a whole number", name)
}

// routingErrorHandler answers unknown routes and methods.
func routingErrorHandler(_ context.Context, _ *runtime.ServeMux, _ runtime.Marshaler, w http.ResponseWriter, r *http.Request, code int) {
	switch code {
	case http.StatusMethodNotAllowed:
		writeError(w, code, "method_not_allowed", fmt.Sprintf("%s is not allowed on %s", r.Method, r.URL.Path))
	case http.StatusNotFound:
		writeError(w, code, "not_found", fmt.Sprintf("no route %s", r.URL.Path))
	default:
		writeError(w, http.StatusBadRequest, "invalid_argument", http.StatusText(code))
	}
}

// invalid is a 400 with a message.
func invalid(format string, args ...any) error {
	return status.Errorf(codes.InvalidArgument, format, args...)
}

// toStatus maps an error from the store or the adapter onto a gRPC status,
// so bad input never becomes a 500. Unexpected errors are logged and
// answered with a generic message: their text may name internals.
func toStatus(log *slog.Logger, op string, err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	var qe *entrystore.QuotaError
	switch {
	case errors.As(err, &qe):
		return quotaStatus(qe)
	case errors.Is(err, entrystore.ErrNotFound):
		return status.Error(codes.NotFound, "not found")
	case errors.Is(err, entrystore.ErrInvalid), errors.Is(err, agentsdk.ErrInvalidInput):
		return status.Error(codes.InvalidArgument, strings.ReplaceAll(err.Error(), "entrystore: ", ""))
	case errors.Is(err, client.ErrWorkerUnavailable):
		return status.Error(codes.Unavailable, err.Error())
	case errors.Is(err, client.ErrTerminal):
		return status.Error(codes.FailedPrecondition, "the execution has ended")
	case errors.Is(err, entrystore.ErrConflict):
		return status.Error(codes.FailedPrecondition, strings.ReplaceAll(err.Error(), "entrystore: ", ""))
	case entrystore.Unreachable(err):
		log.Error(msgUnreachable, "op", op, "err", err)
		return errUnavailable
	case temporalUnavailable(err):
		log.Error(msgTemporalUnreachable, "op", op, "err", err)
		return errTemporalUnavailable
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, "request cancelled")
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, "deadline exceeded")
	}
	log.Error("gateway: "+op, "err", err)
	return status.Errorf(codes.Internal, "%s failed", op)
}
