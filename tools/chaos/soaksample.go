package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// What the soak samples (soak.go): every -soak-sample, each worker's and
// the gateway's resident memory and open file descriptors (from /proc) and
// goroutines (go_goroutines at its metrics endpoint), read every
// soakReadEvery in the window (steadyOf makes a sample of the reads); the agentree
// processes' Postgres connections by application_name (launch.go names
// them) and the size of every table of the agentree schema; every second,
// the connections alone, for their peak.

// procSample is one process's figures at one sample.
type procSample struct {
	PID        int
	RSS        int64 // bytes
	FDs        int
	Goroutines int // -1: the metrics endpoint did not answer
	// faulted: a fault cut into every read of the sample's window
	// (soakreport.go, steady): the figures are all the reads'.
	faulted bool
}

// procRead is one read of every process that ran then, by name.
type procRead struct {
	At    time.Time
	Procs map[string]procSample
}

// soakSample is one sample of every process and of the store.
type soakSample struct {
	At time.Time
	// Procs is each process's figures (steadyOf) by name; a process down
	// then is missing. Taken over every read of the window, they are
	// taken again over its steady reads when the soak is judged.
	Procs map[string]procSample
	// Reads are the window's reads, the sample's own last.
	Reads []procRead
	// workers is the workers' goroutines together (soakreport.go, steady);
	// -1 where no steady read had every worker.
	workers int
	// PGConns counts connections by application_name; nil when Postgres
	// did not answer (a restart or an outage).
	PGConns map[string]int
	Tables  map[string]int64 // table → pg_total_relation_size, bytes
	// Load is the machine's 1-minute load average: on a shared machine
	// the overhead's tail follows the other jobs' load, and this says how
	// much there was.
	Load float64
}

// pgTotal is the agentree processes' connections, -1 when unknown.
func (s *soakSample) pgTotal() int {
	if s.PGConns == nil {
		return -1
	}
	n := 0
	for _, v := range s.PGConns {
		n += v
	}
	return n
}

type sampler struct {
	c       *cluster
	start   time.Time
	http    *http.Client
	samples []*soakSample

	mu sync.Mutex
	// pgMax is the most agentree connections seen at once.
	pgMax int
}

func newSampler(c *cluster, start time.Time) *sampler {
	return &sampler{c: c, start: start, http: &http.Client{Timeout: 5 * time.Second}}
}

// run samples at start and every -soak-sample until end, and polls the
// connections meanwhile.
func (s *sampler) run(ctx context.Context, end time.Time) {
	pctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.pollConns(pctx)
	}()
	step := min(soakReadEvery, s.c.cfg.SoakSample/10)
	var reads []procRead
	for k := 0; ; k++ {
		mark := s.start.Add(time.Duration(k) * s.c.cfg.SoakSample)
		if mark.After(end) {
			break
		}
		for time.Now().Add(step).Before(mark) && ctx.Err() == nil {
			_ = sleepCtx(ctx, step)
			reads = append(reads, s.readProcs(ctx))
		}
		if sleepCtx(ctx, time.Until(mark)) != nil {
			break
		}
		sm := s.take(ctx, append(reads, s.readProcs(ctx)))
		reads = nil
		s.samples = append(s.samples, sm)
		s.c.logf("chaos: soak sample %d: %s", k, sm)
	}
	stop()
	wg.Wait()
}

// soakReadEvery is how often (at most; a tenth of -soak-sample when that
// is shorter) the processes are read between samples: a sample is made of
// its window's reads (steadyOf). One read sees how many calls happen to be
// in flight at that instant (each holds goroutines and buffers), which
// alone moved a worker's goroutines by 15 % from one sample to the next
// on a steady 2-minute soak.
const soakReadEvery = 5 * time.Second

// readProcs reads every process that runs. What cannot be read (a process
// down or replaced meanwhile) is left out, not guessed.
func (s *sampler) readProcs(ctx context.Context) procRead {
	out := procRead{At: time.Now(), Procs: map[string]procSample{}}
	for name, p := range s.procs() {
		pid := p.pid()
		if pid == 0 {
			continue
		}
		ps := procSample{PID: pid, Goroutines: -1}
		var err error
		if ps.RSS, err = procRSS(pid); err != nil {
			continue
		}
		if ps.FDs, err = procFDs(pid); err != nil {
			continue
		}
		if g, err := s.goroutines(ctx, s.c.soakMetrics[name]); err == nil {
			ps.Goroutines = g
		}
		if p.pid() != pid {
			continue
		}
		out.Procs[name] = ps
	}
	return out
}

// steadyOf is a process's figures over the reads of the run (PID) read
// last, of those steady says to keep (nil: all): a run that ended in the
// window has nothing to say about the next, and a process down at the
// sample's own read (killed at that instant) is still sampled by its
// window's other reads. It reports false when no read is kept.
//
// RSS is the reads' mean. Goroutines and open FDs are their floor: a
// count of live things moves with the work in flight at the instant it is
// read (each model or tool call holds goroutines, a stream and a
// connection), by as much as a fifth of a worker's goroutines from one
// read to the next, while what leaks stays, and raises the floor under the
// work. The mean of a window's reads still moved a worker's goroutines by
// 11.6 % between the thirds of a steady 10-minute soak.
func steadyOf(name string, reads []procRead, steady func(time.Time) bool) (procSample, bool) {
	var last procSample
	found := false
	for i := len(reads) - 1; i >= 0 && !found; i-- {
		last, found = reads[i].Procs[name]
	}
	if !found {
		return procSample{}, false
	}
	out := procSample{PID: last.PID, FDs: -1, Goroutines: -1}
	var rss, n int64
	for _, r := range reads {
		p, ok := r.Procs[name]
		if !ok || p.PID != last.PID || (steady != nil && !steady(r.At)) {
			continue
		}
		rss, n = rss+p.RSS, n+1
		if out.FDs < 0 || p.FDs < out.FDs {
			out.FDs = p.FDs
		}
		if p.Goroutines >= 0 && (out.Goroutines < 0 || p.Goroutines < out.Goroutines) {
			out.Goroutines = p.Goroutines
		}
	}
	if n == 0 {
		return procSample{}, false
	}
	out.RSS = rss / n
	return out, true
}

func (s *sampler) procs() map[string]*proc {
	out := map[string]*proc{"gateway": s.c.gateway}
	for _, w := range s.c.workers {
		out[w.name] = w
	}
	return out
}

// take is one sample: the processes' figures over reads, Postgres now.
func (s *sampler) take(ctx context.Context, reads []procRead) *soakSample {
	sm := &soakSample{At: time.Now(), Procs: map[string]procSample{}, Reads: reads, Load: loadAverage()}
	for name := range s.procs() {
		if p, ok := steadyOf(name, reads, nil); ok {
			sm.Procs[name] = p
		}
	}
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if conns, err := s.conns(qctx); err == nil {
		sm.PGConns = conns
		s.peak(sm.pgTotal())
	}
	if tables, err := s.tables(qctx); err == nil {
		sm.Tables = tables
	}
	return sm
}

// dump writes every sample, its reads included, to soak-samples.json in
// the run's directory (with -keep, which keeps it), to read the figures
// again.
func (s *sampler) dump() error {
	b, err := json.Marshal(s.samples)
	if err != nil {
		return fmt.Errorf("samples: %w", err)
	}
	return os.WriteFile(filepath.Join(s.c.dir, "soak-samples.json"), b, 0o644)
}

func (s *sampler) peak(n int) {
	s.mu.Lock()
	s.pgMax = max(s.pgMax, n)
	s.mu.Unlock()
}

// pollConns reads the connection count every second: a minute's sample
// would miss a burst of reconnections after a Postgres restart.
func (s *sampler) pollConns(ctx context.Context) {
	for ctx.Err() == nil {
		qctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		conns, err := s.conns(qctx)
		cancel()
		if err == nil {
			n := 0
			for _, v := range conns {
				n += v
			}
			s.peak(n)
		}
		_ = sleepCtx(ctx, time.Second)
	}
}

// conns counts the agentree processes' connections by application_name.
func (s *sampler) conns(ctx context.Context) (map[string]int, error) {
	rows, err := s.c.pool.Query(ctx, `SELECT application_name, count(*) FROM pg_stat_activity
		WHERE application_name LIKE 'chaos-%' GROUP BY application_name`)
	if err != nil {
		return nil, fmt.Errorf("chaos: connections: %w", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var app string
		var n int
		if err := rows.Scan(&app, &n); err != nil {
			return nil, err
		}
		out[strings.TrimPrefix(app, "chaos-")] = n
	}
	return out, rows.Err()
}

// tables is the size of every table of the agentree schema, with its
// indexes and TOAST.
func (s *sampler) tables(ctx context.Context) (map[string]int64, error) {
	rows, err := s.c.pool.Query(ctx, `SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind = 'r'`)
	if err != nil {
		return nil, fmt.Errorf("chaos: table sizes: %w", err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var name string
		var n int64
		if err := rows.Scan(&name, &n); err != nil {
			return nil, err
		}
		out[name] = n
	}
	return out, rows.Err()
}

// goroutines reads go_goroutines from the metrics endpoint at addr.
func (s *sampler) goroutines(ctx context.Context, addr string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return 0, fmt.Errorf("chaos: metrics of %s: %w", addr, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("chaos: metrics of %s: %s", addr, resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		return 0, fmt.Errorf("chaos: metrics of %s: %w", addr, err)
	}
	f := families["go_goroutines"]
	if f == nil || len(f.GetMetric()) == 0 {
		return 0, fmt.Errorf("chaos: metrics of %s: no go_goroutines", addr)
	}
	return int(f.GetMetric()[0].GetGauge().GetValue()), nil
}

// procRSS is a process's resident set size (VmRSS in /proc/<pid>/status).
func procRSS(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("chaos: rss: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("chaos: rss of %d: %w", pid, err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("chaos: rss of %d: no VmRSS", pid)
}

// procFDs counts a process's open file descriptors.
func procFDs(pid int) (int, error) {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return 0, fmt.Errorf("chaos: fds: %w", err)
	}
	return len(ents), nil
}

// String is the sample in one log line.
func (s *soakSample) String() string {
	var b strings.Builder
	for _, name := range sortedKeys(s.Procs) {
		p := s.Procs[name]
		fmt.Fprintf(&b, "%s pid %d rss %.0fMB goroutines %d fds %d; ", name, p.PID, mb(p.RSS), p.Goroutines, p.FDs)
	}
	var total int64
	for _, n := range s.Tables {
		total += n
	}
	fmt.Fprintf(&b, "pg conns %d; tables %.1fMB", s.pgTotal(), mb(total))
	return b.String()
}

func mb(n int64) float64 { return float64(n) / (1 << 20) }

// loadAverage is /proc/loadavg's 1-minute figure, -1 unread.
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	fields := strings.Fields(string(b))
	if len(fields) == 0 {
		return -1
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	if err != nil {
		return -1
	}
	return v
}
