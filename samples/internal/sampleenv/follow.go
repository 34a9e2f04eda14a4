package sampleenv

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/agentree/agentree/agentsdk/event"
	"github.com/agentree/agentree/entrystore"
)

// pollInterval is how often Follow reads the execution row and its stream.
// The gateway pushes events with LISTEN/NOTIFY; a sample can afford to poll.
const pollInterval = 25 * time.Millisecond

// Until is the condition on the execution row that ends Follow or Await.
type Until func(entrystore.Execution) bool

// Ended holds once the execution is COMPLETED, FAILED or CANCELLED.
func Ended(ex entrystore.Execution) bool { return ex.Status.Terminal() }

// WaitingAfter holds once the execution waits at a checkpoint later than
// seq. Status alone is not enough after a signal: the execution may still
// show the WAITING it had before the signal was taken.
func WaitingAfter(seq int) Until {
	return func(ex entrystore.Execution) bool {
		return ex.Status == entrystore.StatusWaiting && ex.CheckpointSeq > seq
	}
}

// Await polls the execution row until until holds, printing nothing.
func Await(ctx context.Context, store *entrystore.Store, orgID, id string, until Until) (entrystore.Execution, error) {
	return NewStream(store, orgID, id, nil).Follow(ctx, until)
}

// Follow prints the execution's live stream to w from its start until
// until holds; see Stream.Follow.
func Follow(ctx context.Context, store *entrystore.Store, orgID, id string, w io.Writer, until Until) (entrystore.Execution, error) {
	return NewStream(store, orgID, id, w).Follow(ctx, until)
}

// Stream is one execution's live stream as a terminal shows it. It
// remembers how far it has printed, so following it turn after turn prints
// each event once.
type Stream struct {
	store     *entrystore.Store
	orgID, id string
	p         printer
	after     int64
}

// NewStream returns the execution's stream, printed to w from its start.
// A nil w prints nothing.
func NewStream(store *entrystore.Store, orgID, id string, w io.Writer) *Stream {
	return &Stream{store: store, orgID: orgID, id: id, p: printer{w: w}}
}

// Follow prints the stream (model tokens as they arrive, each tool call
// as it starts and its result, the agent's own data events) until until holds for
// the execution row. An execution that ends while until does not hold is
// an error, as is ctx ending first.
func (s *Stream) Follow(ctx context.Context, until Until) (entrystore.Execution, error) {
	defer s.p.endLine()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		// The row is read before the stream, so every event written before
		// the state until accepts has been printed when Follow returns.
		ex, err := s.store.GetExecution(ctx, s.orgID, s.id)
		if err != nil {
			return ex, fmt.Errorf("sampleenv: follow %s: %w", s.id, err)
		}
		if s.p.w != nil {
			if err := s.drain(ctx); err != nil {
				return ex, err
			}
		}
		if until(ex) {
			return ex, nil
		}
		if ex.Status.Terminal() {
			return ex, fmt.Errorf("sampleenv: execution %s ended %s (%s)", s.id, ex.Status, ex.Error)
		}
		select {
		case <-ctx.Done():
			return ex, fmt.Errorf("sampleenv: execution %s is still %s: %w", s.id, ex.Status, ctx.Err())
		case <-tick.C:
		}
	}
}

// streamPage is how many events one read of the stream returns at most.
const streamPage = 500

func (s *Stream) drain(ctx context.Context) error {
	for {
		evs, err := s.store.StreamEventsAfter(ctx, s.orgID, s.id, s.after, streamPage)
		if err != nil {
			return fmt.Errorf("sampleenv: read stream of %s: %w", s.id, err)
		}
		for _, e := range evs {
			s.p.event(e)
			s.after = e.ID
		}
		if len(evs) < streamPage {
			return nil
		}
	}
}

// printer writes stream events as a terminal shows them.
type printer struct {
	w       io.Writer
	midLine bool
}

func (p *printer) event(e entrystore.StreamEvent) {
	ev, err := event.Decode(e.Event, e.Data)
	if err != nil {
		return
	}
	switch ev := ev.(type) {
	case *event.Token:
		if ev.Data != "" {
			fmt.Fprint(p.w, ev.Data)
			p.midLine = true
		}
	case *event.TaskStarted:
		p.line("  → %s %s", ev.Kind, oneLine(compact(ev.Arguments), 100))
	case *event.Data:
		switch d := ev.Data; {
		case d.Type == event.TypeToolResult && d.Result != nil:
			mark := "←"
			if d.Result.IsError {
				mark = "✗"
			}
			p.line("  %s %s", mark, oneLine(d.Result.Preview, 100))
		case d.Type == event.TypeCustom && hasValue(d.Value):
			p.line("  • %s", oneLine(compact(d.Value), 100))
		}
	}
}

func (p *printer) line(format string, args ...any) {
	p.endLine()
	fmt.Fprintf(p.w, format+"\n", args...)
}

func (p *printer) endLine() {
	if p.midLine {
		fmt.Fprintln(p.w)
		p.midLine = false
	}
}

func hasValue(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	return s != "" && s != "null"
}

// compact drops the spaces Postgres's jsonb adds to stored events.
func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// oneLine flattens s to one line of at most n runes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
