package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestTemporalFailuresAre503: the Temporal client's errors carry a gRPC
// status without being gRPC status errors. While Temporal is down, or its
// own Postgres fails over, a signal or a start fails with one of them; the
// client gets 503 with Retry-After and a message naming no address, never
// a 500 (chaos -failover -temporal-server saw 230 before).
func TestTemporalFailuresAre503(t *testing.T) {
	const addr = "10.1.2.3:7233"
	for _, err := range []error{
		serviceerror.NewUnavailable("connection error: dial tcp " + addr + ": connect: connection refused"),
		serviceerror.NewDeadlineExceeded("context deadline exceeded"),
		serviceerror.NewInternal("GetWorkflowExecution operation failed. Error: dial tcp " + addr),
		serviceerror.NewResourceExhausted(0, "namespace rate limit exceeded"),
	} {
		var logs bytes.Buffer
		log := slog.New(throttled(slog.NewTextHandler(&logs, nil), msgTemporalUnreachable, unreachableLogInterval))
		got := toStatus(log, "signal agent execution", fmt.Errorf("client: signal: %w", err))
		require.Equal(t, codes.Unavailable, status.Code(got), "%v", err)

		w := httptest.NewRecorder()
		writeStatus(w, got)
		require.Equal(t, http.StatusServiceUnavailable, w.Code, "%v", err)
		require.NotEmpty(t, w.Header().Get("Retry-After"))
		var body errorBody
		require.NoError(t, json.Unmarshal(w.Body.Bytes(), &body))
		require.Equal(t, "unavailable", body.Code)
		require.NotContains(t, body.Message, "10.1.2.3", "no internal address reaches the client")
		require.Contains(t, logs.String(), "signal agent execution", "the operator's log has what failed")
	}

	// A refusal is not an outage: it is not answered as one to be retried.
	for _, err := range []error{serviceerror.NewInvalidArgument("bad"), serviceerror.NewPermissionDenied("no", "")} {
		require.NotEqual(t, codes.Unavailable, status.Code(toStatus(slog.New(slog.DiscardHandler), "op", err)), "%v", err)
	}
}
