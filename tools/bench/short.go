package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"
)

// short times each model call of short conversations on both systems,
// against the floors: a no-op activity's round trip on the same server,
// and a no-op local activity's step. Each system's overhead is judged
// against the floor of its own kind of step in the set: the
// local-activity floor when its model and tool calls are all local, the
// activity floor when a step holds an activity.
func (b *bench) short(ctx context.Context, r *report, trace io.Writer) error {
	c := b.cfg
	// floors[true] are the local-activity floor's intervals.
	floors := map[bool][]time.Duration{}
	times := map[string][]time.Duration{}
	last := map[string]outcome{}
	order := []system{agentree{b: b}, b.naiveSystem(agentreeToolHeartbeat), agentreeWorkerHeld{agentree{b: b}}, agentree{b: b, traced: true}}
	for range c.ShortRepeat {
		for _, local := range []bool{false, true} {
			f, err := b.floor(ctx, c.FloorCalls, local, trace)
			if err != nil {
				return err
			}
			floors[local] = append(floors[local], f...)
		}
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
	for _, name := range []string{nameAgentree, nameWorkerHeld, nameTraced, nameNaive} {
		ts := times[name]
		_, bytes := last[name].total()
		r.add("short_"+name+"_call_p50_ms", percentile(ts, .5))
		r.add("short_"+name+"_call_p95_ms", percentile(ts, .95))
		r.add("short_"+name+"_total_history_bytes", bytesOf(bytes))
		t.row(name, percentile(ts, .5), percentile(ts, .95), len(ts), bytesOf(bytes))
	}
	floor, lfloor := floors[false], floors[true]
	t.row("floor: no-op activity", percentile(floor, .5), percentile(floor, .95), len(floor), "")
	t.row("floor: no-op local activity", fineMs(percentile(lfloor, .5)), fineMs(percentile(lfloor, .95)), len(lfloor), "")

	a, n := percentile(times[nameAgentree], .5), percentile(times[nameNaive], .5)
	r.add("short_ratio_p50", ratio(a, n))
	r.add("short_ratio_p95", ratio(percentile(times[nameAgentree], .95), percentile(times[nameNaive], .95)))
	r.add("floor_activity_ms", percentile(floor, .5))
	r.add("floor_activity_p95_ms", percentile(floor, .95))
	r.add("floor_local_activity_ms", fineMs(percentile(lfloor, .5)))
	r.add("floor_local_activity_p95_ms", fineMs(percentile(lfloor, .95)))
	t.row("agentree / naive", ratio(a, n), "", "", "")
	m := b.set.Mode
	for _, s := range []struct {
		name       string
		p50        time.Duration
		floorLocal bool
	}{{nameAgentree, a, m.agentreeFloorLocal()}, {nameNaive, n, m.naiveFloorLocal()}} {
		overhead, f := s.p50-c.ModelDelay, percentile(floors[s.floorLocal], .5)
		kind := "activity"
		if s.floorLocal {
			kind = "local activity"
		}
		prefix := "short_"
		if s.name != nameAgentree {
			prefix += s.name + "_"
		}
		r.add("short_"+s.name+"_overhead_ms", fineMs(overhead))
		r.add("short_"+s.name+"_floor_ms", fineMs(f))
		r.add(prefix+"overhead_floor_ratio", ratio(overhead, f))
		t.row(fmt.Sprintf("%s: overhead / %s floor", s.name, kind), ratio(overhead, f), "", "", "")
	}
	l := percentile(times[nameWorkerHeld], .5)
	r.add("short_local_ratio_p50", ratio(l, a))
	t.row("agentree local / remote", ratio(l, a), "", "", "")
	tr := percentile(times[nameTraced], .5)
	r.add("short_tracing_ratio_p50", ratio(tr, a))
	t.row("agentree tracing on / off", ratio(tr, a), "", "", "")

	if err := b.reportActions(ctx, r, []system{agentree{b: b}, b.naiveSystem(agentreeToolHeartbeat)}, last); err != nil {
		return err
	}
	return nil
}

// floor runs the floor workflow on the naive worker, which has no plugin,
// and returns the intervals between its no-op activities' starts.
func (b *bench) floor(ctx context.Context, calls int, local bool, trace io.Writer) ([]time.Duration, error) {
	id := b.newPlanID("floor")
	run, err := b.sys.naive.ExecuteWorkflow(ctx, naiveStart(id, b.queues.Naive), FloorWorkflowName, FloorInput{PlanID: id, Calls: calls, Local: local})
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
