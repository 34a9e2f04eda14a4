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
		r.add("short_"+name+"_total_history_bytes", bytes)
		t.row(name, fmtMs(percentile(ts, .5)), fmtMs(percentile(ts, .95)), fmt.Sprint(len(ts)), formatBytes(bytes))
	}
	t.row("floor: no-op activity", fmtMs(percentile(floor, .5)), fmtMs(percentile(floor, .95)), fmt.Sprint(len(floor)), "")

	a, n, f := percentile(times[nameAgentree], .5), percentile(times[nameNaive], .5), percentile(floor, .5)
	overhead := a - c.ModelDelay
	r.add("short_ratio_p50", ratio(a, n))
	r.add("short_ratio_p95", ratio(percentile(times[nameAgentree], .95), percentile(times[nameNaive], .95)))
	r.add("floor_activity_ms", f)
	r.add("floor_activity_p95_ms", percentile(floor, .95))
	r.add("short_agentree_overhead_ms", overhead)
	r.add("short_overhead_floor_ratio", ratio(overhead, f))
	t.row("agentree / naive", fmt.Sprintf("%.2f", ratio(a, n)), "", "", "")
	l := percentile(times[nameLocal], .5)
	r.add("short_local_ratio_p50", ratio(l, a))
	t.row("agentree local / remote", fmt.Sprintf("%.2f", ratio(l, a)), "", "", "")
	tr := percentile(times[nameTraced], .5)
	r.add("short_tracing_ratio_p50", ratio(tr, a))
	t.row("agentree tracing on / off", fmt.Sprintf("%.2f", ratio(tr, a)), "", "", "")

	if err := b.reportActions(ctx, r, []system{agentree{b: b}, naive{b, agentreeToolHeartbeat}}, last); err != nil {
		return err
	}
	r.target("short: Agentree's p50 <= 0.5 x naive's", ratio(a, n) <= 0.5, fmt.Sprintf("%s vs %s = %.2f", fmtMs(a), fmtMs(n), ratio(a, n)))
	r.target("short: Agentree's overhead over the model <= 2 x floor", ratio(overhead, f) <= 2,
		fmt.Sprintf("%s vs floor %s = %.2f x", fmtMs(overhead), fmtMs(f), ratio(overhead, f)))
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
