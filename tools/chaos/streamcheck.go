package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/agentree/agentree/agentsdk/event"
)

// checkStream finds stored stream events that do not decode into their
// agentsdk/event type, stream events stored twice and tool calls started
// again after they completed (checkEvents), and events stored but never
// delivered to the SSE client that followed the execution throughout (or
// delivered twice).
func checkStream(ctx context.Context, c *cluster, cv *conversation, f *findings) error {
	rows, err := c.pool.Query(ctx, `SELECT id, event, data::text FROM agent_stream_event
		WHERE agent_execution_id = $1 ORDER BY id`, cv.ExecID)
	if err != nil {
		return fmt.Errorf("chaos: check stream: %w", err)
	}
	defer rows.Close()
	var ids []int64
	var evs []storedEvent
	names := map[int64]string{}
	for rows.Next() {
		var id int64
		var name, data string
		if err := rows.Scan(&id, &name, &data); err != nil {
			return err
		}
		ids, names[id] = append(ids, id), name
		ev, err := event.Decode(name, []byte(data))
		if err != nil {
			f.Undecodable++
			f.example("%s: stream event %d does not decode into its type: %v", cv.ExecID, id, err)
			continue
		}
		evs = append(evs, storedEvent{id: id, name: name, ev: ev})
	}
	if err := rows.Err(); err != nil {
		return err
	}
	checkEvents(cv.ExecID, evs, f)
	if cv.Follower == nil {
		return nil
	}
	checkDelivery(cv.ExecID, ids, names, cv.Follower.arrivals(), f)
	return nil
}

// storedEvent is one of an execution's stored stream events, decoded.
type storedEvent struct {
	id   int64
	name string
	ev   event.Event
}

// interruptedError is the error of a tool call's task.failed when its
// context ended, as a worker's graceful stop ends it: builds before the
// interruption was told apart (step.Deps.Interrupted) announced it so.
const interruptedError = "context canceled"

// checkEvents counts, in an execution's stored stream events in order,
// lifecycle events and tool-call ends stored twice (Duplicated) and tool
// calls started again after they ended (Rerun). A task.failed that tells
// of an interrupted attempt (interruptedError) followed by the call's
// start again ends nothing: the call did not complete, its worker
// stopped (an older build, mid-deploy), and it ran again; it is counted
// as Interrupted.
func checkEvents(execID string, evs []storedEvent, f *findings) {
	seen := map[string]int{}
	ended := map[string]bool{}
	interrupted := map[string]bool{}
	for _, se := range evs {
		key := ""
		switch e := se.ev.(type) {
		case *event.Started:
			key = se.name
		case *event.Checkpoint:
			key = fmt.Sprintf("%s %d", se.name, e.Sequence)
		case *event.TaskCompleted:
			key = "task end " + e.TaskExecutionID
			ended[e.TaskExecutionID], interrupted[e.TaskExecutionID] = true, false
		case *event.TaskFailed:
			if e.Error == interruptedError {
				// An end until the call starts again.
				interrupted[e.TaskExecutionID] = true
				continue
			}
			key = "task end " + e.TaskExecutionID
			ended[e.TaskExecutionID], interrupted[e.TaskExecutionID] = true, false
		case *event.TaskStarted:
			if interrupted[e.TaskExecutionID] {
				f.Interrupted++
				interrupted[e.TaskExecutionID] = false
			}
			if ended[e.TaskExecutionID] {
				f.Rerun++
				f.example("%s: tool call %s started again (event %d) after it completed", execID, e.TaskExecutionID, se.id)
			}
		}
		if key != "" {
			seen[key]++
		}
	}
	for id, open := range interrupted {
		if open {
			// Never started again: the interruption was the call's end.
			seen["task end "+id]++
		}
	}
	for key, n := range seen {
		f.dup("stream event", n-1, "%s: stream event %q stored %d times", execID, key, n)
	}
}

// checkDelivery compares the IDs of an execution's stored stream events
// with the IDs its SSE client received, in the order it received them
// across all its connections: an ID received twice (on one connection or
// after a Last-Event-ID resume) is SSEDuplicated, one received after a
// higher one SSEOutOfOrder, a stored one never received Undelivered (its
// example names the first few by ID and event name, from names).
func checkDelivery(execID string, stored []int64, names map[int64]string, arrived []int64, f *findings) {
	received := map[int64]int{}
	var highest int64
	for _, id := range arrived {
		received[id]++
		if id < highest && received[id] == 1 {
			f.SSEOutOfOrder++
			f.example("%s: SSE event %d received after event %d", execID, id, highest)
		}
		highest = max(highest, id)
	}
	var missing []string
	for _, id := range stored {
		if received[id] == 0 {
			missing = append(missing, fmt.Sprintf("%d %s", id, names[id]))
		}
	}
	if len(missing) > 0 {
		f.Undelivered += len(missing)
		f.example("%s: %d of %d stored stream events never reached its SSE client (%s; the highest received: %d)",
			execID, len(missing), len(stored), strings.Join(missing[:min(3, len(missing))], ", "), highest)
	}
	for _, id := range slices.Sorted(maps.Keys(received)) {
		n := received[id]
		f.SSEDuplicated += max(0, n-1)
		f.dup("SSE delivery", n-1, "%s: SSE event %d delivered %d times", execID, id, n)
	}
}

// awaitStreams gives the SSE clients up to d to receive every stored
// event of their execution.
func awaitStreams(ctx context.Context, c *cluster, convs []*conversation, d time.Duration) {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		behind := 0
		for _, cv := range convs {
			if cv.Follower == nil {
				continue
			}
			var last int64
			if c.pool.QueryRow(ctx, `SELECT coalesce(max(id), 0) FROM agent_stream_event WHERE agent_execution_id = $1`, cv.ExecID).Scan(&last) != nil {
				behind++
				continue
			}
			// A one-shot's stream ends with its end event, which it
			// stores after its answer: caught up before that, a client
			// that left would miss it (a soak's client leaves).
			if _, got, _ := cv.Follower.snapshot(); got < last || (cv.OneShot && !cv.Follower.ended()) {
				behind++
			}
		}
		if behind == 0 {
			return
		}
		_ = sleepCtx(ctx, 200*time.Millisecond)
	}
}

// measureRecovery: for each worker kill, the time from the kill to the
// next stored progress (an entry or a stream event) of every execution that
// had a call in flight on the killed worker. A recovery that another fault
// stopping progress cut into is counted as overlapped instead.
func measureRecovery(ctx context.Context, c *cluster, faults []*fault, f *findings) error {
	for _, ft := range faults {
		if ft.Kind != workerKill {
			continue
		}
		timed := false
		for _, id := range slices.Compact(slices.Sorted(slices.Values(ft.InFlight))) {
			next, err := nextProgress(ctx, c, id, ft.At)
			if err != nil {
				return err
			}
			if next == nil {
				// Nothing after the kill: either its call had finished as
				// the kill landed and it had nothing left to do (it is
				// settled: waiting or ended — the stuck check judges
				// whether rightly), or it never recovered.
				var status string
				if err := c.pool.QueryRow(ctx, `SELECT status FROM agent_execution WHERE id = $1`, id).Scan(&status); err != nil {
					return fmt.Errorf("chaos: status of %s: %w", id, err)
				}
				if status != "RUNNING" && status != "PENDING" && status != "CANCELLING" {
					continue
				}
				// Never recovered: its wait so far, a lower bound, counts.
				f.Unrecovered++
				f.example("%s: no progress in the %s after the worker kill at %s", id, time.Since(ft.At).Round(time.Second), ft.At.Format("15:04:05.000"))
				now := time.Now()
				next = &now
			}
			if overlapped(faults, ft, *next) {
				f.Overlapped++
				continue
			}
			f.Recovery = append(f.Recovery, next.Sub(ft.At))
			timed = true
		}
		if timed {
			f.RecoveryKills++
		}
	}
	return nil
}

// nextProgress is the time of execution id's first stored entry or stream
// event after at, or nil.
func nextProgress(ctx context.Context, c *cluster, id string, at time.Time) (*time.Time, error) {
	var next *time.Time
	err := c.pool.QueryRow(ctx, `SELECT least(
		(SELECT min(created_at) FROM agent_stream_event WHERE agent_execution_id = $1 AND created_at > $2),
		(SELECT min(created_at) FROM agent_entry WHERE agent_execution_id = $1 AND created_at > $2))`, id, at).Scan(&next)
	if err != nil {
		return nil, fmt.Errorf("chaos: recovery of %s: %w", id, err)
	}
	return next, nil
}

// overlapped reports whether a fault other than kill that stops progress
// (anything but a gateway kill: the workers do not need the gateway)
// happened after kill and before recovered.
func overlapped(faults []*fault, kill *fault, recovered time.Time) bool {
	for _, o := range faults {
		if o != kill && o.Kind != gatewayKill && o.At.After(kill.At) && o.At.Before(recovered) {
			return true
		}
	}
	return false
}
