package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/agentree/agentree/agentsdk/event"
	"github.com/agentree/agentree/entrystore"
)

// oaStream writes one response's events in the spec's names and shapes:
// the execution's token events become output_text deltas of the message
// item of their model call, its tool calls mcp_call items; once the turn
// has ended, every item is finished from the tree (so the text each done
// event carries is the one kept) and response.completed carries the whole
// response.
type oaStream struct {
	w   http.ResponseWriter
	rc  *http.ResponseController
	seq int
	buf bytes.Buffer
	// items are the output items announced, by ID, with their index; open
	// is the message item tokens go to.
	items map[string]int
	done  map[string]bool
	next  int
	open  string
	text  map[string]*bytes.Buffer
}

func (o *oaStream) send(ev oaEvent) error {
	ev.SequenceNumber = o.seq
	o.seq++
	data, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	o.buf.WriteString("event: ")
	o.buf.WriteString(ev.Type)
	o.buf.WriteString("\ndata: ")
	o.buf.Write(data)
	o.buf.WriteString("\n\n")
	_ = o.rc.SetWriteDeadline(time.Now().Add(sseWriteTimeout))
	_, err = o.w.Write(o.buf.Bytes())
	o.buf.Reset()
	return err
}

func (o *oaStream) flush() error { return o.rc.Flush() }

func intp(i int) *int { return &i }

// add announces an item.
func (o *oaStream) add(it oaItem) error {
	o.items[it.ID] = o.next
	o.next++
	return o.send(oaEvent{Type: "response.output_item.added", OutputIndex: intp(o.items[it.ID]), Item: &it})
}

// delta sends text of the model call whose events carry key, opening its
// message item first.
func (o *oaStream) delta(exec, key, text string) error {
	id := messageItemID(exec, key)
	if o.open != id {
		if err := o.closeOpen(); err != nil {
			return err
		}
		if err := o.add(oaItem{Type: "message", ID: id, Status: "in_progress", Role: "assistant", Content: []oaPart{}}); err != nil {
			return err
		}
		part := outputText("")
		if err := o.send(oaEvent{Type: "response.content_part.added", ItemID: id, OutputIndex: intp(o.items[id]), ContentIndex: intp(0), Part: &part}); err != nil {
			return err
		}
		o.open, o.text[id] = id, &bytes.Buffer{}
	}
	o.text[id].WriteString(text)
	return o.send(oaEvent{Type: "response.output_text.delta", ItemID: id, OutputIndex: intp(o.items[id]), ContentIndex: intp(0),
		Delta: &text, Logprobs: []any{}})
}

// closeOpen ends the open message item with the text streamed; finish
// sends the kept one if they differ.
func (o *oaStream) closeOpen() error {
	id := o.open
	if id == "" {
		return nil
	}
	o.open = ""
	text := o.text[id].String()
	return o.finishMessage(oaItem{Type: "message", ID: id, Status: "completed", Role: "assistant", Content: []oaPart{outputText(text)}})
}

// finishMessage sends the done events of a message item.
func (o *oaStream) finishMessage(it oaItem) error {
	if o.done[it.ID] {
		return nil
	}
	o.done[it.ID] = true
	idx := intp(o.items[it.ID])
	text := ""
	if len(it.Content) > 0 {
		text = it.Content[0].Text
	}
	part := outputText(text)
	for _, ev := range []oaEvent{
		{Type: "response.output_text.done", ItemID: it.ID, OutputIndex: idx, ContentIndex: intp(0), Text: &text, Logprobs: []any{}},
		{Type: "response.content_part.done", ItemID: it.ID, OutputIndex: idx, ContentIndex: intp(0), Part: &part},
		{Type: "response.output_item.done", OutputIndex: idx, Item: &it},
	} {
		if err := o.send(ev); err != nil {
			return err
		}
	}
	return nil
}

// onEvent maps one execution event.
func (o *oaStream) onEvent(ev entrystore.StreamEvent) error {
	switch ev.Event {
	case event.NameToken:
		var tok event.Token
		if json.Unmarshal(ev.Data, &tok) != nil {
			return nil
		}
		shown := 0
		if b := o.text[messageItemID(tok.AgentExecutionID, tok.TaskExecutionID)]; b != nil {
			shown = b.Len()
		}
		text := tok.Unseen(shown)
		if text == "" {
			return nil
		}
		return o.delta(tok.AgentExecutionID, tok.TaskExecutionID, text)
	case event.NameTaskStarted:
		var ts event.TaskStarted
		if json.Unmarshal(ev.Data, &ts) != nil {
			return nil
		}
		if _, added := o.items[ts.TaskExecutionID]; added {
			// The call started again (an attempt failed, or its worker
			// stopped): its item is out already.
			return nil
		}
		if err := o.closeOpen(); err != nil {
			return err
		}
		args := string(ts.Arguments)
		if args == "" {
			args = "{}"
		}
		return o.add(oaItem{Type: "mcp_call", ID: ts.TaskExecutionID, Name: ts.Kind, Arguments: &args,
			ServerLabel: mcpServerLabel, Status: "in_progress"})
	}
	return nil
}

// announce adds an item no event announced (a message whose tokens were
// not streamed, a call waiting for approval), a message with its part.
func (o *oaStream) announce(it oaItem) error {
	if it.Type == "function_call" && it.Arguments != nil {
		// As the spec streams a function call: the item in progress, then
		// its arguments (whole: the model's were not streamed as tokens).
		empty := ""
		start := it
		start.Status, start.Arguments = "in_progress", &empty
		if err := o.add(start); err != nil {
			return err
		}
		return o.send(oaEvent{Type: "response.function_call_arguments.delta", ItemID: it.ID, OutputIndex: intp(o.items[it.ID]), Delta: it.Arguments})
	}
	if it.Type != "message" {
		return o.add(it)
	}
	if err := o.add(oaItem{Type: "message", ID: it.ID, Status: "in_progress", Role: it.Role, Content: []oaPart{}}); err != nil {
		return err
	}
	part := outputText("")
	return o.send(oaEvent{Type: "response.content_part.added", ItemID: it.ID, OutputIndex: intp(o.items[it.ID]), ContentIndex: intp(0), Part: &part})
}

// finish ends every item with the tree's output — a message with the text
// kept, which differs from the deltas when a model call was retried (its
// retry streams from the start again) — and sends the last event.
func (o *oaStream) finish(resp oaResponse) error {
	for _, it := range resp.Output {
		if _, ok := o.items[it.ID]; !ok {
			if err := o.announce(it); err != nil {
				return err
			}
		}
		if o.open == it.ID {
			o.open = ""
		}
		if it.Type == "message" {
			if err := o.finishMessage(it); err != nil {
				return err
			}
			continue
		}
		if !o.done[it.ID] && it.Type == "function_call" && it.Arguments != nil {
			if err := o.send(oaEvent{Type: "response.function_call_arguments.done", ItemID: it.ID, OutputIndex: intp(o.items[it.ID]),
				Arguments: it.Arguments}); err != nil {
				return err
			}
		}
		if !o.done[it.ID] {
			o.done[it.ID] = true
			item := it
			if err := o.send(oaEvent{Type: "response.output_item.done", OutputIndex: intp(o.items[it.ID]), Item: &item}); err != nil {
				return err
			}
		}
	}
	// A message the tree did not keep (a call that failed) ends as
	// streamed.
	if err := o.closeOpen(); err != nil {
		return err
	}
	name := "response.completed"
	switch resp.Status {
	case "failed", "cancelled":
		name = "response.failed"
	case "incomplete":
		name = "response.incomplete"
	}
	if err := o.send(oaEvent{Type: name, Response: &resp}); err != nil {
		return err
	}
	return o.flush()
}

// openStream takes a stream slot of the caller's before a streamed
// response starts, so a refused stream starts nothing.
func (s *service) openStream(w http.ResponseWriter, r *http.Request, org entrystore.Org) (func(), bool) {
	release, err := s.streamSlot(r.Context(), org.ID)
	var tooMany *tooManyStreams
	if errors.As(err, &tooMany) {
		w.Header().Set("Retry-After", strconv.Itoa(streamRetryAfter))
		writeOAError(w, http.StatusTooManyRequests, "rate_limit_error", "too_many_streams", "", tooMany.msg)
		return nil, false
	}
	if err != nil {
		writeOAStatus(w, err)
		return nil, false
	}
	return release, true
}

// streamTurn streams the response ref from the execution's events after
// after. The response goes on if the client leaves: it is a turn of the
// execution, and GET /v1/responses/{id} returns it.
func (s *service) streamTurn(w http.ResponseWriter, r *http.Request, org entrystore.Org, req *oaRequest, ref respRef, after int64) {
	ctx := r.Context()
	t, err := s.loadTurn(ctx, org, ref)
	if err != nil {
		writeOAStatus(w, err)
		return
	}
	startSSE(w)
	o := &oaStream{w: w, rc: http.NewResponseController(w), items: map[string]int{}, done: map[string]bool{}, text: map[string]*bytes.Buffer{}}
	first := s.responseObject(t, req)
	first.Status, first.Output, first.Usage, first.CompletedAt = "in_progress", []oaItem{}, nil, nil
	for _, name := range []string{"response.created", "response.in_progress"} {
		snap := first
		if err := o.send(oaEvent{Type: name, Response: &snap}); err != nil {
			return
		}
	}
	if err := o.flush(); err != nil {
		return
	}
	t, err = s.awaitTurn(ctx, org, ref, after, func(ev entrystore.StreamEvent) error {
		if err := o.onEvent(ev); err != nil {
			return err
		}
		return o.flush()
	})
	if err != nil {
		if ctx.Err() == nil {
			_ = o.send(oaEvent{Type: "error", Code: "server_error", Message: "the response's events could not be followed; GET /v1/responses/" + ref.id() + " returns it"})
			_ = o.flush()
		}
		return
	}
	_ = o.finish(s.responseObject(t, req))
}
