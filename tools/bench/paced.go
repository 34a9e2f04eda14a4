package main

import (
	"context"
	"fmt"
	"io"
	"os"
)

// paced runs -paced-conversations conversations of -paced-turns on each
// system, the turns shaped as concurrent's, but each user message sent
// -paced-think after the system is seen ready for it, and the
// conversations' starts spread over that time: an offered load (about
// conversations / (think + a turn's time) turns a second) that both
// systems sustain on the machine, where concurrent's closed loop keeps it
// saturated.
//
// At saturation a closed loop's turn start measures where each system's
// queue forms rather than how long a turn takes to start: by Little's law
// every conversation's cycle is conversations / throughput, and the
// naive pattern's queue forms inside the turn (its activity task queue:
// the overhead), Agentree's before it (the workflow task that takes the
// message, whose turn then runs in local activities). Below saturation
// the turn start is the path itself: the message's delivery, the
// workflow task, and what runs before the model call.
//
// Per system: `paced_<s>_turn_start_p50_ms`, `_p99_ms`, the throughput
// (model calls over the wall time, the spread starts included), the
// per-call overhead p50, a conversation's start to its first call p50
// and the answer-to-ready gap p99; `paced_turn_start_p50_ratio`.
func (b *bench) paced(ctx context.Context, r *report, _ io.Writer) error {
	c := b.cfg
	dir, err := os.MkdirTemp("", "agentree-bench-paced-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	t := r.table(fmt.Sprintf("paced: %d conversations of %d turns, each user message sent %s after the system is ready for it (starts spread over %s); turns as concurrent's",
		c.PacedConversations, c.PacedTurns, c.PacedThink, c.PacedThink),
		"", "calls/s", "turn start p50", "turn start p99", "overhead p50", "first call p50", "ready gap p99", "model calls")
	res := map[string]concResult{}
	for _, sys := range []string{nameAgentree, nameNaive} {
		cr, err := b.concurrentRun(ctx, dir, sys, load{name: "paced", conversations: c.PacedConversations, turns: c.PacedTurns, think: c.PacedThink})
		if err != nil {
			return fmt.Errorf("bench: paced, %s: %w", sys, err)
		}
		res[sys] = cr
		n := "paced_" + sys + "_"
		tput := float64(cr.calls) / cr.wall.Seconds()
		t50, t99 := percentile(cr.turnStarts, .5), percentile(cr.turnStarts, .99)
		o50, f50, g99 := percentile(cr.overheads, .5), percentile(cr.firstStarts, .5), percentile(cr.readyGaps, .99)
		r.add(n+"throughput", tput)
		r.add(n+"turn_start_p50_ms", t50)
		r.add(n+"turn_start_p99_ms", t99)
		r.add(n+"p50_overhead_ms", o50)
		r.add(n+"first_start_p50_ms", f50)
		r.add(n+"ready_gap_p99_ms", g99)
		t.row(sys, tput, t50, t99, o50, f50, g99, cr.calls)
	}
	ts := ratio(percentile(res[nameAgentree].turnStarts, .5), percentile(res[nameNaive].turnStarts, .5))
	r.add("paced_turn_start_p50_ratio", ts)
	t.row("agentree / naive", "", ts, "", "", "", "", "")
	return nil
}
