package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/agentree/agentree/internal/gitbuild"
)

// The rolling deploy (-deploy; issue 42). The run starts every worker and
// the gateway on the previous release's build, which migrates the fresh
// schema with its own migrations. While the conversations run, it replaces
// the workers one at a time with this tree's build, then the gateway,
// rolls one worker back to the previous release, and replaces it with this
// tree's build again. Each replacement is what a process manager does: a
// SIGTERM (the process stops gracefully), then the new binary on the same
// port and queue. The faults of the default load keep landing meanwhile.

// defaultDeployFrom is the previous release a deploy starts from. The
// project has no tags, so a release is a commit of main, named by its hash
// (a fresh clone, full history, has it; a tag or a branch's merge base
// would differ between clones). It is the last release landed: 590303f.
// Its predecessor here, f4efeeb, ran a tool call again when the call's
// local activity ran twice at once and the other run ended it between
// this run's look and its start (fixed at 13c6947): a rollback to it
// could do that in the middle of a deploy, and the deploy's
// "no completed call run again" failed on the old build's bug. f4efeeb
// was the first release whose workers start on a schema a newer build
// migrated further; `-deploy-from f4efeeb` still plays that deploy across
// migration 0030. Move it here, and only here, when a release goes out,
// so `make chaos CHAOS_FLAGS=-deploy` plays the deploy operators make
// next; -deploy-from plays another.
const defaultDeployFrom = "590303f"

// nonAdditiveMigrations are the migrations README "Upgrades" names as not
// additive: an older build cannot run on their schema, so a deploy across
// one stops every older worker and gateway, runs `agentree migrate`, then
// starts the new build, as README tells operators to, and cannot roll back.
var nonAdditiveMigrations = []string{"0013_json_documents.sql", "0014_first_prompt_once.sql", "0015_model_call_in_answer.sql"}

// The deploy's steps, in the fault table.
const (
	deployWorker   = "deploy-worker"
	deployGateway  = "deploy-gateway"
	deployStopAll  = "deploy-stop-all"
	rollbackWorker = "rollback-worker"
	redeployWorker = "redeploy-worker"
)

// deployment is one run's deploy: the two builds, what it did and when.
type deployment struct {
	from           string
	oldBin, newBin string
	// migrations are this tree's migrations the previous release lacks;
	// stopFirst, that one of them is not additive.
	migrations []string
	stopFirst  bool

	mu       sync.Mutex
	launches []launch // every start of a worker or the gateway
	// window is from the first process stopped to the last one serving
	// again; rollback, from the rolled-back worker's start to its
	// replacement's.
	windowStart, windowEnd     time.Time
	rollbackStart, rollbackEnd time.Time
	steps                      []*fault
}

// launch is a process start: which build its pid runs.
type launch struct {
	pid  int
	path string
	at   time.Time
}

// prepareDeploy builds the previous release (or takes -deploy-old-bin),
// lists the migrations it lacks, and makes the cluster start on it.
func (c *cluster) prepareDeploy(ctx context.Context) error {
	d := &deployment{from: c.cfg.DeployFrom, oldBin: c.cfg.DeployOldBin, newBin: c.bin}
	// The deploy logs its steps beside the faults' injector.
	c.logTo = &syncWriter{w: c.logTo}
	root, err := moduleRoot(ctx)
	if err != nil {
		return err
	}
	if root, err = gitbuild.Root(ctx, root); err != nil {
		return err
	}
	if d.oldBin == "" {
		start := time.Now()
		if d.oldBin, err = gitbuild.Agentree(ctx, root, d.from, c.dir); err != nil {
			return err
		}
		c.logf("chaos: built the previous release %s in %.1f s", d.from, time.Since(start).Seconds())
	}
	old, err := gitbuild.Files(ctx, root, d.from, "migrations")
	if err != nil {
		return err
	}
	current, err := filepath.Glob(filepath.Join(root, "migrations", "*.sql"))
	if err != nil {
		return fmt.Errorf("chaos: %w", err)
	}
	for _, m := range current {
		if name := filepath.Base(m); !slices.Contains(old, name) {
			d.migrations = append(d.migrations, name)
			d.stopFirst = d.stopFirst || slices.Contains(nonAdditiveMigrations, name)
		}
	}
	c.deploy, c.bin = d, d.oldBin
	return nil
}

// migrateOld gives the fresh schema the previous release's migrations, by
// its own `agentree migrate`, as its operators did.
func (d *deployment) migrateOld(ctx context.Context, c *cluster) error {
	return d.migrate(ctx, c, d.oldBin)
}

// makeKey makes the run's organization and API key with the previous
// release's `agentree keys create`: this tree's store may not write to
// its schema.
func (d *deployment) makeKey(ctx context.Context, c *cluster) (org, key string, err error) {
	cmd := exec.CommandContext(ctx, d.oldBin, "keys", "create", "--org", "chaos", "--name", "chaos")
	cmd.Env = append(os.Environ(), c.agentreeEnv()...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", "", fmt.Errorf("chaos: %s keys create: %w\n%s", d.oldBin, err, stderr.Bytes())
	}
	return "chaos", strings.TrimSpace(string(out)), nil
}

func (d *deployment) migrate(ctx context.Context, c *cluster, bin string) error {
	cmd := exec.CommandContext(ctx, bin, "migrate")
	cmd.Env = append(os.Environ(), c.agentreeEnv()...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("chaos: %s migrate: %w\n%s", bin, err, out)
	}
	return nil
}

// watch records every start of p from now on (and its running process).
func (d *deployment) watch(p *proc) {
	record := func(pid int, path string) {
		d.mu.Lock()
		defer d.mu.Unlock()
		d.launches = append(d.launches, launch{pid: pid, path: path, at: time.Now()})
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.launched = record
	if p.cmd != nil && p.cmd.Process != nil {
		record(p.cmd.Process.Pid, p.path)
	}
}

// build names the build a worker identity ("pid@host@…") ran: "old",
// "new" or "" when the pid is not one of the run's.
func (d *deployment) build(identity string) string {
	pid, err := strconv.Atoi(strings.SplitN(identity, "@", 2)[0])
	if err != nil {
		return ""
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for i := len(d.launches) - 1; i >= 0; i-- {
		if l := d.launches[i]; l.pid == pid {
			if l.path == d.oldBin {
				return "old"
			}
			return "new"
		}
	}
	return ""
}

// startDeploy plays the deploy beside the faults; wait returns its steps.
func startDeploy(ctx context.Context, c *cluster, in *injector) (wait func() []*fault) {
	d := c.deploy
	for _, p := range append(slices.Clone(c.workers), c.gateway) {
		d.watch(p)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.run(ctx, c, in, newRand(c.cfg.Seed*1000-2))
	}()
	return func() []*fault {
		<-done
		d.mu.Lock()
		defer d.mu.Unlock()
		return d.steps
	}
}

func (d *deployment) run(ctx context.Context, c *cluster, in *injector, rng *rand.Rand) {
	gap := func() bool {
		g := c.cfg.FaultGapMin + time.Duration(rng.Int63n(int64(c.cfg.FaultGapMax-c.cfg.FaultGapMin)+1))
		return sleepCtx(ctx, g) == nil
	}
	// The deploy starts once conversations are under way on the old build.
	if !gap() {
		return
	}
	in.awaitInFlight(ctx)
	d.mu.Lock()
	d.windowStart = time.Now()
	d.mu.Unlock()
	c.logf("chaos: deploy from %s starts; this tree adds migrations %v", d.from, d.migrations)
	if d.stopFirst {
		// README "Upgrades": stop every older worker and gateway, run
		// agentree migrate, then start the new build. No rollback: the
		// older build cannot read the new schema.
		f := &fault{Kind: deployStopAll, At: time.Now()}
		for _, p := range append(slices.Clone(c.workers), c.gateway) {
			p.stop(deployGrace)
		}
		err := d.migrate(ctx, c, d.newBin)
		for _, p := range append(slices.Clone(c.workers), c.gateway) {
			if serr := d.restartAs(p, d.newBin); err == nil {
				err = serr
			}
		}
		if err == nil {
			err = c.waitGateway(ctx, 2*time.Minute)
		}
		d.finish(c, f, fmt.Sprintf("stopped everything, migrated %d (not additive), started the new build", len(d.migrations)), err)
		d.mu.Lock()
		d.windowEnd = time.Now()
		d.mu.Unlock()
		return
	}
	if len(d.migrations) > 0 {
		// Additive: applied while the old build runs, by `agentree
		// migrate` before the first new worker (which would apply them on
		// start as well).
		if err := d.migrate(ctx, c, d.newBin); err != nil {
			d.finish(c, &fault{Kind: deployWorker, At: time.Now()}, "migrate", err)
			return
		}
	}
	for _, w := range c.workers {
		d.replace(ctx, c, in, w, d.newBin, deployWorker)
		if !gap() {
			return
		}
	}
	d.replace(ctx, c, in, c.gateway, d.newBin, deployGateway)
	if !gap() {
		return
	}
	back := c.workers[0]
	d.mu.Lock()
	d.rollbackStart = time.Now()
	d.mu.Unlock()
	if d.replace(ctx, c, in, back, d.oldBin, rollbackWorker) {
		d.holdRollback(ctx, c, in)
	}
	d.mu.Lock()
	d.rollbackEnd = time.Now()
	d.mu.Unlock()
	d.replace(ctx, c, in, back, d.newBin, redeployWorker)
	d.mu.Lock()
	d.windowEnd = time.Now()
	d.mu.Unlock()
}

// deployGrace is how long a stopped process gets to exit before SIGKILL.
const deployGrace = 30 * time.Second

// replace stops p gracefully and starts bin in its place, then waits until
// it serves: a worker polls the queue, the gateway answers /healthz.
// It reports whether p serves.
func (d *deployment) replace(ctx context.Context, c *cluster, in *injector, p *proc, bin, kind string) bool {
	f := &fault{Kind: kind, At: time.Now()}
	// Executions with a call in flight: their recovery is timed, and a
	// worker kill's overlapping one is set aside.
	for _, cl := range in.started(ctx) {
		f.InFlight = append(f.InFlight, cl.exec)
	}
	f.Gated = len(f.InFlight) > 0
	before := p.pid()
	p.stop(deployGrace)
	err := d.restartAs(p, bin)
	if err == nil {
		if p == c.gateway {
			err = c.waitGateway(ctx, 2*time.Minute)
		} else {
			err = c.waitPolling(ctx, p, 2*time.Minute)
		}
	}
	build := "new"
	if bin == d.oldBin {
		build = "old"
	}
	d.finish(c, f, fmt.Sprintf("%s pid %d → %s build pid %d, serving after %.1fs", p.name, before, build, p.pid(), time.Since(f.At).Seconds()), err)
	return err == nil
}

// restartAs starts the stopped p again on bin, supervised as before.
func (d *deployment) restartAs(p *proc, bin string) error {
	p.mu.Lock()
	p.stopped, p.path = false, bin
	p.mu.Unlock()
	return p.start()
}

func (d *deployment) finish(c *cluster, f *fault, detail string, err error) {
	f.Detail = detail
	if err != nil {
		f.Err = err.Error()
	}
	c.logf("chaos: %s at %s %s %s", f.Kind, f.At.Format("15:04:05.000"), f.Detail, f.Err)
	d.mu.Lock()
	d.steps = append(d.steps, f)
	d.mu.Unlock()
}

// waitPolling waits until p's process polls the cluster's workflow queue.
// A process that keeps exiting is reported with its log's last line (an
// old build refusing the schema, say) after crashLoop restarts.
func (c *cluster) waitPolling(ctx context.Context, p *proc, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	starts := p.startCount()
	for {
		if n := p.startCount() - starts; n >= crashLoop {
			return fmt.Errorf("%s started %d times without polling; its log ends: %s", p.name, n+1, lastLogLine(p.logPath))
		}
		if pid := p.pid(); pid != 0 {
			dctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			q, err := c.tc.DescribeTaskQueue(dctx, c.queue, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
			cancel()
			if err == nil {
				for _, pl := range q.GetPollers() {
					if strings.HasPrefix(pl.GetIdentity(), strconv.Itoa(pid)+"@") {
						return nil
					}
				}
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not poll %s within %s (log %s)", p.name, c.queue, limit, p.logPath)
		}
		if err := sleepCtx(ctx, 200*time.Millisecond); err != nil {
			return err
		}
	}
}

// crashLoop is how many restarts in a row make a replacement fail.
const crashLoop = 3

func (p *proc) startCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.starts
}

// lastLogLine is the last line of a process's log the supervisor did not
// write.
func lastLogLine(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" && !strings.HasPrefix(l, "--- chaos:") {
			return l
		}
	}
	return "(empty)"
}

// holdRollback keeps the rolled-back worker serving until it has taken a
// workflow task of a run the new build recorded (what the rollback is
// about), or -deploy-hold passes.
func (d *deployment) holdRollback(ctx context.Context, c *cluster, in *injector) {
	deadline := time.Now().Add(c.cfg.DeployHold)
	for time.Now().Before(deadline) {
		for _, id := range in.live() {
			if n, _ := d.rollbackTook(ctx, c, id); n > 0 {
				c.logf("chaos: the rolled-back worker took a workflow task of %s, recorded by the new build", id)
				return
			}
		}
		if sleepCtx(ctx, time.Second) != nil {
			return
		}
	}
	c.logf("chaos: the rolled-back worker took no task of a run the new build recorded within %s", c.cfg.DeployHold)
}
