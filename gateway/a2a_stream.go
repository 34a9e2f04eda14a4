package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/agentree/agentree/agentsdk/event"
	"github.com/agentree/agentree/entrystore"
)

// a2aEndsTurn reports whether a stored event ends what a message started:
// the execution waits again, or has ended.
func a2aEndsTurn(name string) bool {
	return name == event.NameWaiting || event.Terminal(name) || name == event.NamePaused
}

// a2aAwait waits until execution ex, from stream event after on, waits
// for input or ends: a blocking message/send.
func (s *service) a2aAwait(ctx context.Context, ex entrystore.Execution, after int64) error {
	nop := func() error { return nil }
	err := s.streams.follow(ctx, followRequest{
		Org: ex.OrgID, Execution: ex.ID, After: after,
		Emit: func(ev entrystore.StreamEvent) error {
			if a2aEndsTurn(ev.Event) {
				return errRunDone
			}
			return nil
		},
		Flush: nop, Ping: nop,
	})
	if err != nil && !errors.Is(err, errRunDone) {
		return toStatus(s.log, "follow the execution", err)
	}
	return nil
}

// a2aStreamSend serves message/stream: the task as it starts, then its
// events (a2aStreamer) until it waits for input or ends.
func (s *service) a2aStreamSend(w http.ResponseWriter, r *http.Request, a a2aAgent, id json.RawMessage, p *a2aSendParams) {
	ctx := r.Context()
	if c := p.Configuration; c != nil && len(c.PushNotification) > 0 && string(c.PushNotification) != "null" {
		writeRPC(w, id, nil, &rpcError{Code: a2aPushNotSupported, Message: "push notifications are not supported: this stream is the task's"})
		return
	}
	release, ok := s.sseSlot(ctx, w, a.org.ID)
	if !ok {
		return
	}
	defer release()
	ex, after, err := s.a2aStart(ctx, a, p)
	if err != nil {
		writeRPC(w, id, nil, s.rpcErr(err))
		return
	}
	s.a2aStream(w, r, a, id, ex, after, true)
}

// a2aResubscribe serves tasks/resubscribe: the task as it stands, then
// its events from then on, or, with Last-Event-ID, from after that event
// (a client that lost its stream). It ends at once when the task waits
// for input or has ended, unless the client resumes from before that.
func (s *service) a2aResubscribe(w http.ResponseWriter, r *http.Request, a a2aAgent, id json.RawMessage, task string) {
	ctx := r.Context()
	from, err := lastEventID(r)
	if err != nil {
		writeRPC(w, id, nil, s.rpcErr(err))
		return
	}
	ex, err := s.a2aExecution(ctx, a, task)
	if err != nil {
		writeRPC(w, id, nil, s.rpcErr(err))
		return
	}
	follow := false
	if from > 0 {
		follow, err = s.a2aTurnEndsAfter(ctx, ex, from)
	} else {
		// Read before the task, so no event between the two is missed.
		from, err = s.es.LatestStreamEventID(ctx, a.org.ID, ex.ID)
	}
	if err != nil {
		writeRPC(w, id, nil, s.rpcErr(toStatus(s.log, "read the stream", err)))
		return
	}
	release, ok := s.sseSlot(ctx, w, a.org.ID)
	if !ok {
		return
	}
	defer release()
	s.a2aStream(w, r, a, id, ex, from, follow)
}

// a2aTurnEndsAfter reports whether an event after after ends a turn: a
// client resuming from before it is owed the events up to it.
func (s *service) a2aTurnEndsAfter(ctx context.Context, ex entrystore.Execution, after int64) (bool, error) {
	for {
		evs, err := s.es.StreamEventsAfter(ctx, ex.OrgID, ex.ID, after, fetchLimit)
		if err != nil {
			return false, err
		}
		for _, ev := range evs {
			if a2aEndsTurn(ev.Event) {
				return true, nil
			}
			after = ev.ID
		}
		if len(evs) < fetchLimit {
			return false, nil
		}
	}
}

// a2aStream answers with SSE: first the task, then one JSON-RPC response
// per A2A event the stored events after after stand for, each stored
// event's last with "id:" its ID (a client resumes with Last-Event-ID on
// tasks/resubscribe). It ends with the final status update: the next one
// after after when follow (the stream of a message just sent, or of a
// client resuming), else at once when the task already waits or has
// ended.
func (s *service) a2aStream(w http.ResponseWriter, r *http.Request, a a2aAgent, id json.RawMessage, ex entrystore.Execution, after int64, follow bool) {
	ctx := r.Context()
	task, err := s.a2aTaskOf(ctx, ex, nil)
	if err != nil {
		writeRPC(w, id, nil, s.rpcErr(err))
		return
	}
	sw := newSSEWriter(w)
	put := func(result any, evID int64) {
		data, _ := json.Marshal(rpcResponse{JSONRPC: "2.0", ID: id, Result: result}) // plain values cannot fail
		if evID > 0 {
			sw.buf.WriteString("id: " + strconv.FormatInt(evID, 10) + "\n")
		}
		sw.buf.WriteString("data: ")
		sw.buf.Write(data)
		sw.buf.WriteString("\n\n")
	}
	if follow && a2aFinal(task.Status.State) {
		// The message just sent has not been taken yet (or the client
		// resumes from before the task got where it is): the task works
		// from here.
		task.Status = a2aStatus{State: a2aWorking, Timestamp: time.Now().UTC().Format(time.RFC3339Nano)}
	}
	put(task, 0)
	if err := sw.write(); err != nil {
		return
	}
	_ = sw.flush()
	if !follow && a2aFinal(task.Status.State) {
		return
	}
	st := &a2aStreamer{exec: ex.ID, shown: map[string]int{}}
	err = s.streams.follow(ctx, followRequest{
		Org: ex.OrgID, Execution: ex.ID, After: after, Consolidated: true,
		Emit: func(ev entrystore.StreamEvent) error {
			if a2aEndsTurn(ev.Event) {
				// The final update carries the task as it now stands: its
				// answer, or what it waits for.
				cur, err := s.a2aExecution(ctx, a, ex.ID)
				if err == nil {
					task, err = s.a2aTaskOf(ctx, cur, nil)
				}
				if err != nil {
					return err
				}
				for _, art := range task.Artifacts {
					put(a2aArtifactUpdate{Kind: "artifact-update", TaskID: ex.ID, ContextID: ex.ID, Artifact: art, LastChunk: true}, 0)
				}
				put(a2aStatusUpdate{Kind: "status-update", TaskID: ex.ID, ContextID: ex.ID, Status: task.Status, Final: true}, ev.ID)
				if err := sw.write(); err != nil {
					return err
				}
				_ = sw.flush()
				return errRunDone
			}
			evs := st.mapEvent(ev)
			if len(evs) == 0 {
				return nil
			}
			for i, e := range evs {
				var evID int64
				if i == len(evs)-1 {
					evID = ev.ID // a resumed stream starts after it
				}
				put(e, evID)
			}
			return sw.write()
		},
		Flush: sw.flush, Ping: sw.ping,
	})
	if err != nil && !errors.Is(err, errRunDone) && !errors.Is(err, context.Canceled) && ctx.Err() == nil {
		s.log.Warn("gateway: A2A stream ended", "execution", ex.ID, "err", err)
	}
}

// a2aStreamer maps an execution's stored events, in order, to A2A
// events; the turn-ending ones a2aStream maps itself.
type a2aStreamer struct {
	exec string
	// shown is, by model call, how many bytes of its text were sent: a
	// retried call's text is not sent twice (event.Token.Unseen).
	shown map[string]int
}

// mapEvent returns the A2A events ev stands for: a model call's text as
// chunks of its answer artifact, the execution (re)starting as a working
// status update.
func (m *a2aStreamer) mapEvent(ev entrystore.StreamEvent) []any {
	switch ev.Event {
	case event.NameStarted, event.NameResumed:
		return []any{a2aStatusUpdate{Kind: "status-update", TaskID: m.exec, ContextID: m.exec,
			Status: a2aStatus{State: a2aWorking, Timestamp: ev.CreatedAt.UTC().Format(time.RFC3339Nano)}}}
	case event.NameToken:
		var tok event.Token
		if json.Unmarshal(ev.Data, &tok) != nil {
			return nil
		}
		id := messageItemID(m.exec, tok.TaskExecutionID)
		text := tok.Unseen(m.shown[id])
		if text == "" {
			return nil
		}
		appended := m.shown[id] > 0 || tok.Offset > 0
		m.shown[id] += len(text)
		return []any{a2aArtifactUpdate{Kind: "artifact-update", TaskID: m.exec, ContextID: m.exec,
			Artifact: a2aArtifact{ArtifactID: id, Name: "answer", Parts: []a2aPart{{Kind: "text", Text: text}}}, Append: appended}}
	}
	return nil
}
