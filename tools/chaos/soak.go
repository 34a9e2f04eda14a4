package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// The soak mode (-soak, `make soak`, issue 42): the chaos load kept steady
// for -soak-duration instead of one batch, with a fault every
// -soak-fault-every, while soaksample.go samples the workers, the gateway
// and the store every -soak-sample and soakreport.go judges whether they
// stayed flat. What is checked afterwards is check.go's, over every
// conversation the soak started.

// soakOneShotEvery: every this many conversations a slot starts, one is a
// one-shot sent a message while it writes its final answer, so executions
// also end (COMPLETED) throughout, not only wait.
const soakOneShotEvery = 4

// soakCloseWait bounds how long a closed conversation may take to read
// CANCELLED (it takes about 0.2 s: chaos_cancel_p50_s).
const soakCloseWait = 2 * time.Minute

// soakStreamCatchUp bounds how long a finished conversation's SSE client
// gets to receive its execution's last events before it disconnects, as a
// real client would once it has its answer. Kept open, every finished
// conversation's stream would make the gateway's goroutines and FDs grow
// with the run's length: the harness's leak, not the gateway's.
const soakStreamCatchUp = 30 * time.Second

// checkSoak refuses soak flags that cannot make a run.
func (c config) checkSoak() error {
	if !c.Soak {
		return nil
	}
	switch {
	case c.SoakConversations < 1:
		return errors.New("chaos: -soak-conversations must be at least 1")
	case c.SoakSample <= 0 || c.SoakDuration < 3*c.SoakSample:
		return errors.New("chaos: -soak-duration must hold at least 3 samples of -soak-sample (a positive duration): growth compares the last third with the second")
	case c.SoakFaultEvery < 0:
		return errors.New("chaos: -soak-fault-every must not be negative")
	}
	return nil
}

// soakPrepare gives every worker and the gateway a metrics endpoint (their
// goroutines are read there) and writes the workers' configuration files.
func (c *cluster) soakPrepare() error {
	c.soakMetrics = map[string]string{}
	names := []string{"gateway"}
	for i := range c.cfg.Workers {
		names = append(names, workerName(i))
	}
	for _, name := range names {
		port, err := freePort()
		if err != nil {
			return err
		}
		c.soakMetrics[name] = fmt.Sprintf("127.0.0.1:%d", port)
	}
	for i := range c.cfg.Workers {
		yaml := fmt.Sprintf("localActivities:\n  modelCalls: %v\n  toolCalls: %v\nobservability:\n  metricsAddr: %q\n",
			!c.cfg.ActivityModelCalls, !c.cfg.ActivityToolCalls, c.soakMetrics[workerName(i)])
		if err := os.WriteFile(c.soakWorkerConfig(i), []byte(yaml), 0o644); err != nil {
			return fmt.Errorf("chaos: %w", err)
		}
	}
	return nil
}

func workerName(i int) string { return fmt.Sprintf("worker-%d", i) }

// soakWorkerConfig is worker i's configuration file in the soak mode.
func (c *cluster) soakWorkerConfig(i int) string {
	return filepath.Join(c.dir, workerName(i)+".yaml")
}

// soakGatewayArgs turn on the gateway's metrics endpoint in the soak mode.
func (c *cluster) soakGatewayArgs() []string {
	if !c.cfg.Soak {
		return nil
	}
	return []string{"--metrics", "--metrics-addr", c.soakMetrics["gateway"]}
}

// soakString is the configuration's line in the soak mode: the default
// run's batch and fault counts do not apply.
func (c config) soakString(mode, temporal string) string {
	return fmt.Sprintf("seed %d, %s: soak for %s, %d conversations at once × %d follow-ups (every %dth a one-shot), %d workers on %s; a fault every %s (%s outages), duplicate rate %.2f",
		c.Seed, mode, c.SoakDuration, c.SoakConversations, c.FollowUps, soakOneShotEvery, c.Workers, temporal, c.SoakFaultEvery, c.OutageLength, c.DuplicateRate)
}

// soakKinds is the order the soak's faults come in, over and over: every
// kind the default run injects, shuffled by the seed.
func soakKinds(in *injector) []string {
	kinds := []string{workerKill, gatewayKill, postgresRestart, postgresOutage, temporalRestart}
	in.rng.Shuffle(len(kinds), func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })
	return kinds
}

// runSoak keeps -soak-conversations conversations going until
// -soak-duration has passed (each slot starting a new conversation when
// its last one is answered), fires a fault every -soak-fault-every and
// samples every -soak-sample. It returns when the duration is over: the
// conversations still going are convWG's, to finish within -settle as in
// the default run.
func runSoak(ctx, convCtx, streamCtx context.Context, c *cluster, d *driver, in *injector,
	convWG, streamWG *sync.WaitGroup, live *sync.Map) ([]*conversation, []*fault, *soakResult) {
	// From here the sampler, the faults and the slots all log.
	c.logTo = &syncWriter{w: c.logTo}
	cfg := c.cfg
	start := time.Now()
	end := start.Add(cfg.SoakDuration)
	c.logf("chaos: soak for %s: %d conversations at once, a fault every %s, a sample every %s",
		cfg.SoakDuration, cfg.SoakConversations, cfg.SoakFaultEvery, cfg.SoakSample)

	var mu sync.Mutex
	var convs []*conversation
	stopped := false
	// Later generations start at once: the first one's ramp staggers the
	// slots already.
	again := *d
	again.cfg.Ramp = 0
	for slot := range cfg.SoakConversations {
		convWG.Add(1)
		go func() {
			defer convWG.Done()
			for gen := 0; convCtx.Err() == nil; gen++ {
				mu.Lock()
				// Under mu: once runSoak has returned the conversations,
				// none is added.
				if stopped || !time.Now().Before(end) {
					mu.Unlock()
					return
				}
				cv := &conversation{Index: len(convs), Tag: fmt.Sprintf("k%02d-%03d", slot, gen),
					rng: newRand(cfg.Seed*1_000_003 + int64(slot)*10_007 + int64(gen))}
				if gen%soakOneShotEvery == soakOneShotEvery-1 {
					cv.OneShot, cv.Tag = true, fmt.Sprintf("o%02d-%03d", slot, gen)
				}
				convs = append(convs, cv)
				mu.Unlock()
				dr := d
				if gen > 0 {
					dr = &again
				}
				sctx, stop := context.WithCancel(streamCtx)
				dr.converse(convCtx, sctx, cv, streamWG, live)
				if convCtx.Err() != nil {
					// Settling is over: the run's own wait for the streams
					// ends this one.
					context.AfterFunc(streamCtx, stop)
					return
				}
				if cv.Answered && !cv.OneShot && time.Now().Before(end) {
					if err := closeConversation(convCtx, dr, cv); err != nil {
						c.logf("chaos: soak: close %s (%s): %v", cv.Tag, cv.ExecID, err)
					}
				}
				awaitStreams(convCtx, c, []*conversation{cv}, soakStreamCatchUp)
				stop()
			}
		}()
	}

	s := newSampler(c, start)
	var wg sync.WaitGroup
	var faults []*fault
	wg.Add(2)
	go func() {
		defer wg.Done()
		faults = soakFaults(ctx, in, start, end)
	}()
	go func() {
		defer wg.Done()
		s.run(ctx, end)
	}()
	wg.Wait()
	c.logf("chaos: soak over: %d samples, %d faults", len(s.samples), len(faults))
	if cfg.Keep {
		if err := s.dump(); err != nil {
			c.logf("chaos: soak: %v", err)
		}
	}
	mu.Lock()
	stopped = true
	started := slices.Clone(convs)
	mu.Unlock()
	return started, faults, s.result(faults)
}

// closeConversation is its client ending an answered conversation
// (DELETE, as a chat closed for good): it waits until the execution reads
// CANCELLED, which check.go then expects. Without it every conversation
// the soak started would stay WAITING, held with its goroutines in the
// workers' workflow cache, and the workers' goroutines and memory would
// grow with the number started, not with the load.
func closeConversation(ctx context.Context, d *driver, cv *conversation) error {
	// A close that never takes effect is check.go's to count (stuck); the
	// slot goes on with its next conversation rather than idle out the run.
	ctx, cancel := context.WithTimeout(ctx, soakCloseWait)
	defer cancel()
	path := "/agent-executions/" + url.PathEscape(cv.ExecID)
	if _, err := d.api.do(ctx, "DELETE", path, "", nil, nil); err != nil {
		return err
	}
	cv.Closed = true
	for {
		var ex struct {
			Status string `json:"status"`
		}
		if _, err := d.api.do(ctx, "GET", path, "", nil, &ex); err != nil {
			return err
		}
		if ex.Status == "CANCELLED" {
			return nil
		}
		if err := sleepCtx(ctx, 100*time.Millisecond); err != nil {
			return fmt.Errorf("still %s: %w", ex.Status, err)
		}
	}
}

// soakFaults fires a fault at every -soak-fault-every mark before end,
// the kinds in soakKinds's order, each as the default run fires it
// (injector.run, with no pause of its own).
func soakFaults(ctx context.Context, in *injector, start, end time.Time) []*fault {
	if in.cfg.SoakFaultEvery == 0 {
		return nil
	}
	kinds := soakKinds(in)
	at := *in
	at.cfg.FaultGapMin, at.cfg.FaultGapMax = 0, 0
	var out []*fault
	for k := 1; ; k++ {
		mark := start.Add(time.Duration(k) * in.cfg.SoakFaultEvery)
		if !mark.Before(end) || sleepCtx(ctx, time.Until(mark)) != nil {
			return out
		}
		out = append(out, at.run(ctx, []string{kinds[(k-1)%len(kinds)]})...)
	}
}

// syncWriter serializes writes to w.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
