package main

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agentree/agentree/agentsdk/scripted"
	"github.com/agentree/agentree/entrystore"
)

// How the soak is judged (soak.go). Each figure is flat when the mean of
// the last third of its samples is within a bound of the second third's
// (the first third is warm-up: pools filling, the heap growing to its
// working size).
//
// A sample is made of the reads of its window (soaksample.go, steadyOf)
// that no fault cut into: a read within a fault or the soakFaultQuiet
// after it (plus an outage's length) sees the fault (calls stalled,
// retries piling up, pools reconnecting), not the steady state a leak
// shows in. A window a fault cut into whole (one shorter than the
// fault's quiet time) is judged over all its reads, marked "(fault)".
//
// The workers' goroutines are judged together, as a fleet: the sum over
// the workers at each read, and a sample the floor of those sums. One
// worker's goroutines follow its share of the executions (each cached
// execution and call in flight holds some), and the share moves: when a
// worker is killed the other takes its executions, and they stay where
// they went. On a 10-minute soak a worker's floor went from 50 to 63 and
// back as it did (9.9 % between the thirds) while the fleet's moved by
// 1 %. A leak in any worker still raises the sum. Each run's own figure
// is shown beside it.
//
// A process a fault killed and its supervisor restarted starts from
// nothing: its samples are not comparable with its predecessor's. So a
// process's samples are split by PID into runs, each run is judged against
// itself (its own second and last thirds, over the samples it lived
// for), and the figure is the worst run's. A run of fewer than
// soakMinRunSamples samples is too short to judge (its second third is
// still its warm-up: a gateway's first 3 samples, idle start included,
// read 25 then 30 goroutines) and is not judged;
// a process none of whose runs is judged fails the soak.
//
// The p99 drift compares the p99 of all the intervals of the second third
// with that of the last third's (the table shows each window's own p50
// and p99).
//
// The per-call overhead is the interval from a model call's answer to the
// next model call of the same turn, minus the one tool call between them
// (-tool-delay): the engine's own time per call, as make bench measures
// it. Intervals a fault cut into (overlapping the fault or the
// soakFaultQuiet after it, plus an outage's length) are left out: the
// drift compares the steady state, and chaos_worker_recovery_* times the
// faults.

const (
	soakMinRunSamples = 5
	soakFaultQuiet    = 20 * time.Second
)

// soakRun is one run (PID) of a process and its growth figures.
type soakRun struct {
	Process              string
	PID, Samples         int
	RSS, Goroutines, FDs float64 // growth, percent
	Judged               bool
}

// soakFleet is the runs' row of the workers together.
const soakFleet = "workers"

// soakWindow is the interval before a sample: the model calls ended by
// its end and the overheads of the calls started in it.
type soakWindow struct {
	End      time.Time
	Calls    int
	P50, P99 time.Duration
	N        int
}

// soakResult is the soak's samples and what they say.
type soakResult struct {
	cfg     config
	samples []*soakSample
	windows []soakWindow
	runs    []soakRun
	// RSS and FDs are the worst run's growth, percent; Goroutines the
	// worse of the workers' together (Fleet) and the gateway's worst run.
	RSS, Goroutines, FDs float64
	Fleet                float64
	P50, P99             time.Duration // over every interval kept
	// P99Second and P99Last are the p99 of the second and the last
	// third's intervals; P99Drift is the last over the second, percent.
	P99Second, P99Last time.Duration
	P99Drift           float64
	// P50Second, P50Last and P50Drift are the same for the median: an
	// overhead growing with the run (a scan, a lock) moves it as well, and
	// it is not one or two intervals, as a short soak's p99 is.
	P50Second, P50Last time.Duration
	P50Drift           float64
	// P99WindowDrift is the mean of the last third's windows' p99s over
	// the second third's, percent: shown, not judged (see judgeOverhead).
	P99WindowDrift float64
	PGMax, Pools   int
	// TableGrowth is each table's growth in bytes per model call, from
	// the first sample to the last; TableTotal all of them together.
	TableGrowth map[string]float64
	TableTotal  float64
	Calls       int
	failures    []string
}

// result judges the samples taken; faults are the soak's.
func (s *sampler) result(faults []*fault) *soakResult {
	cfg := s.c.cfg
	s.mu.Lock()
	r := &soakResult{cfg: cfg, samples: s.samples, PGMax: s.pgMax, TableGrowth: map[string]float64{},
		// Every worker's pool and the gateway's, and the gateway's one
		// LISTEN connection (gateway/hub.go).
		Pools: (cfg.Workers+1)*entrystore.DefaultPoolConns + 1}
	s.mu.Unlock()
	calls, err := readCallLog(s.c.callLog())
	if err != nil {
		r.fail("model-call log: %v", err)
	}
	r.steady(faults)
	r.judgeRuns()
	r.judgeOverhead(calls, faults)
	r.judgeTables()
	if r.PGMax > r.Pools {
		r.fail("%d Postgres connections at once, more than the configured pools' %d", r.PGMax, r.Pools)
	}
	return r
}

func (r *soakResult) fail(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}

// ok reports whether every soak bound held (true outside the soak mode).
func (r *soakResult) ok() bool { return r == nil || len(r.failures) == 0 }

// thirds returns the second and the last third of xs.
func thirds[T any](xs []T) (second, last []T) {
	n := len(xs)
	return xs[n/3 : 2*n/3], xs[2*n/3:]
}

// growth is the last third's mean over the second third's, in percent.
func growth(xs []float64) float64 {
	second, last := thirds(xs)
	if len(second) == 0 || len(last) == 0 {
		return 0
	}
	return pctOver(mean(second), mean(last))
}

// pctOver is last over second, in percent; 0 when second is not positive.
func pctOver(second, last float64) float64 {
	if second <= 0 {
		return 0
	}
	return (last/second - 1) * 100
}

func mean(xs []float64) float64 {
	var sum float64
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

// steady takes every sample's figures again over its reads no fault cut
// into, and the workers' goroutines together. A sample every read of
// whose window a fault cut into (a window shorter than a fault's quiet
// time, as in TestSoakSmall's) keeps its figures over all of them, marked
// faulted.
func (r *soakResult) steady(faults []*fault) {
	quiet := func(at time.Time) bool { return !cutByFault(at, at, faults, r.cfg.OutageLength) }
	for _, sm := range r.samples {
		if sm.workers = r.workersFloor(sm.Reads, quiet); sm.workers < 0 {
			sm.workers = r.workersFloor(sm.Reads, nil)
		}
		for name, all := range sm.Procs {
			p, ok := steadyOf(name, sm.Reads, quiet)
			if !ok {
				p, p.faulted = all, true
			}
			sm.Procs[name] = p
		}
	}
}

// workersFloor is the floor of the workers' goroutines together over the
// reads keep keeps (nil: all) that every worker answered; -1 if none.
func (r *soakResult) workersFloor(reads []procRead, keep func(time.Time) bool) int {
	floor := -1
	for _, rd := range reads {
		if sum, ok := r.workersOf(rd); ok && (keep == nil || keep(rd.At)) && (floor < 0 || sum < floor) {
			floor = sum
		}
	}
	return floor
}

// workersOf is the workers' goroutines together at one read, if every
// worker answered it.
func (r *soakResult) workersOf(rd procRead) (int, bool) {
	sum := 0
	for i := range r.cfg.Workers {
		p, ok := rd.Procs[workerName(i)]
		if !ok || p.Goroutines < 0 {
			return 0, false
		}
		sum += p.Goroutines
	}
	return sum, true
}

func isWorker(name string) bool { return strings.HasPrefix(name, "worker-") }

func (r *soakResult) judgeRuns() {
	names := map[string]bool{}
	for _, sm := range r.samples {
		for name := range sm.Procs {
			names[name] = true
		}
	}
	anyJudged := false
	var gateway []float64 // its judged runs' goroutine growth
	for _, name := range slices.Sorted(maps.Keys(names)) {
		var runs [][]procSample
		for _, sm := range r.samples {
			p, ok := sm.Procs[name]
			if !ok {
				continue
			}
			if len(runs) == 0 || runs[len(runs)-1][0].PID != p.PID {
				runs = append(runs, nil)
			}
			runs[len(runs)-1] = append(runs[len(runs)-1], p)
		}
		judged := false
		for _, run := range runs {
			sr := soakRun{Process: name, PID: run[0].PID, Samples: len(run), Judged: len(run) >= soakMinRunSamples}
			if sr.Judged {
				var rss, gor, fds []float64
				for _, p := range run {
					rss, fds = append(rss, float64(p.RSS)), append(fds, float64(p.FDs))
					if p.Goroutines >= 0 {
						gor = append(gor, float64(p.Goroutines))
					}
				}
				sr.RSS, sr.Goroutines, sr.FDs = growth(rss), growth(gor), growth(fds)
				if !anyJudged {
					// The worst run's figure, even when every run shrank.
					r.RSS, r.FDs = sr.RSS, sr.FDs
				}
				r.RSS, r.FDs = max(r.RSS, sr.RSS), max(r.FDs, sr.FDs)
				if !isWorker(name) {
					gateway = append(gateway, sr.Goroutines)
				}
				judged, anyJudged = true, true
			}
			r.runs = append(r.runs, sr)
		}
		if !judged {
			r.fail("%s: no run of it lasted %d samples", name, soakMinRunSamples)
		}
	}
	var fleet []float64
	for _, sm := range r.samples {
		if sm.workers >= 0 {
			fleet = append(fleet, float64(sm.workers))
		}
	}
	if len(fleet) < soakMinRunSamples {
		r.fail("the workers' goroutines together: %d samples with every worker read, fewer than %d", len(fleet), soakMinRunSamples)
	}
	r.Fleet = growth(fleet)
	r.runs = append(r.runs, soakRun{Process: soakFleet, Samples: len(fleet), Goroutines: r.Fleet, Judged: true})
	r.Goroutines = slices.Max(append(gateway, r.Fleet))
	want := r.cfg.Workers + 1
	if len(names) < want {
		r.fail("samples of %d processes, not the %d workers and the gateway", len(names), r.cfg.Workers)
	}
	for _, b := range []struct {
		what       string
		got, bound float64
	}{{"RSS", r.RSS, r.cfg.SoakMaxRSSGrowth}, {"goroutine", r.Goroutines, r.cfg.SoakMaxGoroutineGrowth}, {"open-FD", r.FDs, r.cfg.SoakMaxFDGrowth}} {
		if b.got > b.bound {
			r.fail("%s growth %.1f %% over the bound %.0f %%", b.what, b.got, b.bound)
		}
	}
}

// overheadSample is one interval between a model call's answer and the
// next call of its turn, less the tool call between.
type overheadSample struct {
	next time.Time
	d    time.Duration
}

// overheads pairs the calls of the model-call log: the first end of turn
// k and the first start of turn k+1 of one user message (its text carries
// the message's tag, unique in the run).
func overheads(calls []scripted.CallRecord, toolDelay time.Duration, faults []*fault, outage time.Duration) []overheadSample {
	type key struct {
		user string
		turn int
	}
	ends, starts := map[key]time.Time{}, map[key]time.Time{}
	first := func(m map[key]time.Time, k key, at time.Time) {
		if t, ok := m[k]; !ok || at.Before(t) {
			m[k] = at
		}
	}
	for _, c := range calls {
		switch c.Phase {
		case "end":
			first(ends, key{c.User, c.Turn}, c.At)
		case "start":
			first(starts, key{c.User, c.Turn}, c.At)
		}
	}
	var out []overheadSample
	for k, end := range ends {
		next, ok := starts[key{k.user, k.turn + 1}]
		if !ok || next.Before(end) || cutByFault(end, next, faults, outage) {
			continue
		}
		out = append(out, overheadSample{next: next, d: next.Sub(end) - toolDelay})
	}
	return out
}

// cutByFault reports whether [from, to] overlaps a fault or its quiet
// time after.
func cutByFault(from, to time.Time, faults []*fault, outage time.Duration) bool {
	for _, f := range faults {
		quiet := soakFaultQuiet
		if f.Kind == postgresOutage {
			quiet += outage
		}
		if !to.Before(f.At) && !from.After(f.At.Add(quiet)) {
			return true
		}
	}
	return false
}

func (r *soakResult) judgeOverhead(calls []scripted.CallRecord, faults []*fault) {
	all := overheads(calls, r.cfg.ToolDelay, faults, r.cfg.OutageLength)
	var ds []time.Duration
	for _, o := range all {
		ds = append(ds, o.d)
	}
	r.P50, r.P99 = percentile(ds, .5), percentile(ds, .99)
	for i := 1; i < len(r.samples); i++ {
		from, to := r.samples[i-1].At, r.samples[i].At
		w := soakWindow{End: to}
		var in []time.Duration
		for _, o := range all {
			if o.next.After(from) && !o.next.After(to) {
				in = append(in, o.d)
			}
		}
		for _, c := range calls {
			if c.Phase == "end" && !c.At.After(to) {
				w.Calls++
			}
		}
		w.N, w.P50, w.P99 = len(in), percentile(in, .5), percentile(in, .99)
		r.windows = append(r.windows, w)
	}
	if n := len(r.windows); n > 0 {
		r.Calls = r.windows[n-1].Calls
	}
	var p99s []float64
	for _, w := range r.windows {
		if w.N > 0 {
			p99s = append(p99s, float64(w.P99))
		}
	}
	second, last := thirds(p99s)
	if len(second) == 0 || len(last) == 0 {
		r.fail("too few windows with model calls to compare p99s (%d)", len(p99s))
		return
	}
	r.P99WindowDrift = growth(p99s)
	// The drift judged pools each third's intervals: a window's own p99,
	// of the 50–150 intervals a minute of the default soak has, is its
	// largest one or two, and their mean moved by 80 % between thirds of
	// a steady 2-minute run.
	secondW, lastW := thirds(r.windows)
	pooled := func(ws []soakWindow, q float64) time.Duration {
		if len(ws) == 0 {
			return 0
		}
		from, to := ws[0].End.Add(-r.cfg.SoakSample), ws[len(ws)-1].End
		var in []time.Duration
		for _, o := range all {
			if o.next.After(from) && !o.next.After(to) {
				in = append(in, o.d)
			}
		}
		return percentile(in, q)
	}
	drift := func(second, last time.Duration) float64 { return pctOver(float64(second), float64(last)) }
	r.P99Second, r.P99Last = pooled(secondW, .99), pooled(lastW, .99)
	r.P99Drift = drift(r.P99Second, r.P99Last)
	if r.P99Drift > r.cfg.SoakMaxP99Drift {
		r.fail("p99 per-call overhead drift %.1f %% over the bound %.0f %%", r.P99Drift, r.cfg.SoakMaxP99Drift)
	}
	r.P50Second, r.P50Last = pooled(secondW, .5), pooled(lastW, .5)
	r.P50Drift = drift(r.P50Second, r.P50Last)
	if r.P50Drift > r.cfg.SoakMaxP50Drift {
		r.fail("median per-call overhead drift %.1f %% over the bound %.0f %%", r.P50Drift, r.cfg.SoakMaxP50Drift)
	}
}

// judgeTables: the tables grow with the work done; per model call, from
// the first sample that read them to the last, they must stay within
// -soak-max-table-bytes-per-call together.
func (r *soakResult) judgeTables() {
	var first, last *soakSample
	var firstCalls, lastCalls int
	for i, sm := range r.samples {
		if sm.Tables == nil {
			continue
		}
		calls := 0
		if i > 0 && i-1 < len(r.windows) {
			calls = r.windows[i-1].Calls
		}
		if first == nil {
			first, firstCalls = sm, calls
		}
		last, lastCalls = sm, calls
	}
	if first == nil || lastCalls <= firstCalls {
		r.fail("no table growth to judge: no model call between two samples that read the tables")
		return
	}
	var total int64
	for name, n := range last.Tables {
		d := n - first.Tables[name]
		total += d
		r.TableGrowth[name] = float64(d) / float64(lastCalls-firstCalls)
	}
	r.TableTotal = float64(total) / float64(lastCalls-firstCalls)
	if r.TableTotal > r.cfg.SoakMaxTableBytes {
		r.fail("the tables grew %.0f bytes per model call, over the bound %.0f", r.TableTotal, r.cfg.SoakMaxTableBytes)
	}
}

// print writes the samples, the runs and the soak_ figures; nothing
// outside the soak mode.
func (r *soakResult) print(w io.Writer) {
	if r == nil {
		return
	}
	fmt.Fprintf(w, "\nsoak: %s, %d conversations at once, a fault every %s, a sample every %s (RSS mean/goroutine floor/open-FD floor per process)\n",
		r.cfg.SoakDuration, r.cfg.SoakConversations, r.cfg.SoakFaultEvery, r.cfg.SoakSample)
	names := map[string]bool{}
	for _, sm := range r.samples {
		for n := range sm.Procs {
			names[n] = true
		}
	}
	procs := slices.Sorted(maps.Keys(names))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "t\t%s\tworkers' goroutines\tpg conns\ttables MB\tmodel calls\toverhead p50 ms\tp99 ms\tn\tload\t\n", strings.Join(procs, "\t"))
	for i, sm := range r.samples {
		var cols []string
		for _, n := range procs {
			p, ok := sm.Procs[n]
			if !ok {
				cols = append(cols, "down")
				continue
			}
			mark := ""
			if p.faulted {
				mark = " (fault)"
			}
			cols = append(cols, fmt.Sprintf("%.0fMB/%d/%d%s", mb(p.RSS), p.Goroutines, p.FDs, mark))
		}
		var tables int64
		for _, n := range sm.Tables {
			tables += n
		}
		calls, p50, p99, n := "-", "-", "-", "-"
		if i > 0 {
			wd := r.windows[i-1]
			calls, n = fmt.Sprint(wd.Calls), fmt.Sprint(wd.N)
			p50, p99 = fmt.Sprintf("%.0f", ms(wd.P50)), fmt.Sprintf("%.0f", ms(wd.P99))
		}
		fleet := "-"
		if sm.workers >= 0 {
			fleet = fmt.Sprint(sm.workers)
		}
		fmt.Fprintf(tw, "+%s\t%s\t%s\t%d\t%.1f\t%s\t%s\t%s\t%s\t%.1f\t\n", sm.At.Sub(r.samples[0].At).Round(time.Second),
			strings.Join(cols, "\t"), fleet, sm.pgTotal(), mb(tables), calls, p50, p99, n, sm.Load)
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "process\tpid\tsamples\tRSS growth %\tgoroutine growth %\topen-FD growth %")
	for _, sr := range r.runs {
		if !sr.Judged {
			fmt.Fprintf(tw, "%s\t%d\t%d\t(too short to judge)\t\t\n", sr.Process, sr.PID, sr.Samples)
			continue
		}
		if sr.Process == soakFleet {
			fmt.Fprintf(tw, "%s (together)\t\t%d\t\t%.1f\t\n", sr.Process, sr.Samples, sr.Goroutines)
			continue
		}
		gor := fmt.Sprintf("%.1f", sr.Goroutines)
		if isWorker(sr.Process) {
			gor = "(" + gor + ", shown)"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.1f\t%s\t%.1f\n", sr.Process, sr.PID, sr.Samples, sr.RSS, gor, sr.FDs)
	}
	tw.Flush()
	for _, f := range r.failures {
		fmt.Fprintf(w, "soak: FAILED: %s\n", f)
	}
	fmt.Fprintln(w)
	figures := []figure{
		{"soak_duration_s", seconds(r.cfg.SoakDuration)},
		{"soak_samples", len(r.samples)},
		{"soak_model_calls", r.Calls},
		{"soak_rss_growth_pct", pct(r.RSS)},
		{"soak_goroutine_growth_pct", pct(r.Goroutines)},
		{"soak_fd_growth_pct", pct(r.FDs)},
		{"soak_overhead_p50_ms", fmt.Sprintf("%.0f", ms(r.P50))},
		{"soak_overhead_p99_ms", fmt.Sprintf("%.0f", ms(r.P99))},
		{"soak_overhead_p99_second_third_ms", fmt.Sprintf("%.0f", ms(r.P99Second))},
		{"soak_overhead_p99_last_third_ms", fmt.Sprintf("%.0f", ms(r.P99Last))},
		{"soak_p99_drift_pct", pct(r.P99Drift)},
		{"soak_overhead_p50_second_third_ms", fmt.Sprintf("%.1f", ms(r.P50Second))},
		{"soak_overhead_p50_last_third_ms", fmt.Sprintf("%.1f", ms(r.P50Last))},
		{"soak_p50_drift_pct", pct(r.P50Drift)},
		{"soak_p99_window_mean_drift_pct", pct(r.P99WindowDrift)},
		{"soak_load_second_third", fmt.Sprintf("%.1f", r.loadMean(1))},
		{"soak_load_last_third", fmt.Sprintf("%.1f", r.loadMean(2))},
		{"soak_pg_connections_max", r.PGMax},
		{"soak_pg_pools", r.Pools},
	}
	for _, name := range slices.SortedFunc(maps.Keys(r.TableGrowth), func(a, b string) int {
		return cmp.Compare(r.TableGrowth[b], r.TableGrowth[a])
	}) {
		if r.TableGrowth[name] < 1 {
			continue
		}
		figures = append(figures, figure{"soak_table_growth_" + name + "_bytes_per_call", fmt.Sprintf("%.0f", r.TableGrowth[name])})
	}
	figures = append(figures, []figure{
		{"soak_table_growth_bytes_per_call", fmt.Sprintf("%.0f", r.TableTotal)},
		{"soak_table_growth_bound_bytes_per_call", fmt.Sprintf("%.0f", r.cfg.SoakMaxTableBytes)},
		{"soak_failures", len(r.failures)},
	}...)
	printFigures(w, figures)
}

func pct(x float64) string                      { return fmt.Sprintf("%.1f", x) }
func ms(d time.Duration) float64                { return float64(d) / float64(time.Millisecond) }
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// loadMean is the mean load average of the samples of a third (1: the
// second, 2: the last), to read the p99 drift against.
func (r *soakResult) loadMean(third int) float64 {
	second, last := thirds(r.samples)
	ss := second
	if third == 2 {
		ss = last
	}
	var xs []float64
	for _, sm := range ss {
		if sm.Load >= 0 {
			xs = append(xs, sm.Load)
		}
	}
	if len(xs) == 0 {
		return 0
	}
	return mean(xs)
}
