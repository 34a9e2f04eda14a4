package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// print writes the report: the faults, the invariants, then one
// name=value line per figure, for scripts.
func (o *outcome) print(w io.Writer) {
	f := o.found
	fmt.Fprintf(w, "Agentree under faults: %s\n\n", o.cfg)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tfault\tat\tin flight\tdetail\terror")
	var t0 time.Time
	if len(o.faults) > 0 {
		t0 = o.faults[0].At
	}
	for i, ft := range o.faults {
		flight := "-"
		if ft.Gated {
			flight = fmt.Sprintf("%d", len(ft.InFlight))
		}
		fmt.Fprintf(tw, "%d\t%s\t+%.1fs\t%s\t%s\t%s\n", i+1, ft.Kind, ft.At.Sub(t0).Seconds(), flight, ft.Detail, ft.Err)
	}
	tw.Flush()
	fmt.Fprintln(w)

	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "invariant\tviolations")
	rows := []struct {
		name string
		n    int
	}{
		{"every acknowledged message is a user entry (lost)", f.Lost},
		{"... exactly once; nothing stored or delivered twice (duplicated)", f.Duplicated},
		{"one chain from root to leaf (entries off it)", f.Forked},
		{"leaf = latest checkpoint's leaf", f.LeafMismatch},
		{"no completed model or tool call run again", f.Rerun},
		{"inbox drained (rows never consumed)", f.InboxPending},
		{"no stored stream event undelivered to its SSE client", f.Undelivered},
		{"SSE events received in ID order (out of order)", f.SSEOutOfOrder},
		{"every stored stream event decodes into its type", f.Undecodable},
		{"no execution FAILED", f.FailedByOutage},
		{"every execution waiting with its last message answered (stuck)", f.Stuck},
	}
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\n", r.name, r.n)
	}
	tw.Flush()
	if len(f.DuplicatedBy) > 0 {
		var parts []string
		for _, k := range slices.Sorted(mapKeys(f.DuplicatedBy)) {
			parts = append(parts, fmt.Sprintf("%s %d", k, f.DuplicatedBy[k]))
		}
		fmt.Fprintf(w, "duplicated: %s\n", strings.Join(parts, ", "))
	}
	if len(f.Examples) > 0 {
		fmt.Fprintln(w, "\nexamples:")
		for _, e := range f.Examples {
			fmt.Fprintln(w, "  "+e)
		}
	}
	fmt.Fprintln(w)

	gated := 0
	for _, ft := range o.faults {
		if ft.Gated {
			gated++
		}
	}
	reconnects := 0
	for _, cv := range o.convs {
		if cv.Follower != nil {
			_, _, n := cv.Follower.snapshot()
			reconnects += n
		}
	}
	figures := []figure{
		{"chaos_seed", o.cfg.Seed},
		{"chaos_conversations", len(o.convs)},
		{"chaos_messages_acked", f.Acked},
		{"chaos_faults", len(o.faults)},
		{"chaos_faults_in_flight", gated},
		{"chaos_sse_reconnects", reconnects},
		{"chaos_lost", f.Lost},
		{"chaos_duplicated", f.Duplicated},
		{"chaos_forked", f.Forked},
		{"chaos_leaf_mismatch", f.LeafMismatch},
		{"chaos_rerun", f.Rerun},
		{"chaos_interrupted", f.Interrupted},
		{"chaos_inbox_pending", f.InboxPending},
		{"chaos_undelivered", f.Undelivered},
		{"chaos_sse_duplicated", f.SSEDuplicated},
		{"chaos_sse_out_of_order", f.SSEOutOfOrder},
		{"chaos_undecodable", f.Undecodable},
		{"chaos_failed_by_outage", f.FailedByOutage},
		{"chaos_stuck", f.Stuck},
		{"chaos_worker_recovery_samples", len(f.Recovery)},
		{"chaos_worker_recovery_kills", f.RecoveryKills},
		{"chaos_worker_unrecovered", f.Unrecovered},
		{"chaos_worker_recovery_overlapped", f.Overlapped},
		{"chaos_worker_recovery_p50_s", seconds(percentile(f.Recovery, 0.50))},
		{"chaos_worker_recovery_p99_s", seconds(percentile(f.Recovery, 0.99))},
		{"chaos_worker_recovery_max_s", seconds(percentile(f.Recovery, 1))},
		{"chaos_cancel_samples", len(f.Cancel)},
		{"chaos_cancel_p50_s", seconds(percentile(f.Cancel, 0.50))},
		{"chaos_cancel_p99_s", seconds(percentile(f.Cancel, 0.99))},
		{"chaos_http_500", o.http500},
		{"chaos_http_503", o.http503},
		{"chaos_duration_s", seconds(o.duration)},
	}
	printFigures(w, figures)
	o.deploy.print(w)
	o.failover.print(w)
}

func mapKeys(m map[string]int) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// percentile is the nearest-rank percentile of ds; 0 with no samples.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(math.Ceil(p*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.1f", d.Seconds()) }

// ok reports whether every invariant held.
func (f *findings) ok() bool {
	return f.Lost+f.Duplicated+f.Forked+f.LeafMismatch+f.Rerun+f.InboxPending+f.Undelivered+f.Undecodable+f.FailedByOutage+f.Stuck+f.Unrecovered == 0
}

// figure is one name=value line of a report.
type figure struct {
	name  string
	value any
}

// printFigures writes figures as name=value lines, in order.
func printFigures(w io.Writer, figures []figure) {
	for _, fg := range figures {
		fmt.Fprintf(w, "%s=%v\n", fg.name, fg.value)
	}
}
