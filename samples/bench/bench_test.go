package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentree/agentree/agentsdk"
)

// TestMain lets the resume scenario re-run this test binary as a worker
// process, as it re-runs the bench binary.
func TestMain(m *testing.M) {
	if spec := os.Getenv(workerEnv); spec != "" {
		if err := runWorkerProcess(spec); err != nil {
			fmt.Fprintln(os.Stderr, "bench worker:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestEveryScenarioTiny runs every scenario at a tiny size: each figure is
// printed and Agentree completes. Timings are reported, never asserted.
func TestEveryScenarioTiny(t *testing.T) {
	cfg, err := parseConfig([]string{
		"-long-calls=5", "-long-conversation=4KB", "-long-tool-output=512B",
		"-short-calls=4", "-short-conversation=1KB", "-short-tool-output=256B", "-short-repeat=1", "-floor-calls=3",
		"-resume-small-calls=3", "-resume-small-kill=2", "-resume-large-calls=6", "-resume-large-kill=4",
		"-resume-repeat=1", "-resume-heartbeat=500ms", "-timeout=10m", "-repeat=1",
	})
	require.NoError(t, err)
	var out, log bytes.Buffer
	require.NoError(t, run(t.Context(), cfg, &out, &log), "log:\n%s", log.String())
	t.Log(out.String())

	figures := map[string]string{}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		if name, value, ok := strings.Cut(sc.Text(), "="); ok && !strings.Contains(name, " ") {
			figures[name] = value
		}
	}
	for _, name := range []string{
		"long_agentree_calls", "long_agentree_max_run_history_bytes", "long_agentree_total_history_bytes",
		"long_naive_calls", "long_naive_status", "long_naive_total_history_bytes",
		"short_agentree_call_p50_ms", "short_naive_call_p50_ms", "short_ratio_p50", "floor_activity_ms",
		"resume_small_ms", "resume_large_ms", "resume_ratio",
		"resume_naive_small_ms", "resume_naive_large_ms", "resume_naive_ratio",
		"short_local_ratio_p50", "short_tracing_ratio_p50", "actions_per_turn_agentree", "actions_per_turn_naive",
	} {
		require.Contains(t, figures, name)
		require.NotEmpty(t, figures[name], name)
	}
	require.Equal(t, "5", figures["long_agentree_calls"])
	require.Equal(t, "COMPLETED", figures["long_agentree_status"])
	require.Equal(t, "5", figures["long_naive_calls"], "the tiny naive conversation fits in history")
	require.Equal(t, "COMPLETED", figures["long_naive_status"])
	// A naive turn is at least its model and tool activities; Agentree's
	// adds its store's local activities.
	for _, name := range []string{"actions_per_turn_agentree", "actions_per_turn_naive"} {
		v, err := strconv.ParseFloat(figures[name], 64)
		require.NoError(t, err)
		require.GreaterOrEqual(t, v, 1.0, name)
	}
}

func TestPlanRidesInThePrompt(t *testing.T) {
	p := plan{ID: "long-ab12-3", Calls: 100, ToolBytes: 5 << 10}
	prompt := p.prompt(800 << 10)
	require.Len(t, prompt, 800<<10)
	got, err := readPlan([]agentsdk.Message{agentsdk.TextMessage(agentsdk.RoleUser, prompt)})
	require.NoError(t, err)
	require.Equal(t, p, got)
}

func TestSizes(t *testing.T) {
	for in, want := range map[string]int{"800KB": 800 << 10, "5kb": 5 << 10, "1MB": 1 << 20, "512B": 512, "77": 77} {
		var b byteSize
		require.NoError(t, b.Set(in), in)
		require.Equal(t, want, int(b), in)
	}
	var b byteSize
	require.Error(t, b.Set("lots"))
}
