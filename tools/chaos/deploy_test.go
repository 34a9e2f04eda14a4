package main

import (
	"bytes"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// deployConfig is the deploy inside `make test`: the small load with one
// worker kill beside the deploy (the other faults are TestChaosSmall's),
// conversations long enough (7 messages each) to run through every step,
// no cancel probes.
var deployConfig = []string{
	"-seed=42", "-conversations=4", "-follow-ups=6", "-one-shots=1", "-workers=2",
	"-worker-kills=1", "-gateway-kills=0", "-postgres-restarts=0", "-outages=0", "-temporal-restarts=0",
	"-duplicate-rate=0.3", "-fault-gap-min=1s", "-fault-gap-max=2s", "-gate-wait=5s",
	"-ramp=2s", "-think=2s", "-model-delay=300ms", "-token-delay=5ms", "-tool-delay=200ms",
	"-settle=60s", "-timeout=8m", "-cancel-probes=0", "-deploy", "-deploy-hold=20s",
}

// deployRun is the one deploy both tests read: building the previous
// release and playing the deploy cost minutes, so the test binary does it
// once.
var deployRun struct {
	once    sync.Once
	o       *outcome
	figures map[string]string
	out     string
	err     error
}

func playDeploy(t *testing.T) (*outcome, map[string]string) {
	t.Helper()
	deployRun.once.Do(func() {
		cfg, err := parseConfig(deployConfig)
		if err != nil {
			deployRun.err = err
			return
		}
		var out, log bytes.Buffer
		// The run ends inside the first test that asks: its context serves.
		deployRun.o, deployRun.err = run(t.Context(), cfg, &out, &log)
		deployRun.out = out.String()
		if deployRun.err != nil {
			deployRun.out += "\nlog:\n" + log.String()
		}
		deployRun.figures = figuresOf(&out)
	})
	t.Log("\n" + deployRun.out)
	require.NoError(t, deployRun.err)
	return deployRun.o, deployRun.figures
}

func figureSeconds(t *testing.T, figures map[string]string, name string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(figures[name], 64)
	require.NoError(t, err, "%s=%q", name, figures[name])
	return v
}

// TestRollingDeployLosesNothing: every worker, then the gateway, replaced
// one at a time by this tree's build while conversations run on the
// previous release's, loses, duplicates, fails and strands nothing (issue
// 19's invariants), and no workflow task keeps failing for longer than
// the deploy lasts.
func TestRollingDeployLosesNothing(t *testing.T) {
	o, figures := playDeploy(t)
	kinds := map[string]int{}
	for _, f := range o.faults {
		require.Empty(t, f.Err, "%s: %s", f.Kind, f.Detail)
		kinds[f.Kind]++
	}
	require.Equal(t, 2, kinds[deployWorker], "each worker replaced once")
	require.Equal(t, 1, kinds[deployGateway], "the gateway replaced")
	require.Equal(t, defaultDeployFrom, figures["chaos_deploy_from"])
	require.Equal(t, "rolling", figures["chaos_deploy_mode"])
	for _, name := range []string{
		"chaos_lost", "chaos_duplicated", "chaos_forked", "chaos_leaf_mismatch", "chaos_rerun",
		"chaos_inbox_pending", "chaos_undelivered", "chaos_undecodable", "chaos_failed_by_outage", "chaos_stuck",
		"chaos_worker_unrecovered", "chaos_http_500", "chaos_deploy_step_errors",
	} {
		require.Equal(t, "0", figures[name], "%s; examples:\n%s", name, strings.Join(o.found.Examples, "\n"))
	}
	window := figureSeconds(t, figures, "chaos_deploy_window_s")
	require.Positive(t, window)
	require.LessOrEqual(t, figureSeconds(t, figures, "chaos_deploy_wft_failing_max_s"), window,
		"no workflow task fails for longer than the deploy window")
	require.True(t, o.deploy.ok())
}

// TestRollbackFinishesNewerRuns: a worker rolled back to the previous
// release while runs the new build advanced are open takes tasks of those
// runs, and they still finish (answered, or completed) once it is replaced
// by the new build again, with nothing lost.
func TestRollbackFinishesNewerRuns(t *testing.T) {
	o, figures := playDeploy(t)
	kinds := map[string]int{}
	for _, f := range o.faults {
		kinds[f.Kind]++
	}
	require.Equal(t, 1, kinds[rollbackWorker], "one worker rolled back")
	require.Equal(t, 1, kinds[redeployWorker], "and replaced by the new build again")
	require.NotEqual(t, "0", figures["chaos_deploy_newer_runs"], "runs the new build advanced were open at the rollback")
	require.NotEqual(t, "0", figures["chaos_deploy_rollback_runs"], "the rolled-back worker took a task of one")
	require.Equal(t, "0", figures["chaos_deploy_rollback_unfinished"], "every run it touched finished")
	for _, name := range []string{"chaos_lost", "chaos_stuck", "chaos_failed_by_outage"} {
		require.Equal(t, "0", figures[name], "%s; examples:\n%s", name, strings.Join(o.found.Examples, "\n"))
	}
}
