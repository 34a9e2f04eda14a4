package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/agentree/agentree/entrystore"
)

// serveAGUI serves GET …/agent-executions/{id}/ag-ui: the execution's
// events as AG-UI events over SSE, from the start of the replay window or
// after Last-Event-ID. Each stored event's AG-UI events go out together,
// the last of them with "id:" the stored event's ID, so a client resumes
// between stored events and never inside one. A resuming stream first
// reads what came before its Last-Event-ID without sending it, so it
// knows what is open (the run, a message) and sends no START twice.
func (s *service) serveAGUI(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if k, ok := ctx.Value(authenticatedKey{}).(entrystore.APIKey); ok && !k.Has(entrystore.RoleRead) {
		writeError(w, http.StatusForbidden, "permission_denied",
			(&permissionDenied{role: entrystore.RoleRead, what: "GET " + r.Pattern}).Error())
		return
	}
	ex, after, err := s.streamFrom(r)
	if err != nil {
		writeStatus(w, err)
		return
	}
	m, err := s.aguiMapperAt(ctx, ex, after)
	if err != nil {
		writeStatus(w, err)
		return
	}
	release, ok := s.sseSlot(ctx, w, ex.OrgID)
	if !ok {
		return
	}
	defer release()

	err = s.writeAGUI(w, r, ex, after, m, false)
	if err != nil && !errors.Is(err, context.Canceled) && ctx.Err() == nil {
		s.log.Warn("gateway: AG-UI stream ended", "execution", ex.ID, "err", err)
	}
}

// writeAGUI answers with the execution's events after after, mapped by
// m, as SSE; oneRun ends the answer when a run ends (errRunDone).
func (s *service) writeAGUI(w http.ResponseWriter, r *http.Request, ex entrystore.Execution, after int64, m *aguiMapper, oneRun bool) error {
	sw := newSSEWriter(w)
	buf := &sw.buf
	return s.streams.follow(r.Context(), followRequest{
		Org: ex.OrgID, Execution: ex.ID, After: after, Consolidated: true,
		Emit: func(ev entrystore.StreamEvent) error {
			evs := m.mapEvent(ev)
			done := false
			for i, a := range evs {
				data, err := json.Marshal(a)
				if err != nil {
					return err
				}
				if i == len(evs)-1 && ev.ID > 0 {
					buf.WriteString("id: " + strconv.FormatInt(ev.ID, 10) + "\n")
				}
				buf.WriteString("data: ")
				buf.Write(data)
				buf.WriteString("\n\n")
				done = done || (oneRun && aguiRunDone(a))
			}
			if err := sw.write(); err != nil {
				return err
			}
			if done {
				_ = sw.flush()
				return errRunDone
			}
			return nil
		},
		Flush: sw.flush, Ping: sw.ping,
	})
}

// aguiMapperAt is ex's mapper as it stands after event after: it is fed
// the events up to there, sending nothing, so it knows what is open.
func (s *service) aguiMapperAt(ctx context.Context, ex entrystore.Execution, after int64) (*aguiMapper, error) {
	m := newAGUIMapper(ex.ID)
	var last int64
	for last < after {
		evs, err := s.es.StreamEventsAfter(ctx, ex.OrgID, ex.ID, last, fetchLimit)
		if err != nil {
			return nil, toStatus(s.log, "read the stream", err)
		}
		for _, ev := range evs {
			if ev.ID > after {
				return m, nil
			}
			m.mapEvent(ev)
			last = ev.ID
		}
		if len(evs) < fetchLimit {
			break
		}
	}
	return m, nil
}
