package gateway_test

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/agentree/agentree/agentsdk/event"
	pb "github.com/agentree/agentree/proto/agentree/v1"
)

// streamError checks that ev is a stream_error (not stored, so no id) and
// returns its payload.
func streamError(t testing.TB, ev sseEvent) *event.StreamError {
	t.Helper()
	require.Equal(t, event.NameStreamError, ev.Event, "%s", ev.Data)
	require.Zero(t, ev.ID, "a stream_error has no id: line")
	got, err := event.Decode(ev.Event, []byte(ev.Data))
	require.NoError(t, err)
	se := got.(*event.StreamError)
	require.NotEmpty(t, se.Message)
	return se
}

// TestStreamErrorOnShutdown: a gateway that shuts down mid-stream tells
// its SSE and gRPC clients so, and where to resume, before it closes.
func TestStreamErrorOnShutdown(t *testing.T) {
	e := newEnv(t, envOptions{noTemporal: true, grpc: true})
	id := e.newRow()
	s := e.openStream(t, e.keyA, e.execPath(e.orgA, id)+"/stream/consolidated", "")

	conn, err := grpc.NewClient(e.grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+e.keyA)
	gs, err := pb.NewAgentServiceClient(conn).StreamAgentExecution(ctx, &pb.StreamAgentExecutionRequest{Org: e.orgA.Slug, ExecutionId: id, Consolidated: true})
	require.NoError(t, err)

	e.publish(id, event.NameToken, 2)
	got := read(t, s, 2)
	for range 2 {
		msg, err := gs.Recv()
		require.NoError(t, err)
		require.NotNil(t, msg.GetToken())
	}
	last := strconv.FormatInt(got[1].ID, 10)

	e.stopGateway()
	rest := s.rest(t, 30*time.Second)
	require.Len(t, rest, 1, "one stream_error, then the end: %v", names(rest))
	se := streamError(t, rest[0])
	require.Equal(t, "shutting_down", se.Code)
	require.Equal(t, last, se.LastEventID)
	require.Positive(t, se.RetryAfterMs)

	msg, err := gs.Recv()
	require.NoError(t, err)
	require.Equal(t, event.NameStreamError, msg.GetEvent())
	require.Equal(t, "shutting_down", msg.GetStreamError().GetCode())
	require.Equal(t, last, msg.GetStreamError().GetLastEventId())
	_, err = gs.Recv()
	require.ErrorIs(t, err, io.EOF)
}

// TestStreamErrorOnStoreOutage: when Postgres becomes unreachable
// mid-stream, the client gets a stream_error (unavailable) instead of a
// silent end, and resumes from its lastEventId once the store is back,
// missing nothing.
func TestStreamErrorOnStoreOutage(t *testing.T) {
	e := newEnv(t, envOptions{noTemporal: true})
	proxy, base := gatewayBehindProxy(t, e, io.Discard, 20*time.Millisecond)
	behind := *e // the same test database, behind the proxy
	behind.base = base

	id := e.newRow()
	path := e.execPath(e.orgA, id) + "/stream/consolidated"
	s := behind.openStream(t, e.keyA, path, "")
	e.publish(id, event.NameToken, 3)
	got := read(t, s, 3)

	proxy.Cut()
	rest := s.rest(t, 30*time.Second)
	require.Len(t, rest, 1, "one stream_error, then the end: %v", names(rest))
	se := streamError(t, rest[0])
	require.Equal(t, "unavailable", se.Code)
	require.Equal(t, strconv.FormatInt(got[2].ID, 10), se.LastEventID)
	require.Positive(t, se.RetryAfterMs)

	// Published while the gateway could not read; the resume gets it.
	e.publish(id, event.NameToken, 2)
	e.publish(id, event.NameCompleted, 1)
	proxy.Restore()
	poll(t, 30*time.Second, func() bool {
		resp := behind.do(e.keyA, http.MethodGet, e.execPath(e.orgA, id), nil)
		return resp.Status == http.StatusOK
	}, "the gateway never recovered")
	again := behind.openStream(t, e.keyA, path, se.LastEventID).rest(t, 30*time.Second)
	require.Equal(t, []string{"token", "token", "agent.completed"}, names(again))
	require.Equal(t, e.tableIDs(id, again[2].ID), append(ids(got), ids(again)...))
}

func ids(evs []sseEvent) []int64 {
	out := make([]int64, len(evs))
	for i, ev := range evs {
		out[i] = ev.ID
	}
	return out
}

// TestStreamErrorPastReplayWindow: a client that resumes after events
// older than the replay window has missed them; it is told so
// (events_expired) with the point to resume from once it has reloaded the
// execution, instead of getting the newer events after a silent gap. A
// new client, or one whose stream never carried the expired events, just
// starts within the window.
func TestStreamErrorPastReplayWindow(t *testing.T) {
	e := newEnv(t, envOptions{noTemporal: true})
	id := e.newRow()
	e.publish(id, event.NameToken, 3)
	_, err := e.es.Pool().Exec(context.Background(),
		`UPDATE agent_stream_event SET created_at = now() - interval '2 hours' WHERE agent_execution_id = $1`, id)
	require.NoError(t, err)
	e.publish(id, event.NameToken, 2)
	e.publish(id, event.NameCompleted, 1)
	table := e.tableIDs(id, 1<<62)
	require.Len(t, table, 6)
	path := e.execPath(e.orgA, id) + "/stream/consolidated"

	behind := e.openStream(t, e.keyA, path, strconv.FormatInt(table[0], 10)).rest(t, 30*time.Second)
	require.Len(t, behind, 1, "%v", names(behind))
	se := streamError(t, behind[0])
	require.Equal(t, "events_expired", se.Code)
	require.Equal(t, strconv.FormatInt(table[2], 10), se.LastEventID, "resume after the newest expired event")

	resumed := e.openStream(t, e.keyA, path, se.LastEventID).rest(t, 30*time.Second)
	require.Equal(t, table[3:], ids(resumed))
	fresh := e.openStream(t, e.keyA, path, "").rest(t, 30*time.Second)
	require.Equal(t, table[3:], ids(fresh))
	lifecycle := e.openStream(t, e.keyA, e.execPath(e.orgA, id)+"/stream", strconv.FormatInt(table[0], 10)).rest(t, 30*time.Second)
	require.Equal(t, table[5:], ids(lifecycle), "the plain stream never carried the expired tokens")
}
