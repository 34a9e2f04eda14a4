package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/event"
)

// stdinLines reads standard input line by line on its own goroutine, so
// that waiting for the user's next message never blocks Ctrl-C: the
// prompt waits on the channel and the context together. The channel
// closes at end of input (Ctrl-D).
var stdinLines = sync.OnceValue(func() <-chan string {
	ch := make(chan string)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(os.Stdin)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			ch <- sc.Text()
		}
	}()
	return ch
})

// interrupted says how to come back to an execution the user stopped
// following with Ctrl-C: it goes on without us.
func interrupted(id string) error {
	return &interruptedError{msg: fmt.Sprintf(`interrupted; execution %[1]s goes on without this terminal:
  agentree show %[1]s              where it is
  agentree send %[1]s "MESSAGE"    answer it when it waits
  agentree cancel %[1]s            stop it`, id)}
}

// follow streams an execution until it waits (or, with chat, until it
// ends, sending each line of stdin when it waits). It reconnects with the
// last event ID when the stream breaks.
func follow(ctx context.Context, c *apiClient, f clientFlags, w io.Writer, st style, id string, chat bool) error {
	view := &liveView{w: w, st: st, since: time.Now()}
	var lastID, failure string
	var leftChat bool
	stopTicks := view.startTicking(250 * time.Millisecond)
	defer stopTicks()
	for attempt := 0; ; attempt++ {
		var finished bool
		var err error
		var wait time.Duration
		var resume string
		lastID, err = c.stream(ctx, id, lastID, func(ev sseEvent) bool {
			if f.json {
				fmt.Fprintf(w, "{\"id\":%q,\"event\":%q,\"data\":%s}\n", ev.ID, ev.Event, ev.Data)
			}
			if after, d, ok := streamBroke(ev); ok {
				// The gateway ends the stream after it; the loop below
				// reconnects after the pause it asks for.
				wait, resume = d, after
			}
			var stopped bool
			if f.json {
				stopped, failure = terminalOrWaiting(ev)
			} else {
				stopped, failure = view.show(ev)
			}
			if !stopped {
				return false
			}
			view.pause()
			if pending := approvalsOf(ev); pending != nil && !f.json {
				decided, err := askDecisions(ctx, c, w, st, id, pending)
				if err != nil || !decided {
					if err != nil && ctx.Err() == nil {
						failure = err.Error()
					}
					finished = true
					return true
				}
				view.resume()
				return false
			}
			if ev.Event != event.NameWaiting || !chat {
				finished = true
				return true
			}
			if !f.json {
				fmt.Fprint(w, st.bold("> "))
			}
			select {
			case <-ctx.Done():
				return true
			case line, ok := <-stdinLines():
				if !ok {
					finished, leftChat = true, true
					return true
				}
				view.resume()
				if err := sendMessage(ctx, c, id, line); err != nil {
					if ctx.Err() == nil {
						failure, finished = err.Error(), true
					}
					return true
				}
				return false
			}
		})
		if resume != "" {
			lastID = resume
		}
		if ctx.Err() == nil && !finished && wait > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(wait):
			}
		}
		if ctx.Err() != nil {
			view.endLine()
			return interrupted(id)
		}
		if finished {
			break
		}
		if err != nil {
			var ae *apiError
			if errors.As(err, &ae) || attempt >= 5 {
				return err
			}
		}
	}
	if failure != "" {
		return errors.New(failure)
	}
	if leftChat && !f.json {
		fmt.Fprintf(w, "\nleft the chat; execution %[1]s waits for input:\n  agentree send %[1]s \"MESSAGE\"    answer it\n  agentree cancel %[1]s            stop it\n", id)
	}
	return nil
}

// approvalsOf are the calls an agent.waiting event for approval lists;
// nil for any other event.
func approvalsOf(ev sseEvent) []event.PendingToolCall {
	if ev.Event != event.NameWaiting {
		return nil
	}
	e, err := event.Decode(ev.Event, ev.Data)
	if err != nil {
		return nil
	}
	if w := e.(*event.Waiting); w.Reason == agentsdk.WaitApproval && len(w.PendingToolCalls) > 0 {
		return w.PendingToolCalls
	}
	return nil
}

func terminalOrWaiting(ev sseEvent) (bool, string) {
	switch ev.Event {
	case event.NameWaiting, event.NameCompleted, event.NamePaused:
		return true, ""
	case event.NameFailed:
		msg := "failed"
		if e, err := event.Decode(ev.Event, ev.Data); err == nil {
			msg += ": " + e.(*event.Failed).Error
		}
		return true, msg
	case event.NameCancelled:
		return true, "cancelled"
	}
	return false, ""
}

// streamBroke reads a stream_error: where to resume and how long to wait
// first.
func streamBroke(ev sseEvent) (resumeAfter string, wait time.Duration, ok bool) {
	if ev.Event != event.NameStreamError {
		return "", 0, false
	}
	e, err := event.Decode(ev.Event, ev.Data)
	if err != nil {
		return "", time.Second, true
	}
	se := e.(*event.StreamError)
	return se.LastEventID, time.Duration(se.RetryAfterMs) * time.Millisecond, true
}
