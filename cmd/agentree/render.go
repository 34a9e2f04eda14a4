package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/agentree/agentree/agentsdk"
	"github.com/agentree/agentree/agentsdk/event"
	"github.com/agentree/agentree/apiclient"
)

// style colours terminal output; plain when not a terminal or NO_COLOR is set.
type style struct{ on bool }

func newStyle(w io.Writer) style {
	f, ok := w.(*os.File)
	if !ok {
		return style{}
	}
	fi, err := f.Stat()
	return style{on: err == nil && fi.Mode()&os.ModeCharDevice != 0 && os.Getenv("NO_COLOR") == ""}
}

// wrap styles text, which is cleaned first: styled text is mostly the
// server's (arguments, errors, previews), and cleaning it here means no
// call site can forget.
func (s style) wrap(code, text string) string {
	text = clean(text)
	if !s.on {
		return text
	}
	return "\x1b[" + code + "m" + text + "\x1b[0m"
}

func (s style) dim(t string) string   { return s.wrap("2", t) }
func (s style) bold(t string) string  { return s.wrap("1", t) }
func (s style) green(t string) string { return s.wrap("32", t) }
func (s style) red(t string) string   { return s.wrap("31", t) }
func (s style) cyan(t string) string  { return s.wrap("36", t) }

// liveView prints an execution's stream as it arrives: tokens inline, each
// tool call with its status, and a progress line while nothing arrives.
type liveView struct {
	mu       sync.Mutex
	paused   bool
	w        io.Writer
	st       style
	midLine  bool
	progress bool
	since    time.Time
}

func (v *liveView) clearProgress() {
	if v.progress {
		fmt.Fprint(v.w, "\r\x1b[2K")
		v.progress = false
	}
}

func (v *liveView) newline() {
	v.clearProgress()
	if v.midLine {
		fmt.Fprintln(v.w)
		v.midLine = false
	}
}

// endLine ends a half-printed line (and the progress line), for output
// that follows the live view.
func (v *liveView) endLine() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.newline()
}

// startTicking refreshes the progress line every period until stopped.
func (v *liveView) startTicking(period time.Duration) (stop func()) {
	t := time.NewTicker(period)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case now := <-t.C:
				v.tick(now)
			}
		}
	}()
	return func() { t.Stop(); close(done) }
}

// pause stops the progress line while the user types; resume restarts it.
func (v *liveView) pause() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.paused = true
}

func (v *liveView) resume() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.paused, v.since = false, time.Now()
}

// tick shows how long the agent has been quiet, on terminals only.
func (v *liveView) tick(now time.Time) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.st.on || v.paused || v.midLine || now.Sub(v.since) < time.Second {
		return
	}
	fmt.Fprintf(v.w, "\r\x1b[2K%s", v.st.dim(fmt.Sprintf("… working %ds", int(now.Sub(v.since).Seconds()))))
	v.progress = true
}

// show prints one event and reports whether the execution stopped
// (waiting or ended) and, if it ended badly, why. An event this CLI has no
// type for (a newer gateway's) is not shown.
func (v *liveView) show(ev apiclient.Event) (stopped bool, failure string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.since = time.Now()
	typed, err := event.Decode(ev.Name, ev.Data)
	if err != nil {
		return false, ""
	}
	switch e := typed.(type) {
	case *event.Token:
		v.clearProgress()
		fmt.Fprint(v.w, clean(e.Data))
		v.midLine = !strings.HasSuffix(e.Data, "\n")
	case *event.Data:
		v.showData(e.Data)
	case *event.TaskStarted:
		v.newline()
		fmt.Fprintf(v.w, "%s %s %s\n", v.st.cyan("→"), v.st.bold(e.Kind), v.st.dim(string(e.Arguments)))
	case *event.Waiting:
		v.newline()
		if e.Reason == agentsdk.WaitApproval {
			showPending(v.w, v.st, e.PendingToolCalls)
			return true, ""
		}
		fmt.Fprintln(v.w, v.st.dim("waiting for input"))
		return true, ""
	case *event.Completed:
		v.newline()
		fmt.Fprintln(v.w, v.st.green("completed")+v.st.dim(" ("+e.StopReason+")"))
		return true, ""
	case *event.Failed:
		v.newline()
		fmt.Fprintln(v.w, v.st.red("failed: "+e.Error))
		return true, "failed: " + e.Error
	case *event.Paused:
		v.newline()
		fmt.Fprintln(v.w, v.st.dim(fmt.Sprintf("paused after %d steps (its budget); continue it with: agentree resume %s", e.Steps, e.AgentExecutionID)))
		return true, ""
	case *event.Cancelled:
		v.newline()
		fmt.Fprintln(v.w, v.st.red("cancelled"))
		return true, "cancelled"
	}
	return false, ""
}

// interrupted says the stream broke and is being resumed (apiclient.Follow
// resumes it after the last event shown).
func (v *liveView) interrupted(why error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	msg := why.Error()
	var ae *apiclient.Error
	if errors.As(why, &ae) && ae.Message != "" {
		msg = ae.Message
	}
	v.newline()
	fmt.Fprintln(v.w, v.st.dim("stream interrupted: "+clean(msg)+"; reconnecting"))
}

// showData prints the data payloads a terminal shows: thinking, dimmed,
// and each tool call's outcome.
func (v *liveView) showData(p event.Payload) {
	switch p.Type {
	case event.TypeThinkingDelta:
		v.clearProgress()
		fmt.Fprint(v.w, v.st.dim(p.Text))
		v.midLine = true
	case event.TypeToolResult:
		v.newline()
		if p.ToolCall != nil && p.Result != nil {
			mark := v.st.green("✓")
			if p.Result.IsError {
				mark = v.st.red("✗")
			}
			preview := strings.ReplaceAll(p.Result.Preview, "\n", " ")
			if len(preview) > 100 {
				preview = preview[:100] + "…"
			}
			fmt.Fprintf(v.w, "%s %s %s\n", mark, clean(p.ToolCall.Name), v.st.dim(preview))
		}
	}
}
