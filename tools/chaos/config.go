package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/agentree/agentree/internal/temporaltest"
)

// config is one run's size, faults and pacing; every field is a flag.
type config struct {
	Seed          int64
	Conversations int
	FollowUps     int
	// OneShots are one-shot executions sent a message while they write
	// their final answer.
	OneShots int
	Workers  int

	WorkerKills      int
	GatewayKills     int
	PostgresRestarts int
	Outages          int
	OutageLength     time.Duration
	TemporalRestarts int
	TemporalDown     time.Duration
	// DuplicateRate is the share of follow-ups POSTed twice with the same
	// Idempotency-Key, as a client retrying after a lost answer does.
	DuplicateRate float64

	// FaultGapMin and FaultGapMax bound the random pause before a fault;
	// GateWait is how long a fault waits for a model or tool call in flight.
	FaultGapMin, FaultGapMax, GateWait time.Duration
	RestartDelay                       time.Duration
	// Ramp spreads the conversations' starts; Think is the longest pause
	// before a follow-up. Both keep conversations going while faults land.
	Ramp, Think                       time.Duration
	ModelDelay, TokenDelay, ToolDelay time.Duration
	// Settle bounds how long, after the last fault, conversations get to
	// finish; Timeout bounds the whole run.
	Settle, Timeout time.Duration

	// ActivityToolCalls runs the workers' tool calls as activities
	// (localActivities.toolCalls: false), the mode that is not the
	// default.
	ActivityToolCalls bool
	// ActivityModelCalls runs the workers' model calls as activities
	// (localActivities.modelCalls: false), the mode that is not the
	// default.
	ActivityModelCalls bool
	// CancelProbes is how many executions are cancelled mid-stream after
	// the faults, to measure how soon a cancel takes effect.
	CancelProbes int

	// TemporalServer runs the Temporal server itself on the run's Postgres
	// cluster instead of the dev server (tserver.go).
	TemporalServer bool

	TemporalBin string
	Bin         string
	Keep        bool

	// Deploy plays a rolling deploy from DeployFrom (a commit) to this
	// tree under the load (deploy.go); DeployOldBin is DeployFrom's
	// binary, already built; DeployHold bounds how long the rolled-back
	// worker serves.
	Deploy       bool
	DeployFrom   string
	DeployOldBin string
	DeployHold   time.Duration
	// Resources (-resources, resources.go): Postgres's disk filled, its
	// connections exhausted, Postgres slowed, a model server hanging
	// mid-stream, each held for ResourceHold.
	Resources    bool
	ResourceHold time.Duration
	// SlowDelay is what the proxy adds to every packet each way while
	// Postgres is slow; PGDiskMB is the size of Postgres's filesystem.
	SlowDelay time.Duration
	PGDiskMB  int
	// ResourceFaults are the resource faults injected (-resource-faults).
	ResourceFaults []string
	// Failover (failover.go): a streaming replica of the run's Postgres,
	// promoted mid-run as the primary is killed; FailoverSync, the
	// default (-failover-async turns it off), makes the replication
	// synchronous; FailoverPartition cuts the replica off
	// the primary this long before the primary is killed.
	Failover, FailoverSync bool
	FailoverPartition      time.Duration
	// Soak (soak.go, `make soak`): SoakConversations conversations kept
	// going for SoakDuration, a fault every SoakFaultEvery, the processes
	// and the store sampled every SoakSample; the Max* are the bounds the
	// report asserts.
	Soak                   bool
	SoakDuration           time.Duration
	SoakConversations      int
	SoakFaultEvery         time.Duration
	SoakSample             time.Duration
	SoakMaxRSSGrowth       float64
	SoakMaxGoroutineGrowth float64
	SoakMaxFDGrowth        float64
	SoakMaxP99Drift        float64
	SoakMaxP50Drift        float64
	SoakMaxTableBytes      float64
}

// parseConfig reads the flags; the defaults are issue 19's.
func parseConfig(args []string) (config, error) {
	var c config
	fs := flag.NewFlagSet("chaos", flag.ContinueOnError)
	fs.Int64Var(&c.Seed, "seed", 1, "seed of every random choice (fault order, moments, think times)")
	fs.IntVar(&c.Conversations, "conversations", 20, "concurrent multi-turn conversations")
	fs.IntVar(&c.FollowUps, "follow-ups", 3, "follow-up messages per conversation, each sent when the last is answered")
	fs.IntVar(&c.OneShots, "one-shots", 5, "one-shot executions sent a message while they write their final answer")
	fs.IntVar(&c.Workers, "workers", 2, "worker processes")
	fs.IntVar(&c.WorkerKills, "worker-kills", 14, "worker SIGKILLs (enough that, with the other faults, at least 8 land alone: recovery is timed only on those)")
	fs.IntVar(&c.GatewayKills, "gateway-kills", 5, "gateway SIGKILLs")
	fs.IntVar(&c.PostgresRestarts, "postgres-restarts", 2, "Postgres restarts (immediate stop, start)")
	fs.IntVar(&c.Outages, "outages", 1, "Postgres outages of -outage-length")
	fs.DurationVar(&c.OutageLength, "outage-length", 30*time.Second, "how long each Postgres outage lasts")
	fs.IntVar(&c.TemporalRestarts, "temporal-restarts", 2, "Temporal dev-server restarts (SIGKILL, start)")
	fs.DurationVar(&c.TemporalDown, "temporal-down", 2*time.Second, "how long a killed Temporal dev server stays down")
	fs.Float64Var(&c.DuplicateRate, "duplicate-rate", 0.3, "share of follow-ups delivered twice with one Idempotency-Key")
	fs.DurationVar(&c.FaultGapMin, "fault-gap-min", 2*time.Second, "shortest pause before a fault")
	fs.DurationVar(&c.FaultGapMax, "fault-gap-max", 6*time.Second, "longest pause before a fault")
	fs.DurationVar(&c.GateWait, "gate-wait", 10*time.Second, "how long a fault waits for a model or tool call in flight")
	fs.DurationVar(&c.RestartDelay, "restart-delay", time.Second, "how long a killed worker or gateway stays down")
	fs.DurationVar(&c.Ramp, "ramp", time.Minute, "conversations start at random moments within this")
	fs.DurationVar(&c.Think, "think", 30*time.Second, "longest pause before a follow-up")
	fs.DurationVar(&c.ModelDelay, "model-delay", 800*time.Millisecond, "scripted model: time to first token")
	fs.DurationVar(&c.TokenDelay, "token-delay", 15*time.Millisecond, "scripted model: time between tokens")
	fs.DurationVar(&c.ToolDelay, "tool-delay", 400*time.Millisecond, "research tools: time per call")
	fs.DurationVar(&c.Settle, "settle", 3*time.Minute, "how long conversations get to finish after the last fault")
	fs.DurationVar(&c.Timeout, "timeout", 20*time.Minute, "the whole run's limit")
	fs.BoolVar(&c.TemporalServer, "temporal-server", os.Getenv("AGENTREE_TEMPORAL") == "server", "run the Temporal server on the run's Postgres cluster instead of the dev server (default true with AGENTREE_TEMPORAL=server, as make up)")
	fs.StringVar(&c.TemporalBin, "temporal", temporaltest.CLI(), "the Temporal CLI ($AGENTREE_TEMPORAL_BIN; default bin/temporal of this checkout)")
	fs.StringVar(&c.Bin, "bin", "", "an agentree binary to run (default: build ./cmd/agentree)")
	fs.BoolVar(&c.ActivityToolCalls, "activity-tool-calls", false, "run the workers' tool calls as activities (localActivities.toolCalls: false), not the default local activities")
	fs.BoolVar(&c.ActivityModelCalls, "activity-model-calls", false, "run the workers' model calls as activities (localActivities.modelCalls: false), not the default local activities")
	fs.IntVar(&c.CancelProbes, "cancel-probes", 10, "executions cancelled as their model call streams, after the faults (chaos_cancel_p99_s)")
	fs.BoolVar(&c.Keep, "keep", false, "keep the run directory (logs, Postgres, Temporal database)")
	// deploy (deploy.go)
	fs.BoolVar(&c.Deploy, "deploy", false, "start on the previous release (-deploy-from), replace the workers and the gateway one at a time with this tree's build, roll one worker back, finish on this tree's build")
	fs.StringVar(&c.DeployFrom, "deploy-from", defaultDeployFrom, "the commit -deploy starts from (the previous release; built from git)")
	fs.StringVar(&c.DeployOldBin, "deploy-old-bin", "", "-deploy-from's agentree binary, already built (default: build it from git)")
	fs.DurationVar(&c.DeployHold, "deploy-hold", 30*time.Second, "longest the rolled-back worker serves, waiting to take a task of a run the new build advanced")
	// Resources (resources.go).
	fs.BoolVar(&c.Resources, "resources", false, "add the resource faults: Postgres's disk full, its connections exhausted, Postgres slow, a model server hanging mid-stream (README: -resources)")
	fs.DurationVar(&c.ResourceHold, "resource-hold", 20*time.Second, "how long each resource fault is held before the resource comes back")
	fs.DurationVar(&c.SlowDelay, "slow-delay", 500*time.Millisecond, "what a slow Postgres adds to every packet each way (a query's round trip takes twice this more)")
	fs.IntVar(&c.PGDiskMB, "pg-disk-mb", 512, "size in MiB of the small filesystem (tmpfs) Postgres's data directory lives on with -resources")
	resourceList := fs.String("resource-faults", strings.Join(resourceFaults, ","), "the resource faults -resources injects, each once")
	// failover (failover.go)
	fs.BoolVar(&c.Failover, "failover", false, "run a synchronous streaming replica and, mid-run, kill the primary and promote the replica (clients reach both by a two-host DSN)")
	async := fs.Bool("failover-async", false, "with -failover: asynchronous replication, whose failover loses the commits the replica had not received (README: Failover); implies -failover")
	fs.DurationVar(&c.FailoverPartition, "failover-partition", 0, "cut the replication link this long before the primary is killed (a partition, then the primary's death: with async replication the commits in between are lost); implies -failover")
	// soak (soak.go)
	fs.BoolVar(&c.Soak, "soak", false, "soak: steady multi-turn load with a fault every -soak-fault-every for -soak-duration, sampled every -soak-sample (make soak)")
	fs.DurationVar(&c.SoakDuration, "soak-duration", 10*time.Minute, "soak: how long conversations keep being started and faults injected")
	fs.IntVar(&c.SoakConversations, "soak-conversations", 8, "soak: conversations running at once (each replaced by a new one when it ends; -conversations and -one-shots do not apply)")
	fs.DurationVar(&c.SoakFaultEvery, "soak-fault-every", 90*time.Second, "soak: the interval between faults (the five kinds in a seeded order, over and over; 0: none)")
	fs.DurationVar(&c.SoakSample, "soak-sample", time.Minute, "soak: the sampling interval")
	fs.Float64Var(&c.SoakMaxRSSGrowth, "soak-max-rss-growth", 10, "soak: most RSS growth, percent (last third's mean over the second third's, per process run)")
	fs.Float64Var(&c.SoakMaxGoroutineGrowth, "soak-max-goroutine-growth", 10, "soak: most goroutine growth, percent")
	fs.Float64Var(&c.SoakMaxFDGrowth, "soak-max-fd-growth", 10, "soak: most open-FD growth, percent")
	fs.Float64Var(&c.SoakMaxP99Drift, "soak-max-p99-drift", 20, "soak: most p99 per-call overhead drift, percent")
	fs.Float64Var(&c.SoakMaxP50Drift, "soak-max-p50-drift", 50, "soak: most median per-call overhead drift, percent")
	fs.Float64Var(&c.SoakMaxTableBytes, "soak-max-table-bytes-per-call", 64<<10, "soak: most growth of the agentree tables together, bytes per model call")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	var err error
	if c.ResourceFaults, err = parseResourceFaults(*resourceList); err != nil {
		return c, err
	}
	c.Failover = c.Failover || *async || c.FailoverPartition > 0
	c.FailoverSync = c.Failover && !*async
	if err := c.checkSoak(); err != nil {
		return c, err
	}
	switch {
	case c.Conversations < 1 || c.FollowUps < 0 || c.OneShots < 0 || c.Workers < 1 || c.CancelProbes < 0:
		return c, errors.New("chaos: -conversations and -workers must be at least 1, -follow-ups, -one-shots and -cancel-probes at least 0")
	case c.FaultGapMax < c.FaultGapMin:
		return c, errors.New("chaos: -fault-gap-max is shorter than -fault-gap-min")
	case c.DuplicateRate < 0 || c.DuplicateRate > 1:
		return c, errors.New("chaos: -duplicate-rate is a share, from 0 to 1")
	}
	return c, nil
}

func (c config) String() string {
	mode := "model calls as local activities (the default)"
	if c.ActivityModelCalls {
		mode = "model calls as activities"
	}
	if c.ActivityToolCalls {
		mode += ", tool calls as activities"
	} else {
		mode += ", tool calls as local activities (the default)"
	}
	temporal := "the Temporal dev server (SQLite)"
	if c.TemporalServer {
		temporal = "the Temporal server (PostgreSQL)"
	}
	if c.Soak {
		return c.soakString(mode, temporal)
	}
	return fmt.Sprintf("seed %d, %s: %d conversations × %d follow-ups, %d one-shots, %d workers on %s; faults: %d worker kills, %d gateway kills, %d Postgres restarts, %d Postgres outages of %s, %d Temporal restarts, duplicate rate %.2f",
		c.Seed, mode, c.Conversations, c.FollowUps, c.OneShots, c.Workers, temporal, c.WorkerKills, c.GatewayKills, c.PostgresRestarts, c.Outages, c.OutageLength, c.TemporalRestarts, c.DuplicateRate)
}
