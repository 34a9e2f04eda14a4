package gateway_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk/event"
	"github.com/agentree/agentree/entrystore"
)

// newRow creates an execution row in org A with no workflow behind it: the
// test plays the worker by appending stream events itself.
func (e *env) newRow() string {
	e.t.Helper()
	ex, err := e.es.CreateExecution(context.Background(), entrystore.Execution{OrgID: e.orgA.ID, Kind: "react-agent"})
	require.NoError(e.t, err)
	return ex.ID
}

// publish appends n events of that name, each with its typed payload (a
// token's text is its index).
func (e *env) publish(id, name string, n int) {
	e.t.Helper()
	for i := range n {
		var ev event.Event
		switch name {
		case event.NameToken:
			ev = event.Token{AgentExecutionID: id, TaskExecutionID: "m1", Data: strconv.Itoa(i)}
		case event.NameCompleted:
			ev = event.Completed{AgentExecutionID: id, Status: "COMPLETED", StopReason: "end_turn"}
		default:
			e.t.Fatalf("publish: no sample payload for %s", name)
		}
		data, err := json.Marshal(ev)
		require.NoError(e.t, err)
		_, err = e.es.AppendStreamEvent(context.Background(), e.orgA.ID, id, name, data)
		require.NoError(e.t, err)
	}
}

// read takes n events from s.
func read(t testing.TB, s *sseStream, n int) []sseEvent {
	t.Helper()
	out := make([]sseEvent, 0, n)
	for range n {
		ev, ok := s.next(t, 30*time.Second)
		require.True(t, ok, "the stream ended early")
		out = append(out, ev)
	}
	return out
}

// TestStreamSurvivesListenerLoss kills the gateway's LISTEN connection
// mid-stream: the hub reconnects, and the events published while it was
// down arrive anyway, in order, none twice.
func TestStreamSurvivesListenerLoss(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.newRow()
	s := e.openStream(t, e.keyA, e.execPath(e.orgA, id)+"/stream/consolidated", "")
	e.publish(id, "token", 3)
	got := read(t, s, 3)

	killed := int64(0)
	poll(t, 10*time.Second, func() bool {
		require.NoError(t, e.es.Pool().QueryRow(context.Background(), `
			SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
			WHERE application_name = $1 AND query ILIKE 'LISTEN%'`, e.gwApp).Scan(&killed))
		return killed == 1
	}, "no LISTEN connection of the gateway to kill")
	e.publish(id, "token", 5)
	got = append(got, read(t, s, 5)...)
	e.publish(id, "token", 2)
	e.publish(id, "agent.completed", 1)
	got = append(got, s.rest(t, 30*time.Second)...)

	require.Len(t, got, 11)
	ids := make([]int64, len(got))
	for i, ev := range got {
		ids[i] = ev.ID
	}
	require.Equal(t, e.tableIDs(id, ids[len(ids)-1]), ids)
	require.Equal(t, "agent.completed", got[10].Event)
}

// TestStreamHeartbeatAndQuietEnd: an idle stream gets ": ping" comments,
// and one whose execution ended without a terminal event (events are best
// effort) still ends, from the execution row.
func TestStreamHeartbeatAndQuietEnd(t *testing.T) {
	e := newEnv(t, envOptions{heartbeat: 20 * time.Millisecond})
	id := e.newRow()
	s := e.openStream(t, e.keyA, e.execPath(e.orgA, id)+"/stream", "")
	poll(t, 10*time.Second, func() bool { return s.pings.Load() >= 2 }, "no heartbeat")
	_, err := e.es.Transition(context.Background(), e.orgA.ID, id, entrystore.Transition{To: entrystore.StatusFailed, Error: "worker lost"})
	require.NoError(t, err)
	require.Empty(t, s.rest(t, 10*time.Second))
}

// TestStreamResumeQueryParameter: ?lastEventId= resumes like the header,
// for clients that cannot set headers.
func TestStreamResumeQueryParameter(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.newRow()
	e.publish(id, "token", 4)
	e.publish(id, "agent.completed", 1)
	all := e.openStream(t, e.keyA, e.execPath(e.orgA, id)+"/stream/consolidated", "").rest(t, 10*time.Second)
	require.Len(t, all, 5)
	tail := e.openStream(t, e.keyA, e.execPath(e.orgA, id)+"/stream/consolidated?lastEventId="+strconv.FormatInt(all[1].ID, 10), "").rest(t, 10*time.Second)
	require.Equal(t, all[2:], tail)
	lifecycle := e.openStream(t, e.keyA, e.execPath(e.orgA, id)+"/stream", "").rest(t, 10*time.Second)
	require.Equal(t, all[4:], lifecycle)
}
