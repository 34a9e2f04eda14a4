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
	"github.com/agentree/agentree/apiclient"
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
// ends, sending each line of stdin when it waits). apiclient.Follow
// resumes a broken stream after the last event seen; the view says so.
func follow(ctx context.Context, c *apiclient.Client, f clientFlags, w io.Writer, st style, id string, chat bool) error {
	view := &liveView{w: w, st: st, since: time.Now()}
	var failure string
	var leftChat bool
	stopTicks := view.startTicking(250 * time.Millisecond)
	defer stopTicks()
	opts := apiclient.FollowOptions{OnReconnect: func(_ string, why error) {
		if !f.json {
			view.interrupted(why)
		}
	}}
events:
	for ev, err := range c.Follow(ctx, id, opts) {
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			return err
		}
		if f.json {
			fmt.Fprintf(w, "{\"id\":%q,\"event\":%q,\"data\":%s}\n", ev.ID, ev.Name, ev.Data)
		}
		var stopped bool
		if f.json {
			stopped, failure = terminalOrWaiting(ev)
		} else {
			stopped, failure = view.show(ev)
		}
		if !stopped {
			continue
		}
		view.pause()
		if pending := approvalsOf(ev); pending != nil && !f.json {
			decided, err := askDecisions(ctx, c, w, st, id, pending)
			if err != nil || !decided {
				if err != nil && ctx.Err() == nil {
					failure = err.Error()
				}
				break
			}
			view.resume()
			continue
		}
		if ev.Name != event.NameWaiting || !chat {
			break
		}
		if !f.json {
			fmt.Fprint(w, st.bold("> "))
		}
		select {
		case <-ctx.Done():
			break events
		case line, ok := <-stdinLines():
			if !ok {
				leftChat = true
				break events
			}
			view.resume()
			if err := sendMessage(ctx, c, id, line); err != nil {
				if ctx.Err() == nil {
					failure = err.Error()
				}
				break events
			}
		}
	}
	if ctx.Err() != nil {
		view.endLine()
		return interrupted(id)
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
func approvalsOf(ev apiclient.Event) []event.PendingToolCall {
	if ev.Name != event.NameWaiting {
		return nil
	}
	e, err := event.Decode(ev.Name, ev.Data)
	if err != nil {
		return nil
	}
	if w := e.(*event.Waiting); w.Reason == agentsdk.WaitApproval && len(w.PendingToolCalls) > 0 {
		return w.PendingToolCalls
	}
	return nil
}

func terminalOrWaiting(ev apiclient.Event) (bool, string) {
	switch ev.Name {
	case event.NameWaiting, event.NameCompleted, event.NamePaused:
		return true, ""
	case event.NameFailed:
		msg := "failed"
		if e, err := event.Decode(ev.Name, ev.Data); err == nil {
			msg += ": " + e.(*event.Failed).Error
		}
		return true, msg
	case event.NameCancelled:
		return true, "cancelled"
	}
	return false, ""
}
