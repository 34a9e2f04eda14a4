package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"go.temporal.io/sdk/client"
)

// short times each model call of short conversations on both systems,
// against the floor: a no-op activity's round trip on the same server.
func (b *bench) short(ctx context.Context, r *report, trace io.Writer) error {
	c := b.cfg
	var floor []time.Duration
	times := map[string][]time.Duration{}
	last := map[string]outcome{}
	order := []system{agentree{b: b}, naive{b, agentreeToolHeartbeat}, agentreeLocal{agentree{b: b}}, agentree{b: b, traced: true}}
	for range c.ShortRepeat {
		f, err := b.floor(ctx, c.FloorCalls, trace)
		if err != nil {
			return err
		}
		floor = append(floor, f...)
		for _, s := range order {
			o, err := b.converse(ctx, s, c.ShortCalls, int(c.ShortConversation), int(c.ShortToolOutput))
			if err == nil && (o.Status != "COMPLETED" || o.Calls != c.ShortCalls) {
				err = fmt.Errorf("%d of %d calls, %s %s", o.Calls, c.ShortCalls, o.Status, o.Reason)
			}
			if err != nil {
				return fmt.Errorf("bench: short, %s: %w", s.name(), err)
			}
			times[s.name()] = append(times[s.name()], o.Intervals...)
			last[s.name()] = o
			if err := b.trace(ctx, trace, s, o); err != nil {
				return err
			}
		}
		// Alternating which system goes first spreads any drift in the
		// machine's load over both.
		slices.Reverse(order)
		trace = nil
	}

	t := r.table(fmt.Sprintf("short: %d model calls, %s initial conversation, %s per tool output; conversations per system: %d",
		c.ShortCalls, formatBytes(int64(c.ShortConversation)), formatBytes(int64(c.ShortToolOutput)), c.ShortRepeat),
		"", "per-call p50", "per-call p95", "intervals", "total history")
	for _, name := range []string{nameAgentree, nameLocal, nameTraced, nameNaive} {
		ts := times[name]
		_, bytes := last[name].total()
		r.add("short_"+name+"_call_p50_ms", percentile(ts, .5))
		r.add("short_"+name+"_call_p95_ms", percentile(ts, .95))
		r.add("short_"+name+"_total_history_bytes", bytesOf(bytes))
		t.row(name, percentile(ts, .5), percentile(ts, .95), len(ts), bytesOf(bytes))
	}
	t.row("floor: no-op activity", percentile(floor, .5), percentile(floor, .95), len(floor), "")

	a, n, f := percentile(times[nameAgentree], .5), percentile(times[nameNaive], .5), percentile(floor, .5)
	overhead := a - c.ModelDelay
	r.add("short_ratio_p50", ratio(a, n))
	r.add("short_ratio_p95", ratio(percentile(times[nameAgentree], .95), percentile(times[nameNaive], .95)))
	r.add("floor_activity_ms", f)
	r.add("floor_activity_p95_ms", percentile(floor, .95))
	r.add("short_agentree_overhead_ms", overhead)
	r.add("short_overhead_floor_ratio", ratio(overhead, f))
	t.row("agentree / naive", ratio(a, n), "", "", "")
	l := percentile(times[nameLocal], .5)
	r.add("short_local_ratio_p50", ratio(l, a))
	t.row("agentree local / remote", ratio(l, a), "", "", "")
	tr := percentile(times[nameTraced], .5)
	r.add("short_tracing_ratio_p50", ratio(tr, a))
	t.row("agentree tracing on / off", ratio(tr, a), "", "", "")

	if err := b.reportActions(ctx, r, []system{agentree{b: b}, naive{b, agentreeToolHeartbeat}}, last); err != nil {
		return err
	}
	r.target("short: Agentree's p50 <= 0.8 x naive's", func(f figures) (bool, string) {
		return f.num("short_ratio_p50") <= 0.8, fmt.Sprintf("%s vs %s = %s",
			f.ms("short_agentree_call_p50_ms"), f.ms("short_naive_call_p50_ms"), f.text("short_ratio_p50"))
	})
	r.target("short: Agentree's overhead over the model <= 1.3 x floor", func(f figures) (bool, string) {
		return f.num("short_overhead_floor_ratio") <= 1.3, fmt.Sprintf("%s vs floor %s = %s x",
			f.ms("short_agentree_overhead_ms"), f.ms("floor_activity_ms"), f.text("short_overhead_floor_ratio"))
	})
	return nil
}

// floor runs the floor workflow on the naive worker, which has no plugin,
// and returns the intervals between its no-op activities' starts.
func (b *bench) floor(ctx context.Context, calls int, trace io.Writer) ([]time.Duration, error) {
	id := b.newPlanID("floor")
	run, err := b.sys.naive.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: b.queues.Naive},
		FloorWorkflowName, FloorInput{PlanID: id, Calls: calls})
	if err == nil {
		err = run.Get(ctx, nil)
	}
	if err != nil {
		return nil, fmt.Errorf("bench: floor: %w", err)
	}
	if trace != nil {
		evs, err := historyOf(ctx, b.sys.naive, id, "")
		if err != nil {
			return nil, err
		}
		dumpHistory(trace, "floor: "+id, evs[:min(len(evs), 60)], time.Time{})
	}
	return b.calls.intervals(id), nil
}
