package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"
)

// scaleN times the model-call overhead at call 10, 100 and 1,000 of one
// Agentree conversation (small tool outputs): Agentree keeps references,
// not the conversation, in workflow state, so a call late in a long
// conversation should cost what an early one does. The overhead at call n
// is the median of the intervals between consecutive model calls' starts
// in a window around n (-scale-window of them), minus the model's own
// delay, as short takes it. The naive pattern's column stops at
// -scale-naive-calls: its history grows with the square of the calls.
func (b *bench) scaleN(ctx context.Context, r *report, trace io.Writer) error {
	c := b.cfg
	points := c.ScalePoints
	t := r.table(fmt.Sprintf("scale_n: model-call overhead (interval between call starts minus the model's %s) at call n of one %d-call conversation; median of %d intervals around n",
		c.ModelDelay, points[len(points)-1], c.ScaleWindow), append(append([]string{""}, pointHeaders(points)...), "last / first")...)
	runs := []struct {
		s     system
		calls int
	}{{agentree{b: b}, points[len(points)-1]}}
	if c.ScaleNaiveCalls > 0 {
		runs = append(runs, struct {
			s     system
			calls int
		}{b.naiveSystem(agentreeToolHeartbeat), min(c.ScaleNaiveCalls, points[len(points)-1])})
	}
	for _, run := range runs {
		o, err := b.converse(ctx, run.s, run.calls, int(c.ScaleConversation), int(c.ScaleToolOutput))
		if err == nil && (o.Status != "COMPLETED" || o.Calls != run.calls) {
			err = fmt.Errorf("%d of %d calls, %s %s", o.Calls, run.calls, o.Status, o.Reason)
		}
		if err != nil {
			return fmt.Errorf("bench: scale_n, %s: %w", run.s.name(), err)
		}
		if err := b.trace(ctx, trace, run.s, o); err != nil {
			return err
		}
		prefix := "scale_n_"
		if run.s.name() != nameAgentree {
			prefix += run.s.name() + "_"
		}
		row := []any{run.s.name()}
		var first, last time.Duration
		for i, n := range points {
			if n > run.calls {
				row = append(row, "")
				continue
			}
			d := overheadAt(o.Intervals, n, c.ScaleWindow) - c.ModelDelay
			r.add(fmt.Sprintf("%scall%d_ms", prefix, n), d)
			row = append(row, d)
			if i == 0 {
				first = d
			}
			last = d
		}
		r.add(prefix+"ratio", ratio(last, first))
		t.row(append(row, ratio(last, first))...)
	}
	return nil
}

// overheadAt is the median of window intervals around call n (1-based;
// interval i is from the start of call i+1 to the start of call i+2),
// the window shifted to stay inside the conversation.
func overheadAt(intervals []time.Duration, n, window int) time.Duration {
	window = max(1, min(window, len(intervals)))
	lo := max(0, min(n-1-window/2, len(intervals)-window))
	return percentile(intervals[lo:lo+window], .5)
}

func pointHeaders(points []int) []string {
	h := make([]string, len(points))
	for i, n := range points {
		h[i] = fmt.Sprintf("call %d", n)
	}
	return h
}

// intList is a flag of comma-separated positive whole numbers, ascending.
type intList []int

func (l *intList) String() string { return fmt.Sprint([]int(*l)) }

func (l *intList) Set(s string) error {
	var out []int
	for _, f := range splitComma(s) {
		var n int
		if _, err := fmt.Sscan(f, &n); err != nil || n < 1 {
			return fmt.Errorf("bench: %q is not a positive whole number", f)
		}
		out = append(out, n)
	}
	if len(out) == 0 || !slices.IsSorted(out) {
		return fmt.Errorf("bench: %q: give call numbers in ascending order", s)
	}
	*l = out
	return nil
}
