package sampleenv

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/agentree/agentree/agentsdk/event"
	"github.com/agentree/agentree/apiclient"
	agentreev1 "github.com/agentree/agentree/proto/agentree/v1"
)

// Until is the event of the execution's stream that ends Follow.
type Until func(apiclient.Event) bool

// Ended holds at the event that ends the execution (agent.completed,
// agent.failed, agent.cancelled).
func Ended(ev apiclient.Event) bool { return apiclient.Terminal(ev.Name) }

// Waiting holds at the event that says the execution waits for input:
// each turn of a multi-turn execution ends with one.
func Waiting(ev apiclient.Event) bool { return ev.Name == event.NameWaiting }

// Await follows the execution's stream until until holds, printing
// nothing, and returns the execution as it is then.
func Await(ctx context.Context, c *apiclient.Client, id string, until Until) (*agentreev1.AgentExecution, error) {
	return NewStream(c, id, nil).Follow(ctx, until)
}

// Follow prints the execution's live stream to w from its start until
// until holds; see Stream.Follow.
func Follow(ctx context.Context, c *apiclient.Client, id string, w io.Writer, until Until) (*agentreev1.AgentExecution, error) {
	return NewStream(c, id, w).Follow(ctx, until)
}

// Stream is one execution's live stream as a terminal shows it. It
// remembers the last event it has seen, so following it turn after turn
// prints each event once: the gateway resumes after it (Last-Event-ID).
type Stream struct {
	c    *apiclient.Client
	id   string
	p    printer
	last string
}

// NewStream returns the execution's stream, printed to w from its start.
// A nil w prints nothing.
func NewStream(c *apiclient.Client, id string, w io.Writer) *Stream {
	return &Stream{c: c, id: id, p: printer{w: w}}
}

// Follow prints the stream (model tokens as they arrive, each tool call
// as it starts and its result, the agent's own data events) until until
// holds for an event, and returns the execution as the API shows it then.
// An execution that ends while until does not hold is an error, as is
// ctx ending first.
func (s *Stream) Follow(ctx context.Context, until Until) (*agentreev1.AgentExecution, error) {
	defer s.p.endLine()
	for ev, err := range s.c.Follow(ctx, s.id, apiclient.FollowOptions{LastEventID: s.last}) {
		if err != nil {
			return nil, fmt.Errorf("sampleenv: follow %s: %w", s.id, err)
		}
		s.last = ev.ID
		s.p.event(ev)
		if until(ev) {
			return Get(ctx, s.c, s.id)
		}
		if apiclient.Terminal(ev.Name) {
			ex, err := Get(ctx, s.c, s.id)
			if err != nil {
				return nil, err
			}
			return ex, fmt.Errorf("sampleenv: execution %s ended %s (%s)", s.id, ex.GetStatus(), ex.GetError())
		}
	}
	// Follow ends without a terminal event only when the execution has
	// ended (the gateway said so) and until did not hold at its end.
	ex, err := Get(ctx, s.c, s.id)
	if err != nil {
		return nil, err
	}
	return ex, fmt.Errorf("sampleenv: execution %s ended %s (%s)", s.id, ex.GetStatus(), ex.GetError())
}

// printer writes stream events as a terminal shows them.
type printer struct {
	w       io.Writer
	midLine bool
}

func (p *printer) event(e apiclient.Event) {
	if p.w == nil {
		return
	}
	ev, err := event.Decode(e.Name, e.Data)
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
