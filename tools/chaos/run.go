package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// outcome is a finished run: what was done and what the checks found.
type outcome struct {
	cfg      config
	convs    []*conversation
	faults   []*fault
	found    *findings
	duration time.Duration
	// http500 and http503 count the gateway's answers with those statuses.
	http500, http503 int

	deploy   *deployOutcome    // with -deploy
	failover *failoverFindings // with -failover (failover.go)
	// soak is the soak's samples and verdict (soak.go); nil without -soak.
	soak *soakResult
}

// run brings the cluster up, drives the conversations while injecting the
// faults, lets them settle, checks the invariants and prints the report to
// out; progress goes to log.
func run(ctx context.Context, cfg config, out, log io.Writer) (*outcome, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	start := time.Now()
	fmt.Fprintf(log, "chaos: %s\n", cfg)
	c, err := startCluster(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	defer c.close()

	a, err := newAPI(c.gatewayAddr, c.org, c.key)
	if err != nil {
		return nil, err
	}
	d := &driver{cfg: cfg, api: a, runTag: fmt.Sprintf("s%d", cfg.Seed)}
	n := cfg.Conversations + cfg.OneShots
	if cfg.Soak {
		n = 0 // runSoak starts conversations as it goes
	}
	convs := make([]*conversation, n)
	var live sync.Map // execution ID → its messages' tag prefix, while its conversation runs
	convCtx, stopConvs := context.WithCancel(ctx)
	defer stopConvs()
	streamCtx, stopStreams := context.WithCancel(ctx)
	defer stopStreams()
	var convWG, streamWG sync.WaitGroup
	for i := range convs {
		cv := &conversation{Index: i, Tag: fmt.Sprintf("c%02d", i), rng: newRand(cfg.Seed*1000 + int64(i))}
		if i >= cfg.Conversations {
			cv.OneShot, cv.Tag = true, fmt.Sprintf("o%02d", i-cfg.Conversations)
		}
		convs[i] = cv
		convWG.Add(1)
		go func() {
			defer convWG.Done()
			d.converse(convCtx, streamCtx, cv, &streamWG, &live)
		}()
	}

	in := &injector{c: c, cfg: cfg, rng: newRand(cfg.Seed*1000 - 1), live: func() []string {
		var ids []string
		live.Range(func(k, _ any) bool { ids = append(ids, k.(string)); return true })
		return ids
	}, tags: func() map[string]string {
		tags := map[string]string{}
		live.Range(func(k, v any) bool { tags[v.(string)] = k.(string); return true })
		return tags
	}}
	var deploySteps func() []*fault
	if c.deploy != nil {
		deploySteps = startDeploy(ctx, c, in)
	}
	var faults []*fault
	var soaked *soakResult
	if cfg.Soak {
		convs, faults, soaked = runSoak(ctx, convCtx, streamCtx, c, d, in, &convWG, &streamWG, &live)
	} else {
		faults = in.run(ctx, schedule(cfg, in.rng))
	}
	if deploySteps != nil {
		faults = withDeploySteps(faults, deploySteps())
	}
	c.logf("chaos: %d faults injected; conversations get %s to finish", len(faults), cfg.Settle)

	done := make(chan struct{})
	go func() { convWG.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(cfg.Settle):
		fmt.Fprintln(log, "chaos: settle time over; unfinished conversations count as stuck")
	case <-ctx.Done():
	}
	stopConvs()
	<-done
	c.logf("chaos: conversations done; checking")
	awaitStreams(ctx, c, convs, 30*time.Second)
	stopStreams()
	streamWG.Wait()

	found, err := check(context.WithoutCancel(ctx), c, d, convs, faults)
	if err != nil {
		return nil, err
	}
	if err := c.checkResources(context.WithoutCancel(ctx), faults, found); err != nil { // resources.go
		return nil, err
	}
	fo, err := c.failoverFindings(context.WithoutCancel(ctx), found)
	if err != nil {
		return nil, err
	}
	c.logf("chaos: %d cancel probes", cfg.CancelProbes)
	if found.Cancel, err = d.probeCancels(ctx, cfg.CancelProbes); err != nil {
		return nil, err
	}
	o := &outcome{cfg: cfg, convs: convs, faults: faults, found: found, duration: time.Since(start),
		http500: a.answered(http.StatusInternalServerError), http503: a.answered(http.StatusServiceUnavailable), failover: fo, soak: soaked}
	if c.deploy != nil {
		if o.deploy, err = c.deploy.analyse(context.WithoutCancel(ctx), c, convs, faults); err != nil {
			return nil, err
		}
	}
	o.print(out)
	c.printResources(out, faults) // resources.go
	o.soak.print(out)
	if cfg.Keep {
		fmt.Fprintf(log, "chaos: logs and data kept in %s\n", c.dir)
	}
	return o, nil
}
