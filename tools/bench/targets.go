package main

import "fmt"

// targetsFor are the targets a set is judged on (issue 33's "Must show",
// and the earlier issues' that still apply), each within the set: set A
// is what each user gets; set C must not lose with everything local;
// every set must start a turn no later than the naive pattern and keep
// Agentree's long conversation complete in small runs.
func targetsFor(set benchSet, c config) []target {
	p := set.prefix()
	most := func(name string, limit float64, shown func(f figures) string) target {
		return target{what: fmt.Sprintf("%s%s <= %g", p, name, limit), needs: []string{name},
			judge: func(f figures) (bool, string) {
				v := f.num(name)
				return v <= limit, shown(f) + unrounded(v, limit)
			}}
	}
	least := func(name string, limit float64, shown func(f figures) string) target {
		return target{what: fmt.Sprintf("%s%s >= %g", p, name, limit), needs: []string{name},
			judge: func(f figures) (bool, string) {
				v := f.num(name)
				return v >= limit, shown(f) + unrounded(v, limit)
			}}
	}
	of := func(a, b, r string) func(f figures) string {
		return func(f figures) string { return fmt.Sprintf("%s vs %s = %s", f.ms(a), f.ms(b), f.text(r)) }
	}
	throughput := of("concurrent_agentree_throughput", "concurrent_naive_throughput", "concurrent_throughput_ratio")
	turnStart := of("concurrent_agentree_turn_start_p50_ms", "concurrent_naive_turn_start_p50_ms", "turn_start_p50_ratio")
	plain := func(name string) func(f figures) string { return func(f figures) string { return f.ms(name) } }

	ts := []target{
		{what: fmt.Sprintf("%slong_agentree_calls = %d, COMPLETED", p, c.LongCalls), needs: []string{"long_agentree_calls"},
			judge: func(f figures) (bool, string) {
				return f.text("long_agentree_status") == "COMPLETED" && int(f.num("long_agentree_calls")) == c.LongCalls,
					fmt.Sprintf("%s/%d %s", f.text("long_agentree_calls"), c.LongCalls, f.text("long_agentree_status"))
			}},
		{what: p + "long_agentree_max_run_history_bytes <= 64 KiB", needs: []string{"long_agentree_max_run_history_bytes"},
			judge: func(f figures) (bool, string) {
				b := f["long_agentree_max_run_history_bytes"]
				return b.num <= 64<<10, b.cell()
			}},
		most("turn_start_p50_ratio", 1.0, turnStart),
		// The turn start at a load both sustain (paced), where the closed
		// loop's measures where a saturated machine's queue forms.
		most("paced_turn_start_p50_ratio", 1.0, of("paced_agentree_turn_start_p50_ms", "paced_naive_turn_start_p50_ms", "paced_turn_start_p50_ratio")),
	}
	switch set.Name {
	case "A":
		ts = append(ts,
			least("concurrent_throughput_ratio", 1.5, throughput),
			most("actions_per_call_ratio", 0.6, of("concurrent_agentree_actions_per_call", "concurrent_naive_actions_per_call", "actions_per_call_ratio")),
			most("short_overhead_floor_ratio", 1.3, of("short_agentree_overhead_ms", "short_agentree_floor_ms", "short_overhead_floor_ratio")),
			most("ttft_added_p50_ms", 40, plain("ttft_added_p50_ms")),
			most("scale_n_ratio", 1.2, plain("scale_n_ratio")),
			most("rss_ratio", 1.5, of("concurrent_agentree_rss_mb", "concurrent_naive_rss_mb", "rss_ratio")),
			most("resume_small_ms", 300, plain("resume_small_ms")),
			// Issue 7's and 18's, still in force.
			most("resume_ratio", 1.2, of("resume_large_ms", "resume_small_ms", "resume_ratio")),
			most("concurrent_agentree_p99_overhead_ms", 250, plain("concurrent_agentree_p99_overhead_ms")),
			// What stays: the stream's rows are the replay window's,
			// pruned after it (storage_ratio counts them too).
			most("storage_durable_ratio", 1.3, plain("storage_durable_ratio")),
		)
	case "C":
		ts = append(ts, least("concurrent_throughput_ratio", 1.0, throughput))
	}
	return ts
}

// unrounded is v with more digits when two decimals would print it as the
// limit it is judged against ("1.50 MISSED" for 1.497 ≥ 1.5), else "".
func unrounded(v, limit float64) string {
	if v != limit && fmt.Sprintf("%.2f", v) == fmt.Sprintf("%.2f", limit) {
		return fmt.Sprintf(" (%.4f)", v)
	}
	return ""
}
