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
		"system", fmt.Sprintf("calls (of %d)", c.LongCalls), "status", "runs", "largest run", "events", "total history", "events", "wall")
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
		r.add(n+"_max_run_history_bytes", bytesOf(big.Bytes))
		r.add(n+"_max_run_history_events", big.Events)
		r.add(n+"_total_history_bytes", bytesOf(bytes))
		r.add(n+"_wall_ms", o.Wall)
		status := o.Status
		if o.Reason != "" {
			status += ": " + o.Reason
		}
		t.row(s.name(), o.Calls, status, len(o.Runs), bytesOf(big.Bytes), big.Events, bytesOf(bytes), events, o.Wall)
	}
	_, aBytes := outs[nameAgentree].total()
	_, nBytes := outs[nameNaive].total()
	r.add("long_history_ratio", ratio(nBytes, aBytes))

	r.target("long: Agentree completes every call", func(f figures) (bool, string) {
		return f.text("long_agentree_status") == "COMPLETED" && int(f.num("long_agentree_calls")) == c.LongCalls,
			fmt.Sprintf("%s/%d %s", f.text("long_agentree_calls"), c.LongCalls, f.text("long_agentree_status"))
	})
	r.target("long: Agentree's largest run <= 64 KiB", func(f figures) (bool, string) {
		b := f["long_agentree_max_run_history_bytes"]
		return b.num <= 64<<10, b.cell()
	})
	r.target("long: naive terminated by the server, or Agentree's total >= 25x smaller", func(f figures) (bool, string) {
		st, smaller := f.text("long_naive_status"), f.num("long_history_ratio")
		return st == "TERMINATED" || smaller >= 25, fmt.Sprintf("naive %s, %.1fx smaller", st, smaller)
	})
	return nil
}
