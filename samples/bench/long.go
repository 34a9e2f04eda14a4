package main

import (
	"context"
	"fmt"
	"io"
)

// long runs one long conversation on each system: the history each needs.
func (b *bench) long(ctx context.Context, r *report, trace io.Writer) error {
	c := b.cfg
	t := r.table(fmt.Sprintf("long: %d model calls, %s initial conversation, %s per tool output",
		c.LongCalls, formatBytes(int64(c.LongConversation)), formatBytes(int64(c.LongToolOutput))),
		"system", "calls", "status", "runs", "largest run", "total history", "wall")
	outs := map[string]outcome{}
	for _, s := range []system{agentree{b: b}, naive{b, agentreeToolHeartbeat}} {
		o, err := b.converse(ctx, s, c.LongCalls, int(c.LongConversation), int(c.LongToolOutput))
		if err != nil {
			return fmt.Errorf("bench: long, %s: %w", s.name(), err)
		}
		outs[s.name()] = o
		if err := b.trace(ctx, trace, s, o); err != nil {
			return err
		}
		big := o.largest()
		events, bytes := o.total()
		n := "long_" + s.name()
		r.add(n+"_calls", o.Calls)
		r.add(n+"_status", o.Status)
		r.add(n+"_runs", len(o.Runs))
		r.add(n+"_max_run_history_bytes", big.Bytes)
		r.add(n+"_max_run_history_events", big.Events)
		r.add(n+"_total_history_bytes", bytes)
		r.add(n+"_wall_ms", o.Wall)
		status := o.Status
		if o.Reason != "" {
			status += ": " + o.Reason
		}
		t.row(s.name(), fmt.Sprintf("%d/%d", o.Calls, c.LongCalls), status, fmt.Sprint(len(o.Runs)),
			fmt.Sprintf("%s (%d events)", formatBytes(big.Bytes), big.Events),
			fmt.Sprintf("%s (%d events)", formatBytes(bytes), events), fmtMs(o.Wall))
	}
	a, n := outs[nameAgentree], outs[nameNaive]
	_, aBytes := a.total()
	_, nBytes := n.total()
	smaller := ratio(nBytes, aBytes)
	r.add("long_history_ratio", smaller)

	r.target("long: Agentree completes every call", a.Status == "COMPLETED" && a.Calls == c.LongCalls,
		fmt.Sprintf("%d/%d %s", a.Calls, c.LongCalls, a.Status))
	r.target("long: Agentree's largest run <= 64 KiB", a.largest().Bytes <= 64<<10, formatBytes(a.largest().Bytes))
	r.target("long: naive terminated by the server, or Agentree's total >= 25x smaller",
		n.Status == "TERMINATED" || smaller >= 25, fmt.Sprintf("naive %s, %.1fx smaller", n.Status, smaller))
	return nil
}
