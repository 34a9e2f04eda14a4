package main

import (
	"context"
	"fmt"
	"io"
)

// long runs one long conversation on each system: the history each needs,
// and where each stops. Agentree runs -long-calls; the naive pattern
// -long-naive-calls, enough to find its limit in each mode: with its
// model calls as activities the server terminates it past 50 MB of
// history; with local activities its history grows only by the answers
// and tool outputs, but all the local activities of one workflow task
// complete together, and a completion past gRPC's 4 MB message limit is
// refused, again and again: the run is stuck (naive.watch reports it and
// terminates it).
func (b *bench) long(ctx context.Context, r *report, trace io.Writer) error {
	c := b.cfg
	t := r.table(fmt.Sprintf("long: one user turn of model calls, %s initial conversation, %s per tool output",
		formatBytes(int64(c.LongConversation)), formatBytes(int64(c.LongToolOutput))),
		"system", "calls", "status", "runs", "largest run", "events", "total history", "events", "per call", "wall")
	nv := b.naiveSystem(agentreeToolHeartbeat)
	nv.deadline = c.LongDeadline
	perCall := map[string]float64{}
	for _, run := range []struct {
		s     system
		calls int
	}{{agentree{b: b}, c.LongCalls}, {nv, c.LongNaiveCalls}} {
		s := run.s
		o, err := b.converse(ctx, s, run.calls, int(c.LongConversation), int(c.LongToolOutput))
		if err != nil {
			return fmt.Errorf("bench: long, %s: %w", s.name(), err)
		}
		if err := b.trace(ctx, trace, s, o); err != nil {
			return err
		}
		big := o.largest()
		events, bytes := o.total()
		n := "long_" + s.name()
		r.add(n+"_calls", o.Calls)
		r.add(n+"_of", run.calls)
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
		per := any("")
		if o.Calls > 0 {
			perCall[s.name()] = float64(bytes) / float64(o.Calls)
			per = bytesOf(bytes / int64(o.Calls))
			r.add(n+"_history_bytes_per_call", per)
		}
		t.row(s.name(), fmt.Sprintf("%d of %d", o.Calls, run.calls), status, len(o.Runs), bytesOf(big.Bytes), big.Events, bytesOf(bytes), events, per, o.Wall)
	}
	// Per call completed: the two ran different numbers of calls.
	if a, n := perCall[nameAgentree], perCall[nameNaive]; a > 0 && n > 0 {
		r.add("long_history_per_call_ratio", n/a)
	}
	return nil
}
